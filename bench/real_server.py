"""Cairn against a real OpenAI-compatible server: a scripted chat, and what the memory did.

    python -m bench.real_server --api-base http://127.0.0.1:8088/v1 --model openai/smollm2 \\
        --context-window 2048 [--turns 20] [--json]

A fresh workspace, the production agent (headless, the real index), and `--turns` scripted user
messages: facts to remember, questions about them, small talk and requests for stories (long
answers fill a small window fast). Per turn it prints how it ended, the prompt as we count it,
as calibrated and as the server counted it, the tool calls (those the model wrote as text
among them), and what the memory lifecycle did: flushes and their outcomes, compactions (by the
model, by rule, failed or skipped), dropped turns, retries and errors. A **silent turn** ends
"completed" with no answer text and no error: the failure this bench exists to catch.

The server's count of every call's prompt (the turns', the flush's and the summariser's) comes
from the server itself: the same request sent again whole, not streamed, for one token (a
server that sends no usage when streaming, like llama.cpp's, still counts a whole response; its
prompt cache makes the probe cheap). Next to it: our projection for that call by its shape's
calibration (`bench.server_counts`: a turn's, a flush's or the summariser's). An answer's
citations (`path#L3`, `path#L3-L5`) are **real** when the file is in the workspace and holds
those lines, else **invented**; the citation Cairn names beside an answer that restated a hit
(`AnswerSourced`) is counted apart. A question of the script is answered **right** when the answer
holds what `ANSWERS` expects. Calls Cairn made for the model (`memory_assist`) are counted apart
from the model's own. Nothing here runs in `make test`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.server_counts import Calls, ProbedLLM, projections
from shell import events as ev
from shell.build import build_agent
from shell.config import Settings
from shell.loop.save_claims import UNSAVED_NOTICE, claims_a_save
from shell.workspace import init_workspace

CITATION = re.compile(r"([\w./-]+\.md)#L(\d+)(?:-L?(\d+))?")

SCRIPT = [
    "Hi! My name is Ada and I live in Tromsø.",
    "Please remember that the Heron design review is on 9 December.",
    "Tell me a short story about a lighthouse keeper.",
    "Our release train leaves every second Tuesday.",
    "What is my name?",
    "Tell me a story about a fox who learns to sail.",
    "The database password rotation happens on the 1st of each month.",
    "When is the Heron design review?",
    "I prefer tea over coffee, and I am learning Rust.",
    "Tell me another story, this time about a clockmaker in Prague.",
    "Where do I live?",
    "The API gateway runs on Envoy.",
    "How often does the release train leave?",
    "Tell me a story about two friends crossing a desert.",
    "What do I drink in the morning?",
    "Our backup bucket is called cairn-backups-eu.",
    "What runs our API gateway?",
    "Tell me a story about a dragon who is afraid of heights.",
    "What is the name of our backup bucket?",
    "Thanks, that is all for today.",
]
ANSWERS = {
    "What is my name?": r"\bAda\b",
    "When is the Heron design review?": r"9(th)? Dec|Dec\w* 9",
    "Where do I live?": r"Troms",
    "How often does the release train leave?": r"second Tuesday|two weeks|fortnight",
    "What do I drink in the morning?": r"\btea\b",
    "What runs our API gateway?": r"Envoy",
    "What is the name of our backup bucket?": r"cairn-backups-eu",
}
"""What a right answer to each question of `SCRIPT` holds (a pattern, case-insensitive)."""


@dataclass
class TurnRow:
    turn: int
    prompt: str
    reason: str = ""
    answer_chars: int = 0
    counted: int = 0
    calibrated: int = 0
    reported: int = 0
    flushes: list[str] = field(default_factory=list)
    compactions: list[str] = field(default_factory=list)
    dropped: int = 0
    retries: int = 0
    errors: list[str] = field(default_factory=list)
    tool_calls: int = 0
    """The model's, written as text among them."""
    from_text: int = 0
    by_cairn: int = 0
    """Made by Cairn for the model (`memory_assist`)."""
    answer: str = ""
    writes: int = 0
    searches: int = 0
    citations: list[str] = field(default_factory=list)
    """Each `path#Lx` the answers cite."""
    sourced: list[str] = field(default_factory=list)
    """Each citation Cairn named beside an answer that restated a hit (`AnswerSourced`)."""
    overflows: int = 0
    claimed_save: bool = False
    flagged_unsaved: bool = False
    """Cairn said beside the answer that its claimed save wrote nothing."""
    notes: list[str] = field(default_factory=list)
    """Why a flush failed or a retry happened."""
    seconds: float = 0.0

    @property
    def right(self) -> bool | None:
        """Whether the answer holds what the question asks for; None for another prompt."""
        pattern = ANSWERS.get(self.prompt)
        return None if pattern is None else bool(re.search(pattern, self.answer, re.I))

    @property
    def silent(self) -> bool:
        return self.reason == "completed" and not self.answer_chars and not self.errors


