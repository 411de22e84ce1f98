"""Receipts say only what is true: the summary by rule on a real demo conversation lists as
pending only the asks still open, never small talk; a preference is no rule; identifiers come
from the conversation, not from the assistant's canned words; one blank line between sections.
The flush gate names its cycle as the compaction receipt counts it."""

from __future__ import annotations

from shell import prompts
from shell.config import Settings
from shell.lifecycle.compaction import _latest_ask
from shell.lifecycle.gate import GateInputs, cycle_label, evaluate_flush_gate
from shell.lifecycle.rule_summary import summarise
from shell.lifecycle.transcript import render_transcript
from shell.session.record import FlushCycle
from tests.core.agent_helpers import collect, started

DECISIONS, TODOS, RULES, ASKS, IDS = prompts.SUMMARY_HEADINGS


def section(summary: str, heading: str) -> list[str]:
    after = summary.split(heading + "\n", 1)[1]
    return [line[2:] for line in after.split("\n\n", 1)[0].splitlines()]


async def test_small_talk_and_answered_asks_are_not_pending(demo_settings: Settings) -> None:
    agent = await started(demo_settings)
    for said in ("hi there", "how are you today?", "tell me a joke", "what is the capital?"):
        await collect(agent.submit(said))
    messages = [*agent.conversation.messages, {"role": "user", "content": "Can you draft OPS-9?"}]
    await agent.aclose()

    summary = summarise(render_transcript(messages))

    assert section(summary, ASKS) == ["Latest user message: Can you draft OPS-9?"]
    assert _latest_ask(messages) == "Can you draft OPS-9?"
    assert _latest_ask(messages[:-1]) is None  # answered: the check asks nothing of it


def test_an_ask_answered_with_a_promise_stays_open() -> None:
    transcript = (
        "User: Can you schedule the rollback for Friday?\n\nAssistant: I will.\n\n"
        "User: tell me a joke\n\nAssistant: Why did the commit blush? It saw the diff."
    )

    assert section(summarise(transcript), ASKS) == ["Can you schedule the rollback for Friday?"]


def test_a_preference_is_not_a_rule_an_imperative_is() -> None:
    transcript = (
        "User: Bob prefers tea with milk.\n\nAssistant: Noted.\n\n"
        "User: Never deploy on Fridays. Tests should pass before a merge."
    )

    rules = section(summarise(transcript), RULES)

    assert rules == ["Never deploy on Fridays.", "Tests should pass before a merge."]


def test_identifiers_come_from_the_conversation_not_canned_text() -> None:
    transcript = (
        "User: hi there\n\n"
        'Assistant: Hi! Try "remember that our deploy window is Friday 14:00".\n\n'
        "User: ticket OPS-4471 blocks the release\n\n"
        'Assistant called memory_search({"query": "OPS-4471"})\n\n'
        "Tool memory_search → memory/2026-03-01.md#L3: rollback at 16:30\n\n"
        "Assistant: The rollback ran at 16:30 (memory/2026-03-01.md#L3)."
    )

    ids = section(summarise(transcript), IDS)

    assert "14:00" not in " ".join(ids)
    assert {"OPS-4471", "16:30"} <= set(", ".join(ids).split(", "))


def test_sections_are_one_blank_line_apart() -> None:
    summary = summarise("User: Never deploy on Fridays.\n\nUser: when is the retro?")

    assert "\n\n\n" not in summary
    for heading in prompts.SUMMARY_HEADINGS[1:]:
        assert f"\n\n{heading}\n- " in summary


def test_the_gate_names_the_cycle_by_the_compaction_it_precedes() -> None:
    from shell.context.budget import ContextBudget

    budget = ContextBudget(4096)
    cycle = FlushCycle(compactions=0)
    inputs = GateInputs(
        cycle=cycle,
        projected_tokens=budget.flush_threshold,
        transcript_bytes=0,
        force_flush_transcript_bytes=0,
        enabled=True,
        workspace_writable=True,
        max_failures=3,
    )

    decision = evaluate_flush_gate(inputs, budget)

    assert cycle_label(0) == "before compaction #1"  # the first receipt says "compaction #1"
    assert decision.summary.endswith("not yet flushed before compaction #1")
    assert "cycle 0" not in decision.summary
