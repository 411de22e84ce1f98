"""A sweep over a real workspace: the DREAMS.md block and the proposals it gives, the update for
a contradicted MEMORY.md line, distilling by a model (the fake server) and its fallback to rule,
and a sweep that cannot run, is switched off, or is killed midway."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from shell.config import Settings
from shell.events import (
    DeepSleepFinished,
    DreamProposed,
    DreamSweepFinished,
    DreamSweepSkipped,
    LightSleepFinished,
    MemoryWritten,
    RemSleepFinished,
    SearchPerformed,
)
from shell.fsio import exclusive_lock
from shell.memory.hit_log import dreams_dir
from shell.model import LLM
from tests.conftest import FIXED_NOW, Clock
from tests.core.dreams import FOUR, TODAY, DreamWorld, days_before, of
from tests.fakes.openai_script import Fault, Reply
from tests.fakes.openai_server import FakeOpenAI


def seeded(tmp_path: Path, clock: Clock, **kwargs: object) -> DreamWorld:
    """Two days of notes: a fact asked about four ways, one asked once, small talk."""
    dream = DreamWorld(tmp_path / "ws", clock, **kwargs)  # type: ignore[arg-type]
    (yesterday,) = days_before(clock, 1)
    dream.note(yesterday, "- My sister lives in Tromsø", "- hi, how are you today?")
    dream.note(TODAY, "- Tom takes his coffee black", "- The deploy window is Friday 14:00")
    dream.recalled(f"memory/{TODAY}.md", 1, FOUR, score=0.62)
    dream.recalled(f"memory/{yesterday}.md", 1, ["where does my sister live?"], days=[yesterday])
    dream.recalled(f"memory/{yesterday}.md", 2, FOUR * 2, days=[yesterday], score=0.8)
    return dream


async def test_a_sweep_writes_one_block_and_proposes_what_passed(
    tmp_path: Path, clock: Clock
) -> None:
    dream = seeded(tmp_path, clock)
    events = await dream.sweep()

    (light,) = of(events, LightSleepFinished)
    assert (light.notes, light.units, light.merged) == (2, 3, 0)  # small talk is not staged
    assert light.reinforced[0].text == "Tom takes his coffee black"
    (rem,) = of(events, RemSleepFinished)
    assert rem.notes == 2 and rem.truths[0].text == "Tom takes his coffee black"
    (proposed,) = of(events, DreamProposed)
    proposal = proposed.proposal
    assert (proposal.kind, proposal.text, proposal.distilled_by) == (
        "add",
        "Tom takes his coffee black.",
        "rule",
    )
    assert [s.citation for s in proposal.sources] == [f"memory/{TODAY}.md#L1"]
    assert proposal.sources[0].date == TODAY
    (written,) = of(events, MemoryWritten)
    assert written.path == "DREAMS.md" and written.commit
    (finished,) = of(events, DreamSweepFinished)
    assert (finished.outcome, finished.proposed, finished.open) == ("written", 1, 1)

    diary = (dream.root / "DREAMS.md").read_text(encoding="utf-8")
    assert diary.startswith("# DREAMS.md — the dreaming diary")
    block = diary[diary.index("<!-- cairn:dream") :]
    assert block.splitlines()[1] == f"## {TODAY} 09:30 · dream"
    for heading in ("### Light sleep", "### REM sleep", "### Deep sleep", "### Proposals"):
        assert heading in block
    assert f"- **{proposal.id}** · add · open\n  Tom takes his coffee black.\n" in block
    assert f"from memory/{TODAY}.md#L1 ({TODAY})" in block
    assert "1 too few recalls" in block and "(small talk)" in block
    assert block.rstrip().endswith("<!-- /cairn:dream -->")
    log = dream.git.log(1)[0]
    assert log.message.startswith(f"memory(dream): sweep {TODAY} 09:30, 1 proposed")
    assert "MEMORY.md" not in log.files  # dreaming proposes; it never writes MEMORY.md itself


async def test_a_second_sweep_with_nothing_new_writes_nothing(tmp_path: Path, clock: Clock) -> None:
    dream = seeded(tmp_path, clock)
    await dream.sweep()
    before = (dream.root / "DREAMS.md").read_text(encoding="utf-8")
    clock.advance(minutes=5)
    events = await dream.sweep()
    (finished,) = of(events, DreamSweepFinished)
    assert (finished.outcome, finished.proposed, finished.open) == ("nothing_new", 0, 1)
    assert not of(events, MemoryWritten)
    assert (dream.root / "DREAMS.md").read_text(encoding="utf-8") == before


async def test_a_newer_note_that_contradicts_memory_md_yields_an_update(
    tmp_path: Path, clock: Clock
) -> None:
    dream = DreamWorld(tmp_path / "ws", clock, embedder="minilm")
    (last_week, yesterday) = days_before(clock, 7, 1)
    dream.memory("- Tom takes his coffee black", "- The office is in Oslo", day=last_week)
    dream.note(yesterday, "- Tom switched to oat lattes")
    events = await dream.sweep()
    (proposed,) = of(events, DreamProposed)
    update = proposed.proposal
    assert (update.kind, update.text) == ("update", "Tom switched to oat lattes.")
    assert (update.replaces, update.replaces_line) == ("- Tom takes his coffee black", 3)
    assert [s.citation for s in update.sources] == [f"memory/{yesterday}.md#L1", "MEMORY.md#L3"]
    assert "“switched”" in update.reason and last_week in update.reason
    (preview,) = dream.dreamer.open_proposals(window=4096)
    assert preview.diff == [  # unified-diff style: the sign, then the line
        "-- Tom takes his coffee black",
        f"+- Tom switched to oat lattes. — Source: memory/{yesterday}.md#L1",
    ]
    (deep,) = of(events, DeepSleepFinished)
    assert deep.updates == 1


async def test_an_older_note_a_restatement_or_another_topic_is_no_update(
    tmp_path: Path, clock: Clock
) -> None:
    dream = DreamWorld(tmp_path / "ws", clock, embedder="minilm")
    (last_week, yesterday) = days_before(clock, 7, 1)
    dream.note(last_week, "- Tom switched to oat lattes")  # before the line was written
    dream.memory("- Tom takes his coffee black", "- Priya leads the billing team", day=yesterday)
    dream.note(TODAY, "- Tom takes his coffee black now")  # the same fact again
    dream.note(TODAY, "- Tom started a new job at Acme")  # Tom, but not his coffee
    dream.note(TODAY, "- Priya now works remotely on Fridays")  # close (0.57), another topic
    assert not of(await dream.sweep(), DreamProposed)


async def test_the_model_distils_and_its_text_is_checked(
    tmp_path: Path, clock: Clock, fake_openai: FakeOpenAI, fake_settings: Settings
) -> None:
    llm = LLM("openai/fake", api_base=fake_openai.base_url, api_key="sk-test", max_attempts=1)
    dream = seeded(tmp_path, clock, llm=llm, settings=fake_settings)
    answer = {"proposals": [{"id": "c0", "text": "Tom drinks his coffee black, no milk."}]}
    fake_openai.enqueue(Reply(text=json.dumps(answer)))
    (proposed,) = of(await dream.sweep(), DreamProposed)
    assert proposed.proposal.text == "Tom drinks his coffee black, no milk."
    assert (proposed.proposal.distilled_by, proposed.proposal.fallback) == ("model", None)
    request = fake_openai.requests[-1]
    # a model litellm does not know to take a JSON schema gets JSON mode, with the schema
    assert request["response_format"]["type"] == "json_object"
    assert request["response_format"]["schema"]["required"] == ["proposals"]
    assert request["max_tokens"] <= 4096 // 4
    assert "Tom takes his coffee black" in request["messages"][1]["content"]


async def test_malformed_or_invented_proposals_fall_back_to_rule(
    tmp_path: Path, clock: Clock, fake_openai: FakeOpenAI, fake_settings: Settings
) -> None:
    llm = LLM("openai/fake", api_base=fake_openai.base_url, api_key="sk-test", max_attempts=1)
    cases = [
        ("Sure! Here are the facts: Tom likes coffee.", "not the JSON asked for"),
        (
            json.dumps(
                {"proposals": [{"id": "c0", "text": "Tom takes his coffee black in Berlin."}]}
            ),
            "names 'Berlin'",
        ),
        (json.dumps({"proposals": [{"id": "c0", "text": "Tom takes 3 sugars."}]}), "names '3'"),
        (
            json.dumps({"proposals": [{"id": "c9", "text": "Tom takes his coffee black."}]}),
            "gave no text for it",
        ),
        (json.dumps({"proposals": [{"id": "c0", "text": "run git push now"}]}), "not a fact"),
    ]
    for index, (answer, reason) in enumerate(cases):
        dream = seeded(tmp_path / str(index), clock, llm=llm, settings=fake_settings)
        fake_openai.enqueue(Reply(text=answer))
        (proposed,) = of(await dream.sweep(), DreamProposed)
        assert proposed.proposal.text == "Tom takes his coffee black."
        assert proposed.proposal.distilled_by == "rule"
        assert reason in (proposed.proposal.fallback or ""), proposed.proposal.fallback


async def test_a_provider_that_refuses_the_response_format_is_asked_without(
    tmp_path: Path, clock: Clock, fake_openai: FakeOpenAI, fake_settings: Settings
) -> None:
    """llama-cpp-python answers a response format it does not take with a 500."""
    llm = LLM("openai/fake", api_base=fake_openai.base_url, api_key="sk-test", max_attempts=3)
    dream = seeded(tmp_path, clock, llm=llm, settings=fake_settings)
    answer = {"proposals": [{"id": "c0", "text": "Tom drinks his coffee black."}]}
    fake_openai.enqueue(Fault(status=500), Reply(text=json.dumps(answer)))
    (proposed,) = of(await dream.sweep(), DreamProposed)
    assert (proposed.proposal.text, proposed.proposal.distilled_by) == (
        "Tom drinks his coffee black.",
        "model",
    )
    first, second = fake_openai.requests[-2:]
    assert "response_format" in first and "response_format" not in second


async def test_a_failed_model_call_falls_back_to_rule(
    tmp_path: Path, clock: Clock, fake_settings: Settings, refused_port: int
) -> None:
    llm = LLM(
        "openai/fake",
        api_base=f"http://127.0.0.1:{refused_port}/v1",
        api_key="x",
        max_attempts=1,
        timeout=2,
    )
    dream = seeded(tmp_path, clock, llm=llm, settings=fake_settings)
    (proposed,) = of(await dream.sweep(), DreamProposed)
    assert proposed.proposal.distilled_by == "rule"
    assert "the model call failed" in (proposed.proposal.fallback or "")


async def test_the_demo_brain_distils_deterministically(tmp_path: Path, clock: Clock) -> None:
    from shell.build import build_dreamer

    dream = seeded(tmp_path, clock)
    dreamer = build_dreamer(dream.settings)
    events = [e async for e in dreamer.sweep("manual", window=4096)]
    (proposed,) = of(events, DreamProposed)
    assert (proposed.proposal.text, proposed.proposal.distilled_by) == (
        "Tom takes his coffee black.",
        "model",
    )


async def test_dreaming_switched_off_sweeps_nothing_and_records_no_hits(
    tmp_path: Path, clock: Clock
) -> None:
    from shell.build import build_agent

    dream = DreamWorld(tmp_path / "ws", clock, enabled=False)
    dream.note(TODAY, "- Tom takes his coffee black")
    (skipped,) = await dream.sweep()
    assert isinstance(skipped, DreamSweepSkipped) and skipped.reason == "disabled"
    agent = build_agent(dream.settings, index_in_background=False)
    events = [e for question in FOUR async for e in agent.submit(question)]
    await agent.aclose()
    assert of(events, SearchPerformed)  # the searches ran and found the fact …
    assert not dreams_dir(dream.root).exists()  # … and nothing was recorded for dreaming


async def test_a_second_sweep_at_the_same_time_is_refused(tmp_path: Path, clock: Clock) -> None:
    dream = seeded(tmp_path, clock)
    with exclusive_lock(dreams_dir(dream.root) / "sweep.lock"):  # another process's sweep
        (skipped,) = await dream.sweep()
    assert isinstance(skipped, DreamSweepSkipped) and skipped.reason == "busy"
    assert of(await dream.sweep(), DreamProposed)


async def test_a_sweep_cancelled_midway_writes_nothing(tmp_path: Path, clock: Clock) -> None:
    dream = seeded(tmp_path, clock)
    diary_before = (dream.root / "DREAMS.md").read_bytes()
    seen = []
    stream = dream.dreamer.sweep("manual", window=4096)
    async for event in stream:
        seen.append(event)
        if isinstance(event, RemSleepFinished):
            break
    await stream.aclose()
    assert (dream.root / "DREAMS.md").read_bytes() == diary_before
    assert not (dreams_dir(dream.root) / "proposals.json").exists()
    assert of(await dream.sweep(), DreamProposed)  # the lock was let go


async def test_a_sweep_killed_midway_leaves_whole_files(tmp_path: Path, clock: Clock) -> None:
    dream = seeded(tmp_path, clock)
    diary_before = (dream.root / "DREAMS.md").read_bytes()
    script = f"""
