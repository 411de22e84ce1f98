"""Dreaming on real conversations: what does a sweep propose from LoCoMo's notes, and is it worth
keeping?

Run: `python -m bench.dream --real [--data PATH] [--labels DIR] [--json] [--verbose]`. See
bench/README.md.

Per conversation (`bench.locomo_data`), in a fresh workspace (`bench.dream_world`): the sessions
as daily notes with their real spacing, shifted so the last session's day is the bench's NOW, each
note committed on its day; the index; every question of categories 1–4 through the
`memory_search` tool, spread over the last seven days in a seeded order. Then:

- one sweep without a model, its proposals labelled by the turns inside their sources (the best
  of durable > borderline > junk, from `dream_labels/<conversation>.json`; "unlabelled" when no
  labelled turn is there);
- sweeps again, the same day, with a reviewer who accepts what is durable and rejects the rest,
  until a sweep proposes nothing or `MAX_SWEEPS`;
- coverage: of the units recalled at least three times by three distinct questions, counting a
  recall only where the unit was among its search's best answers (`deep.answers`), in notes
  inside the age window, how many those sweeps proposed.

A planted scenario of MEMORY.md lines that later notes change (`bench.dream_updates`) and the
synthetic year's sweep time (`bench.dream`) are reported beside them. Nothing of the data's text
is written anywhere but the temporary workspaces and, with `--verbose`, stderr.
"""

from __future__ import annotations

import json
import math
import random
import re
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any, TextIO

from bench.dream_real_report import group_totals, report
from bench.dream_setup import NOW
from bench.dream_world import WINDOW, World, make_world
from bench.locomo_data import Conversation, load
from shell.dreaming.deep import answers
from shell.events import Error, Proposal, ProposalAccepted
from shell.memory.paths import daily_note, note_date

LABELS = Path(__file__).resolve().parent / "dream_labels"
HELD_OUT = ("42", "43")
"""Conversations no rule or threshold was tuned on (their names end with these)."""
RANK = {"junk": 1, "borderline": 2, "durable": 3}
KINDS = ("durable", "borderline", "junk", "unlabelled")
ASK_DAYS = 7
MAX_SWEEPS = 15
COVERAGE_RECALLS = 3
COVERAGE_QUESTIONS = 3
SEED = 7

Spot = tuple[str, int]
"""A line of a note: path and 1-based line number."""


def read_labels(folder: Path, name: str) -> dict[str, str] | None:
    """The labels of conversation `name` (`26.json`, or `26.json` for "conv-26"), None when
    the folder has none for it."""
    for stem in dict.fromkeys((name, name.rsplit("-", 1)[-1])):
        path = folder / f"{stem}.json"
        if path.is_file():
            labels = json.loads(path.read_text(encoding="utf-8"))
            wrong = {v for v in labels.values() if v not in RANK}
            if not isinstance(labels, dict) or wrong:
                raise ValueError(f"{path}: labels must map dia_id to {sorted(RANK)}: {wrong}")
            return {str(k): str(v) for k, v in labels.items()}
    return None


@dataclass(frozen=True)
class Labelled:
    """The labels of a conversation's lines, as they sit in the workspace."""

    lines: dict[Spot, str]
    turns: dict[Spot, str] = field(default_factory=dict)
    """The dia_id of each turn's line."""

    def of_range(self, path: str, start: int, end: int) -> str:
        """The best label of the labelled lines in `start`..`end` of `path`."""
        found = [self.lines[(path, n)] for n in range(start, end + 1) if (path, n) in self.lines]
        return max(found, key=RANK.__getitem__, default="unlabelled")

    def of(self, proposal: Proposal) -> str:
        """A proposal's label: the best over its sources (MEMORY.md holds no labelled line)."""
        found = [self.of_range(s.path, s.start_line, s.end_line) for s in proposal.sources]
        return max(found, key=lambda label: RANK.get(label, 0), default="unlabelled")

    def dias(self, proposal: Proposal) -> list[str]:
        """The turns a proposal cites, by dia_id."""
        return [self.turns[spot] for spot in _spots(proposal) if spot in self.turns]


@dataclass(frozen=True)
class Shifted:
    """A conversation's notes moved in time so its last session is on NOW's day."""

    notes: dict[str, list[str]]
    where: dict[str, Spot]
    written: dict[str, datetime]
    """When each note is committed: its last session's time (never after NOW)."""


