"""DREAMS.md, the dreaming diary for people: one dated block per sweep, newest first.

A block has a short diary entry, a section per phase, and the proposals with their ids; a
decision marks its proposal's line (`open` → `accepted (sha)` / `rejected`). Blocks sit between
`<!-- cairn:dream … -->` markers, so the seeded header and anything a person writes above the
first block stay as they are; past `MAX_BLOCKS` the oldest go (git keeps them).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime

from shell.events import (
    DeepSleepFinished,
    LightSleepFinished,
    Proposal,
    RemSleepFinished,
    Stopped,
)
from shell.text import counted, normalized, sentences

MAX_BLOCKS = 20
START = "<!-- cairn:dream {sweep_id} {digest} -->"
END = "<!-- /cairn:dream -->"
_START = re.compile(r"^<!-- cairn:dream \S+ (?P<digest>\S+) -->$", re.MULTILINE)
_STOP_WORDS = {
    "not_a_note": "in MEMORY.md already",
    "gone": "source changed or gone",
    "junk": "not a fact",
    "too_old": "from a note or recalls past the age limit",
    "recalls": "too few recalls",
    "queries": "too few distinct questions",
    "score": "score under the gate",
    "known": "in MEMORY.md already",
    "rejected": "rejected before",
    "overtaken": "changed by a later note",
    "limit": "over the sweep's limit",
}


def diary_entry(
    light: LightSleepFinished,
    rem: RemSleepFinished,
    deep: DeepSleepFinished,
    proposals: Sequence[Proposal],
) -> str:
    """A few sentences on what the sweep read, noticed and proposes."""
    parts = [
        f"Read {counted(light.notes, 'note')} from the last days and "
        f"{counted(rem.notes, 'note')} from the week."
    ]
    if rem.themes:
        names = " and ".join(f"“{theme.word}”" for theme in rem.themes[:2])
        parts.append(f"{names} kept coming back.")
    settled = sum(s.count for s in deep.stopped if s.reason in ("known", "rejected"))
    if not proposals:
        if settled:
            parts.append("What keeps being asked about is in MEMORY.md or was turned down.")
        elif deep.ranked:
            parts.append("Nothing is ready for MEMORY.md yet.")
        else:
            parts.append("Nothing was recalled often enough to weigh.")
    else:
        adds = sum(p.kind == "add" for p in proposals)
        updates = len(proposals) - adds
        if adds:
            parts.append(f"{counted(adds, 'fact')} kept being asked about; I propose keeping it.")
            if adds > 1:
                parts[-1] = parts[-1].replace("keeping it", "keeping them")
        if updates:
            parts.append(f"{counted(updates, 'line')} of MEMORY.md may be out of date.")
    return " ".join(parts)


Phases = tuple[LightSleepFinished, RemSleepFinished, DeepSleepFinished]


def digest(phases: Phases, open_ids: Sequence[str]) -> str:
    """What a block says, without when: the phases' findings and the open proposals. A sweep
    whose digest is the newest block's has nothing new to write."""
    light, rem, deep = phases
    seen = (asdict(light), asdict(rem), deep.ranked, deep.passed, deep.updates)
    stops = [asdict(stop) for stop in deep.stopped]
    payload = json.dumps([seen, stops, sorted(open_ids)], sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def render_block(
    sweep_id: str,
    when: datetime,
    diary: str,
    phases: Phases,
    proposals: Sequence[Proposal],
    still_open: Sequence[str],
) -> str:
    light, rem, deep = phases
    open_ids = [*(p.id for p in proposals), *still_open]
    lines = [
        START.format(sweep_id=sweep_id, digest=digest(phases, open_ids)),
        f"## {when:%Y-%m-%d %H:%M} · dream",
        "",
        diary,
        "",
        f"### Light sleep · {light.since} to {light.until}",
        f"- {counted(light.notes, 'note')}, {counted(light.units, 'fact')}, "
        f"{counted(light.merged, 'near-duplicate')} merged",
        *(
            f"- restated {r.restated}×, recalled {r.recalled}×: “{r.text}” ({r.citation})"
            for r in light.reinforced
        ),
        "",
        f"### REM sleep · {rem.since} to {rem.until}",
        "- themes: "
        + (", ".join(f"{t.word} ({counted(t.days, 'day')})" for t in rem.themes) or "none yet"),
        *(
            f"- candidate truth, confidence {t.confidence:.2f}: “{t.text}” ({t.citation})"
            for t in rem.truths
        ),
        "",
        "### Deep sleep",
        f"- {deep.ranked} ranked, {deep.passed} passed the gates"
        + (f"; stopped: {stops_text(deep.stopped)}" if deep.stopped else ""),
        "",
        "### Proposals",
        *(_proposal_lines(p) for p in proposals),
    ]
    if not proposals:
        lines.append("- none this time")
    if still_open:
        lines.append(f"- still open from earlier sweeps: {', '.join(still_open)}")
    lines.append(END)
    return "\n".join(lines) + "\n"


def stops_text(stopped: Sequence[Stopped]) -> str:
    return ", ".join(
        f"{s.count} {_STOP_WORDS[s.reason]}" + (f" ({s.junk.replace('_', ' ')})" if s.junk else "")
        for s in stopped
    )


def _proposal_lines(proposal: Proposal) -> str:
    sources = ", ".join(
        f"{s.citation}" + (f" ({s.date})" if s.date else "") for s in proposal.sources
    )
    distilled = "by the model" if proposal.distilled_by == "model" else "by rule"
    if proposal.fallback:
        distilled += f" ({proposal.fallback})"
    head = f"- **{proposal.id}** · {proposal.kind} · open"
    if proposal.kind == "update":
        body = f"  replace “{proposal.replaces}” with: {proposal.text}"
    else:
        body = f"  {proposal.text}"
    evidence = (
        f"  score {proposal.score:.2f} · {counted(proposal.recalls, 'recall')}, "
        f"{counted(proposal.queries, 'question')}, {counted(proposal.days, 'day')} · "
        if proposal.kind == "add"
        else f"  similarity {proposal.score:.2f} · "
    )
    written = [f"  written: {o.citation} {o.summary}" for o in proposal.origins]
    return "\n".join([head, body, f"{evidence}{distilled} · from {sources}", *written])


def splice(current: str, block: str) -> str:
    """`current` with `block` first among the blocks, keeping the newest MAX_BLOCKS."""
    starts = [match.start() for match in _START.finditer(current)]
    header = current[: starts[0]] if starts else current
    if header and not header.endswith("\n\n"):
        header = header.rstrip("\n") + "\n\n"
    ends = [*starts[1:], len(current)] if starts else []
    blocks = [current[a:b] for a, b in zip(starts, ends, strict=True)]
    kept = [block, *(b.rstrip("\n") + "\n" for b in blocks)][:MAX_BLOCKS]
    return header + "\n".join(kept)


def latest_digest(current: str) -> str | None:
    """The digest of the newest block of DREAMS.md (None when it has none)."""
    match = _START.search(current)
    return match["digest"] if match else None


def mark(current: str, proposal_id: str, status: str) -> str:
    """`current` with each line of proposal `proposal_id` saying `status` instead of open."""
    pattern = re.compile(rf"^(- \*\*{re.escape(proposal_id)}\*\* · \w+ · )open$", re.MULTILINE)
    return pattern.sub(lambda m: m.group(1) + status, current)


def prose_lines(diary: str) -> list[str]:
    """The normalized lines and sentences dreaming wrote in its own words in the blocks of
    `diary` (DREAMS.md or one block): its diary and its counts, not the facts it quotes (in “…”)
    or proposes (indented under a proposal's id), which come from notes and come back as notes.
    What must never come back as a proposal."""
    found: list[str] = []
    inside = False
    for line in diary.splitlines():
        if _START.match(line) or line == END:
            inside = line != END
            continue
        if not inside or line.startswith("  "):
            continue
        parts = [line, *sentences(line)]
        found += [text for part in parts if "“" not in part and (text := normalized(part))]
    return list(dict.fromkeys(found))