def record(row: TurnRow, event: ev.BaseEvent) -> None:
    match event:
        case ev.AssistantMessage(text=text):
            row.answer += text
            row.answer_chars += len(text.strip())
            row.citations += [m.group(0) for m in CITATION.finditer(text)]
            row.claimed_save |= claims_a_save(text)
        case ev.ToolCallStarted(by_cairn=True):
            row.by_cairn += 1
        case ev.ToolCallStarted(from_text=from_text):
            row.tool_calls += 1
            row.from_text += from_text
        case ev.MemoryWritten(outcome="committed"):
            row.writes += 1
        case ev.SearchPerformed():
            row.searches += 1
        case ev.UsageUpdated():
            row.counted, row.calibrated = event.counted_prompt_tokens, event.prompt_tokens
            row.reported = event.reported_prompt_tokens or row.reported
        case ev.AnswerSourced(citation=citation):
            row.sourced.append(citation)
        case ev.FlushFinished(outcome=outcome, error=error, by_rule=True):
            row.flushes.append(f"{outcome} by rule")
        case ev.FlushFinished(outcome=outcome, error=error):
            row.flushes.append(outcome)
            if error:
                row.notes.append(f"flush {outcome}: {error[:100]}")
        case ev.CompactionFinished(fallback=fallback):
            row.compactions.append("by rule" if fallback else "model")
        case ev.CompactionFailed():
            row.compactions.append("failed")
        case ev.CompactionSkipped():
            row.compactions.append("skipped")
        case ev.TurnsDropped(turns=turns):
            row.dropped += turns
        case ev.ModelRetry(reason=reason):
            row.retries += 1
            row.notes.append(f"retry: {reason[:100]}")
        case ev.Error(kind=kind, message=message):
            row.errors.append(f"{kind}: {message[:100]}")
            row.overflows += kind == "context_overflow"
        case ev.Notice(message=message) if message == UNSAVED_NOTICE:
            row.flagged_unsaved = True
        case ev.TurnFinished(reason=reason):
            row.reason = reason


async def run(settings: Settings, prompts: list[str], rows: list[TurnRow], calls: Calls) -> None:
    """The turns into `rows`, and each call's (projected, reported) prompt tokens into `calls`
    (kept as they come: a run stopped with Ctrl-C still reports what it did)."""
    agent = build_agent(settings, index_in_background=False)
    probed = ProbedLLM(agent.llm, agent)
    probed.calls = calls
    agent.llm = agent.loop.parts.llm = agent.lifecycle.llm = probed
    try:
        async for _ in agent.start():
            pass
        for number, prompt in enumerate(prompts, start=1):
            row = TurnRow(number, prompt)
            started = time.perf_counter()
            async with contextlib.aclosing(agent.submit(prompt)) as stream:
                async for event in stream:
                    record(row, event)
            row.seconds = time.perf_counter() - started
            if probed.calls:
                row.reported = probed.calls[-1].server
            rows.append(row)
            print(_line(row), file=sys.stderr, flush=True)
    finally:
        await agent.aclose()


def real_citation(workspace: Path, citation: str) -> bool:
    """Whether `path#Lx(-Ly)` names lines a memory file of `workspace` holds."""
    match = CITATION.fullmatch(citation)
    if match is None:
        return False
    path = (workspace / match.group(1)).resolve()
    if not path.is_relative_to(workspace.resolve()) or not path.is_file():
        return False
    first = int(match.group(2))
    last = int(match.group(3) or first)
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return 1 <= first <= last <= len(lines)


def _line(row: TurnRow) -> str:
    lifecycle = [
        *(f"flush {f}" for f in row.flushes),
        *(f"compaction {c}" for c in row.compactions),
    ]
    if row.dropped:
        lifecycle.append(f"dropped {row.dropped} turns")
    ending = "SILENT" if row.silent else row.reason
    tools = f"{row.tool_calls}/{row.from_text}/{row.by_cairn}"
    if row.right is not None:
        ending += " ✓" if row.right else " ✗"
    return (
        f"{row.turn:>3} {ending:<12} {row.answer_chars:>5} {row.counted:>6} {row.calibrated:>6} "
        f"{row.reported:>6} {tools:>6} {row.writes:>2} {row.searches:>2} {row.retries:>3} "
        f"{row.seconds:>6.1f}  "
        f"{', '.join(lifecycle) or '-'}{'  ' + row.errors[0] if row.errors else ''}"
        + "".join(f"\n      {note}" for note in row.notes)
    )