def shifted(conversation: Conversation) -> Shifted:
    days = NOW.date() - conversation.last.date()
    paths: dict[str, str] = {}
    for path in conversation.notes:
        day = note_date(path)
        assert day is not None, path
        paths[path] = daily_note(day + days)
    written = {}
    for path, lines in conversation.notes.items():
        clock = [line[3:] for line in lines if line.startswith("## ")][-1]
        at = datetime.combine(note_date(paths[path]) or NOW.date(), time.fromisoformat(clock), UTC)
        written[paths[path]] = min(at, NOW - timedelta(minutes=1))
    return Shifted(
        {paths[path]: lines for path, lines in conversation.notes.items()},
        {dia: (paths[path], line) for dia, (path, line) in conversation.where.items()},
        written,
    )


def schedule(questions: Sequence[str], seed: int) -> list[tuple[datetime, str]]:
    """The questions in a seeded order, spread evenly over the last `ASK_DAYS` days, between
    08:00 and 17:00 (before NOW's 18:00 on its own day)."""
    order = list(questions)
    random.Random(seed).shuffle(order)
    per_day = max(1, math.ceil(len(order) / ASK_DAYS))
    asked = []
    for index, question in enumerate(order):
        day, slot = divmod(index, per_day)
        start = datetime.combine(NOW.date() - timedelta(days=ASK_DAYS - 1 - day), time(8), UTC)
        asked.append((start + timedelta(minutes=slot * 540 // per_day), question))
    return asked


@dataclass(frozen=True)
class Recalled:
    """A unit recalled often enough to be counted for coverage."""

    path: str
    start_line: int
    end_line: int
    label: str
    in_window: bool
    """Its note is at most `max_age_days` old."""


def recalled_units(world: World, labelled: Labelled) -> list[Recalled]:
    """The units of daily notes recalled ≥ COVERAGE_RECALLS times by ≥ COVERAGE_QUESTIONS
    distinct questions within `max_age_days`, each recall among its search's best answers."""
    hit_log = world.recall.hit_log
    assert hit_log is not None
    today, max_age = NOW.date(), world.settings.dreaming.max_age_days
    found = []
    for unit in hit_log.recalled():
        day = note_date(unit.path)
        if day is None:
            continue
        recent = [r for r in unit.recalls if (today - date.fromisoformat(r.day)).days <= max_age]
        counted = answers(recent)
        if len(counted) < COVERAGE_RECALLS:
            continue
        if len({r.query for r in counted}) < COVERAGE_QUESTIONS:
            continue
        label = labelled.of_range(unit.path, unit.start_line, unit.end_line)
        in_window = (today - day).days <= max_age
        found.append(Recalled(unit.path, unit.start_line, unit.end_line, label, in_window))
    return found


@dataclass
class Review:
    """The repeated sweeps and the simulated reviewer's decisions."""

    labels: list[list[str]]
    """Per sweep, the label of each proposal."""
    kinds: Counter[str]
    seconds: list[float]
    proposed: set[Spot]
    unlabelled: set[str] = field(default_factory=set)
    """The turns of proposals no label covered (dia_ids): what the labels still need."""
    accepted: int = 0
    rejected: int = 0
    errors: int = 0
    over_budget: int = 0
    ended: str = ""


def review(world: World, labelled: Labelled, verbose: TextIO | None, name: str) -> Review:
    """Sweep, decide every open proposal, sweep again (the same day) until nothing is proposed."""
    done = Review([], Counter(), [], set())
    for number in range(MAX_SWEEPS):
        world.clock.now = NOW + timedelta(minutes=number)
        swept = world.sweep()
        done.seconds.append(swept.seconds)
        done.labels.append([labelled.of(p) for p in swept.proposals])
        for proposal in swept.proposals:
            done.kinds[proposal.kind] += 1
            done.proposed.update(_spots(proposal))
            if labelled.of(proposal) == "unlabelled":
                done.unlabelled.update(labelled.dias(proposal))
            if verbose is not None and number == 0:
                print(
                    f"  {name} {labelled.of(proposal):10} {proposal.kind:6} "
                    f"{','.join(labelled.dias(proposal)) or proposal.sources[0].citation}: "
                    f"{proposal.text}",
                    file=verbose,
                )
        if swept.skipped is not None:
            done.ended = f"skipped: {swept.skipped.reason}"
            return done
        if not swept.proposals:
            done.ended = "nothing proposed"
            return done
        for preview in world.dreamer.open_proposals(window=WINDOW):
            proposal = preview.proposal
            if labelled.of(proposal) == "durable":
                events = world.dreamer.accept(proposal.id, window=WINDOW, over_budget=True)
                done.accepted += any(isinstance(e, ProposalAccepted) for e in events)
                done.over_budget += any(
                    isinstance(e, ProposalAccepted) and e.budget.over for e in events
                )
            else:
                events = world.dreamer.reject(proposal.id)
                done.rejected += not any(isinstance(e, Error) for e in events)
            done.errors += sum(isinstance(e, Error) for e in events)
    done.ended = f"{MAX_SWEEPS} sweeps"
    return done


def _spots(proposal: Proposal) -> Iterable[Spot]:
    for source in proposal.sources:
        for line in range(source.start_line, source.end_line + 1):
            yield source.path, line


def run_conversation(
    conversation: Conversation, labels: dict[str, str] | None, seed: int, verbose: TextIO | None
) -> dict[str, Any]:
    moved = shifted(conversation)
    labelled = Labelled(
        {moved.where[dia]: label for dia, label in (labels or {}).items() if dia in moved.where},
        {spot: dia for dia, spot in moved.where.items()},
    )
    with tempfile.TemporaryDirectory(prefix="cairn-dream-real-") as tmp:
        world = make_world(Path(tmp) / "ws", min(moved.written.values()) - timedelta(days=1))
        try:
            for path in sorted(moved.notes):
                world.commit_note(path, moved.notes[path], moved.written[path], "bench: sessions")
            index_s = world.index()
            world.ask(schedule(conversation.asked, seed))
            recalled = recalled_units(world, labelled)
            done = review(world, labelled, verbose, conversation.name)
        finally:
            world.close()
    first = Counter(done.labels[0])
    every = Counter(label for labels in done.labels for label in labels)

    def covered(units: list[Recalled]) -> dict[str, int]:
        hit = [u for u in units if any((u.path, n) in done.proposed for n in _lines(u))]
        return {"eligible": len(units), "proposed": len(hit)}

    durable = [u for u in recalled if u.label == "durable"]
    return {
        "conversation": conversation.name,
        "held_out": conversation.name.endswith(HELD_OUT),
        "notes": len(moved.notes),
        "turns": len(moved.where),
        "questions": len(conversation.asked),
        "questions_failed": len(world.failed_questions),
        "labelled": len(labelled.lines),
        "labels_unknown": len(set(labels or {}) - set(moved.where)),
        "unlabelled_turns": sorted(done.unlabelled, key=_dia_order),
        "index_s": round(index_s, 1),
        "first": {"proposals": len(done.labels[0]), **{k: first[k] for k in KINDS}},
        "repeated": {
            "sweeps": len(done.labels),
            "proposals": sum(every.values()),
            **{k: every[k] for k in KINDS},
            "updates": done.kinds["update"],
            "accepted": done.accepted,
            "rejected": done.rejected,
            "errors": done.errors,
            "over_budget": done.over_budget,
            "ended": done.ended,
        },
        "coverage": {
            "durable": covered([u for u in durable if u.in_window]),
            "all": covered([u for u in recalled if u.in_window]),
            "durable_any_age": covered(durable),
            "all_any_age": covered(recalled),
        },
        "sweep_s": {
            "median": round(statistics.median(done.seconds), 2),
            "each": [round(s, 2) for s in done.seconds],
        },
    }


def _dia_order(dia: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", dia))


def _lines(unit: Recalled) -> range:
    return range(unit.start_line, unit.end_line + 1)


def run(
    data: Path,
    labels: Path,
    *,
    seed: int = SEED,
    updates: bool = True,
    synthetic: bool = True,
    verbose: TextIO | None = None,
    progress: TextIO | None = None,
) -> dict[str, Any]:
    """Every conversation under `data`, then the updates scenario and the synthetic year."""
    started = datetime.now(UTC)
    conversations = []
    for conversation in load(data):
        found = read_labels(labels, conversation.name)
        conversations.append(run_conversation(conversation, found, seed, verbose))
        if progress is not None:
            print(f"  {conversation.name}: done", file=progress)
    result: dict[str, Any] = {
        "conversations": conversations,
        "totals": group_totals(conversations),
        "updates": None,
        "synthetic_sweep_s": None,
    }
    if updates:
        from bench.dream_updates import run_updates

        result["updates"] = run_updates()
    if synthetic:
        from bench.dream import run as synthetic_year

        result["synthetic_sweep_s"] = synthetic_year(5000, SEED)["sweep_s"]
    result["seconds"] = round((datetime.now(UTC) - started).total_seconds(), 1)
    return result


def main(args: Any) -> int:
    """`bench.dream --real`, with the parsed arguments of `bench.dream`."""
    if not args.data.exists():
        print(f"no LoCoMo data at {args.data}: pass --data PATH (bench/README.md)", file=sys.stderr)
        return 2
    result = run(
        args.data,
        args.labels,
        seed=args.seed,
        verbose=sys.stderr if args.verbose else None,
        progress=sys.stderr,
    )
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else report(result))
    return 0