import asyncio, os
from dataclasses import replace
from shell.dreaming import diary
from shell.dreaming.dreamer import Dreamer
from shell.build import build_dreamer
from shell.config import Settings
from datetime import datetime
from datetime import timedelta
from pathlib import Path

def killed(current, block):
    os._exit(9)
diary.splice = killed
settings = Settings(workspace=Path({str(dream.root)!r}), embedder="hash", watch=False,
                    clock=lambda: datetime.fromisoformat({FIXED_NOW.isoformat()!r}))
dreamer = build_dreamer(settings)
async def main():
    async for _ in dreamer.sweep("cli", window=4096):
        pass
asyncio.run(main())
"""
    process = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-c", script], capture_output=True, cwd=Path.cwd()
    )
    assert process.returncode == 9, process.stderr.decode()
    assert (dream.root / "DREAMS.md").read_bytes() == diary_before
    state = json.loads((dreams_dir(dream.root) / "proposals.json").read_text(encoding="utf-8"))
    assert [r["status"] for r in state["records"]] == ["open"]  # whole, and readable
    assert not list(dream.root.rglob(".*.tmp"))
    events = await dream.sweep()  # the next sweep writes the block the kill kept out
    (finished,) = of(events, DreamSweepFinished)
    assert (finished.outcome, finished.open) == ("written", 1)
    assert "still open from earlier sweeps" in (dream.root / "DREAMS.md").read_text()


async def test_a_note_written_the_same_day_after_the_line_is_newer(
    tmp_path: Path, clock: Clock
) -> None:
    """Accepted this morning, contradicted this afternoon: git blame orders them, not dates."""
    dream = DreamWorld(tmp_path / "ws", clock, embedder="minilm")
    dream.memory("- Tom takes his coffee black")
    clock.advance(hours=5)
    dream.note(TODAY, "- Tom switched to oat lattes")
    (proposed,) = of(await dream.sweep(), DreamProposed)
    assert proposed.proposal.kind == "update"


async def test_a_line_dreaming_put_in_memory_md_can_be_updated_later(
    tmp_path: Path, clock: Clock
) -> None:
    dream = DreamWorld(tmp_path / "ws", clock, embedder="minilm")
    dream.note(TODAY, "- Tom takes his coffee black")
    dream.recalled(f"memory/{TODAY}.md", 1, FOUR)
    (first,) = of(await dream.sweep(), DreamProposed)
    dream.dreamer.accept(first.proposal.id, window=4096)  # "… — Source: memory/….md#L1"
    clock.advance(hours=2)
    dream.note(TODAY, "- Tom switched to oat lattes")
    (update,) = of(await dream.sweep(), DreamProposed)
    assert update.proposal.kind == "update"
    assert update.proposal.replaces == (
        f"- Tom takes his coffee black. — Source: memory/{TODAY}.md#L1"
    )


async def test_a_sweep_whose_vectors_are_cached_never_opens_the_index(
    tmp_path: Path, clock: Clock
) -> None:
    """LanceDB's import was most of a `cairn dream` (5-10 s on real notes): a sweep reads the
    files and its own vector cache, and opens the index only for units the cache lacks."""
    dream = seeded(tmp_path, clock)
    script = f"""
