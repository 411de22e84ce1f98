"""The offline demo brain in the lifecycle's turns, through real litellm: the silent flush turn
that saves durable facts, and the summariser that compaction checks."""

from __future__ import annotations

from typing import Any

from shell import prompts
from tests.core.demo_helpers import ask, called, flush_messages, result, tool, user

# --- the flush turn ---------------------------------------------------------------------------


async def test_a_flush_appends_durable_user_facts_not_already_in_memory(litellm: Any) -> None:
    messages = flush_messages(
        user("Hi, how are you?"),
        {"role": "assistant", "content": "Fine, thanks."},
        user("We decided to ship PROJ-1234 on 2026-03-06. I prefer short standups."),
        user("Remember that the staging host is db.internal:5432"),
        called("a0", "memory_append", {"text": "- the staging host is db.internal:5432"}),
        result(
            "a0",
            {
                "path": "memory/2026-03-03.md",
                "appended": 1,
                "skippedDuplicates": 0,
                "commit": "abcdef1234",
            },
        ),
        {"role": "assistant", "content": "Noted."},
    )

    answer = await ask(litellm, messages, [tool("memory_append")])

    assert answer.calls == [
        (
            "memory_append",
            {"text": "- We decided to ship PROJ-1234 on 2026-03-06\n- I prefer short standups"},
        )
    ]

    after = [
        *messages,
        called("f1", "memory_append", answer.calls[0][1]),
        result(
            "f1",
            {
                "path": "memory/2026-03-03.md",
                "appended": 2,
                "skippedDuplicates": 0,
                "commit": "fedcba9876",
            },
        ),
    ]
    done = await ask(litellm, after, [tool("memory_append")])

    assert done.text == prompts.NO_REPLY
    assert done.calls == []


async def test_a_flush_with_nothing_durable_replies_no_reply(litellm: Any) -> None:
    messages = flush_messages(
        user("hello there"),
        {"role": "assistant", "content": "Hi! I'm Cairn's offline demo brain."},
        user("How are you today?"),
    )

    answer = await ask(litellm, messages, [tool("memory_append")])

    assert answer.text == prompts.NO_REPLY
    assert answer.calls == []


async def test_a_flush_skips_facts_already_visible_in_memory_reads(litellm: Any) -> None:
    messages = flush_messages(
        user("Our release codename is Bluebird."),
        called("g1", "memory_get", {"path": "MEMORY.md"}),
        result("g1", {"path": "MEMORY.md", "text": "# Memory\n- Our release codename is Bluebird"}),
    )

    answer = await ask(litellm, messages, [tool("memory_append")])

    assert answer.text == prompts.NO_REPLY


# --- the summariser ---------------------------------------------------------------------------

TRANSCRIPT = """\
User: The build fails with E4012 on host ci-7.internal:8443 since commit 9f3c2ab1.
Assistant: I see. We'll roll back to v2.4.1 for now.
User: We decided the deploy window is 14:00 on 2026-03-06. Never deploy on Fridays.
User: TODO: we need to update docs/runbook.md and ticket PROJ-1234.
Assistant: Noted, see https://wiki.example.com/deploys for the checklist.
User: Can you draft the rollback note for PROJ-1234 before the 14:00 window?"""


def heading_positions(text: str) -> list[int]:
    return [text.index(heading) for heading in prompts.SUMMARY_HEADINGS]


async def summarise(litellm: Any, request: str, *extra: dict[str, Any]) -> str:
    messages = [
        {"role": "system", "content": prompts.summary_system()},
        user(request),
        *extra,
    ]
    answer = await ask(litellm, messages, None)
    assert answer.calls == []
    return answer.text