HEADER = (
    "  # ending       chars counted calib. server  tools wr se try      s  memory lifecycle\n"
    "  (tools: the model's calls/those written as text/calls by Cairn; ✓ ✗: a question answered"
    " right or not;\n   wr: memory writes; se: searches; server: its own count)"
)


def summary(rows: list[TurnRow], calls: Calls, workspace: Path) -> dict[str, Any]:
    compactions = [c for row in rows for c in row.compactions]
    flushes = [f for row in rows for f in row.flushes]
    cited = [c for row in rows for c in row.citations]
    real = [c for c in cited if real_citation(workspace, c)]
    return {
        "turns": len(rows),
        "completed": sum(row.reason == "completed" for row in rows),
        "silent_turns": sum(row.silent for row in rows),
        "errors": sum(bool(row.errors) for row in rows),
        "flushes": {outcome: flushes.count(outcome) for outcome in sorted(set(flushes))},
        "compactions": {kind: compactions.count(kind) for kind in sorted(set(compactions))},
        "turns_dropped": sum(row.dropped for row in rows),
        "tool_calls": sum(row.tool_calls for row in rows),
        "tool_calls_from_text": sum(row.from_text for row in rows),
        "tool_calls_by_cairn": sum(row.by_cairn for row in rows),
        "questions_answered_right": sum(bool(row.right) for row in rows),
        "questions": sum(row.right is not None for row in rows),
        "memory_writes": sum(row.writes for row in rows),
        "searches": sum(row.searches for row in rows),
        "answers_citing_a_real_source": sum(
            any(real_citation(workspace, c) for c in row.citations) for row in rows
        ),
        "answers_sourced_by_cairn": sum(
            any(real_citation(workspace, c) for c in row.sourced) for row in rows
        ),
        "right_answers_with_a_real_source": sum(
            bool(row.right)
            and any(real_citation(workspace, c) for c in [*row.citations, *row.sourced])
            for row in rows
        ),
        "citations_real": len(real),
        "citations_invented": len(cited) - len(real),
        "overflows": sum(row.overflows for row in rows),
        "saves_claimed_without_a_write": sum(row.claimed_save and not row.writes for row in rows),
        "of_them_flagged_by_cairn": sum(
            row.claimed_save and not row.writes and row.flagged_unsaved for row in rows
        ),
        "answers_copied_word_for_word": _copies(rows),
        "retries": sum(row.retries for row in rows),
        **projections(calls),
    }


def _copies(rows: list[TurnRow]) -> int:
    """Answers that repeat, word for word, an earlier answer to another prompt (a small model's
    copying; the script says each prompt twice, and the same answer to it is no copy)."""
    prompts: dict[str, set[str]] = {}
    copies = 0
    for row in rows:
        key = " ".join(row.answer.split())
        if not key:
            continue
        copies += key in prompts and row.prompt not in prompts[key]
        prompts.setdefault(key, set()).add(row.prompt)
    return copies


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api-base", required=True)
    parser.add_argument("--model", default="openai/local")
    parser.add_argument("--context-window", type=int, default=2048)
    parser.add_argument("--turns", type=int, default=len(SCRIPT))
    parser.add_argument("--max-attempts", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="JSON on stdout, table on stderr")
    args = parser.parse_args(argv)
    workspace = Path(tempfile.mkdtemp(prefix="cairn-real-server-")) / "workspace"
    settings = Settings(
        workspace=workspace,
        model=args.model,
        api_base=args.api_base,
        context_window=args.context_window,
        max_attempts=args.max_attempts,
        watch=False,
    )
    init_workspace(settings)
    prompts = (SCRIPT * (args.turns // len(SCRIPT) + 1))[: args.turns]
    print(HEADER, file=sys.stderr)
    rows: list[TurnRow] = []
    calls: Calls = []
    for stop in (signal.SIGINT, signal.SIGTERM):  # a background job ignores SIGINT otherwise
        signal.signal(stop, signal.default_int_handler)
    try:
        asyncio.run(run(settings, prompts, rows, calls))
    except KeyboardInterrupt:
        print(f"stopped after {len(rows)} turns", file=sys.stderr)
    report = summary(rows, calls, workspace)
    print(json.dumps(report, indent=2), file=sys.stderr if not args.json else sys.stdout)
    print(f"workspace kept at {workspace}", file=sys.stderr)
    return 1 if report["silent_turns"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