import asyncio, sys
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from shell.build import build_dreamer
from shell.config import Settings
from shell.events import DreamProposed

settings = Settings(workspace=Path({str(dream.root)!r}), embedder="hash", watch=False,
                    clock=lambda: datetime.fromisoformat({FIXED_NOW.isoformat()!r}))
dreamer = build_dreamer(settings)
async def main():
    return [e async for e in dreamer.sweep("cli", window=4096) if isinstance(e, DreamProposed)]
proposed = asyncio.run(main())
print(len(proposed), "lancedb" in sys.modules)
"""

    def sweep() -> str:
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, cwd=Path.cwd(), check=False
        )
        assert done.returncode == 0, done.stderr.decode()
        return done.stdout.decode().split()[-2:]

    dream.recall.sync("manual")  # the index a session would have built
    assert await asyncio.to_thread(sweep) == ["1", "True"]  # cold: the units come from it
    assert await asyncio.to_thread(sweep) == ["0", "False"]  # proposed already; all cached


async def test_a_model_may_date_what_a_chat_line_said_relatively(
    tmp_path: Path, clock: Clock, fake_openai: FakeOpenAI, fake_settings: Settings
) -> None:
    """The prompt asks for dates instead of "last month"; the month and year the note's date
    gives are no invention, a day it does not give is."""
    llm = LLM("openai/fake", api_base=fake_openai.base_url, api_key="sk-test", max_attempts=1)
    dream = DreamWorld(tmp_path / "ws", clock, llm=llm, settings=fake_settings, min_score=0.0)
    path = dream.note(TODAY, "- Dave: Wow! I got a job at Acme last month.")
    dream.recalled(path, 1, FOUR)
    month = (FIXED_NOW.replace(day=1) - timedelta(days=1)).strftime("%B %Y")
    dated = {"proposals": [{"id": "c0", "text": f"Dave got a job at Acme in {month}."}]}
    fake_openai.enqueue(Reply(text=json.dumps(dated)))
    (proposed,) = of(await dream.sweep(), DreamProposed)
    assert (proposed.proposal.text, proposed.proposal.distilled_by) == (
        f"Dave got a job at Acme in {month}.",
        "model",
    )
    assert "third person" in fake_openai.requests[-1]["messages"][0]["content"]
    again = DreamWorld(tmp_path / "again", clock, llm=llm, settings=fake_settings, min_score=0.0)
    path = again.note(TODAY, "- Dave: Wow! I got a job at Acme last month.")
    again.recalled(path, 1, FOUR)
    invented = {"proposals": [{"id": "c0", "text": f"Dave got a job at Acme on 3 {month}."}]}
    fake_openai.enqueue(Reply(text=json.dumps(invented)))
    (fallback,) = of(await again.sweep(), DreamProposed)
    assert fallback.proposal.distilled_by == "rule"
    assert fallback.proposal.text == f"Dave got a job at Acme in {month}."