async def test_the_summary_has_the_five_headings_in_order_and_keeps_identifiers(
    litellm: Any,
) -> None:
    summary = await summarise(litellm, prompts.summary_prompt(TRANSCRIPT, None, None))

    positions = heading_positions(summary)
    assert positions == sorted(positions)
    for identifier in (
        "PROJ-1234",
        "E4012",
        "14:00",
        "2026-03-06",
        "9f3c2ab1",
        "ci-7.internal:8443",
        "docs/runbook.md",
        "v2.4.1",
        "https://wiki.example.com/deploys",
    ):
        assert identifier in summary.split(prompts.SUMMARY_HEADINGS[4])[1], identifier
    asks = summary.split(prompts.SUMMARY_HEADINGS[3])[1].split(prompts.SUMMARY_HEADINGS[4])[0]
    assert "Can you draft the rollback note for PROJ-1234 before the 14:00 window?" in asks
    decisions = summary.split(prompts.SUMMARY_HEADINGS[0])[1].split(prompts.SUMMARY_HEADINGS[1])[0]
    assert "deploy window is 14:00" in decisions
    rules = summary.split(prompts.SUMMARY_HEADINGS[2])[1].split(prompts.SUMMARY_HEADINGS[3])[0]
    assert "Never deploy on Fridays" in rules
    todos = summary.split(prompts.SUMMARY_HEADINGS[1])[1].split(prompts.SUMMARY_HEADINGS[2])[0]
    assert "docs/runbook.md" in todos


async def test_the_summary_merges_the_previous_one_and_marks_empty_sections(
    litellm: Any,
) -> None:
    previous = "\n".join(
        [
            "## Decisions",
            "- Use Postgres 16 for the ledger",
            "## Open TODOs",
            "- none",
            "## Constraints/Rules",
            "- none",
            "## Pending user asks",
            "- none",
            "## Exact identifiers",
            "- LEDGER-77, 3f9a0c1d",
        ]
    )
    summary = await summarise(
        litellm, prompts.summary_prompt("User: thanks, that is all", previous, None)
    )

    assert "- Use Postgres 16 for the ledger" in summary
    assert "LEDGER-77" in summary and "3f9a0c1d" in summary
    todos = summary.split(prompts.SUMMARY_HEADINGS[1])[1].split(prompts.SUMMARY_HEADINGS[2])[0]
    assert todos.strip() == "- none"
    assert "thanks, that is all" in summary


async def test_the_summary_takes_only_decisions_from_the_assistant(litellm: Any) -> None:
    transcript = (
        "User: hello\n"
        'Assistant: Try "remember that our deploy window is Friday 14:00". You should rest.\n'
        "Assistant: We agreed to pin litellm at 1.106.2.\n"
        "User: ok"
    )

    summary = await summarise(litellm, prompts.summary_prompt(transcript, None, None))

    sections = summary.split("\n\n")
    assert sections[0] == "## Decisions\n- We agreed to pin litellm at 1.106.2."
    assert sections[1] == "## Open TODOs\n- none"
    assert "1.106.2" in sections[4]


async def test_a_quality_check_retry_gets_the_same_kind_of_summary(litellm: Any) -> None:
    request = prompts.summary_prompt(TRANSCRIPT, None, None)
    first = await summarise(litellm, request)

    retried = await summarise(
        litellm,
        request,
        {"role": "assistant", "content": "## Decisions\n- something"},
        user(prompts.summary_retry_note(["missing identifier E4012"])),
    )

    assert retried == first


async def test_the_summary_passes_compactions_quality_check(litellm: Any) -> None:
    from shell.lifecycle.summary_check import quality_problems
    from shell.lifecycle.transcript import render_transcript

    ask_text = "Please draft the incident note for INC-2291 and link docs/incidents/2026-03.md"
    body = [
        user("Deploy of 4f2a9c1e at 2026-03-03 16:05 failed with ENOENT on 10.0.4.17:6379."),
        called("s1", "memory_search", {"query": "ENOENT redis"}),
        result(
            "s1",
            {
                "hits": [
                    {
                        "path": "memory/2026-03-01.md",
                        "startLine": 2,
                        "endLine": 2,
                        "snippet": "- redis at cache-1.internal:6379, see MEMORY.md's notes",
                        "citation": "memory/2026-03-01.md#L2-L2",
                    }
                ],
                "mode": "hybrid",
            },
        ),
        {"role": "assistant", "content": "Trace id 0f8fad5b-d9cb-469f-a165-70867728950e."},
        user(ask_text),
    ]
    request = prompts.summary_prompt(render_transcript(body), None, None)

    summary = await summarise(litellm, request)

    assert quality_problems(summary, body, ask_text) == []
    assert "0f8fad5b-d9cb-469f-a165-70867728950e" in summary
    assert "2026-03-03 16:05" in summary
