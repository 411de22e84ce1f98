"""What accepting a proposal does to MEMORY.md, shown before it is done.

An *add* goes under the dated heading `## Promoted YYYY-MM-DD` as one line with its `Source:`;
an *update* replaces exactly the line it names, which must still be there as it was. Nothing
else in MEMORY.md changes: `changed_lines` checks that of every result before it is written.
A line MEMORY.md already holds (by its statement) is not written again: accepting it adds nothing.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import date
from typing import Literal

from shell.dreaming.junk import statement
from shell.events import MemoryBudget, Proposal
from shell.secrets.door import redacted
from shell.text import collapse, normalized, shorten

HEADING = "## Promoted {day}"
_BULLET = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)")


@dataclass(frozen=True)
class Decision:
    """A person's decision on an open proposal: accept it (as `text`, when edited; past the
    bootstrap budget only with `over_budget`) or reject it. `origin`: who passed it on, for its
    commit, when not Cairn's own review (an MCP client's, `shell.mcp_server`)."""

    action: Literal["accept", "reject"]
    proposal_id: str
    text: str | None = None
    over_budget: bool = False
    origin: str = ""


class StaleProposal(Exception):
    """The proposal no longer applies to MEMORY.md as it is now; the message says why."""


@dataclass(frozen=True)
class Preview:
    """What accepting a proposal would change."""

    proposal: Proposal
    diff: list[str]
    """The changed lines, each starting with "-" or "+"."""
    budget: MemoryBudget
    """MEMORY.md's size after the change against its bootstrap budget."""
    stale: str | None = None
    """Why it can no longer be applied (then `diff` is empty)."""


def memory_line(proposal: Proposal, text: str) -> str:
    """The line an accepted proposal puts into MEMORY.md: its text and its first source."""
    return f"- {collapse(text)} — Source: {proposal.sources[0].citation}"


def applied(memory: str, proposal: Proposal, text: str, today: date) -> str:
    """MEMORY.md's text with the proposal accepted as `text`.

    Raises:
        StaleProposal: an update's line is no longer in MEMORY.md as it was.
    """
    line = memory_line(proposal, text)
    held = holds(memory, text)
    if proposal.kind == "update":
        # the line it replaces never counts as holding it: a re-cited line states what it did
        held = holds("\n".join(n for n in memory.splitlines() if n != proposal.replaces), text)
        if held and proposal.replaces not in memory.splitlines():
            return memory  # already replaced, by hand or by an earlier acceptance
        return _replaced(memory, proposal, None if held else line)
    if held:
        return memory
    heading = HEADING.format(day=today.isoformat())
    lines = memory.splitlines()
    if heading in lines:
        at = lines.index(heading) + 1
        while at < len(lines) and not lines[at].startswith("#"):
            at += 1
        while at > 0 and not lines[at - 1].strip():
            at -= 1
        lines.insert(at, line)
    else:
        while lines and not lines[-1].strip():
            lines.pop()
        lines += ["", heading, line] if lines else [heading, line]
    return "\n".join(lines) + "\n"


def holds(memory: str, text: str) -> bool:
    """Whether a line of `memory` states `text` (its citation and bullet aside)."""
    wanted = normalized(statement(text))
    return any(normalized(statement(line)) == wanted for line in memory.splitlines())


def _replaced(memory: str, proposal: Proposal, line: str | None) -> str:
    """`memory` with the proposal's line replaced by `line`, or removed when None."""
    lines = memory.splitlines()
    old = proposal.replaces or ""
    index = (proposal.replaces_line or 0) - 1
    if not (0 <= index < len(lines) and lines[index] == old):
        found = [i for i, current in enumerate(lines) if current == old]
        if len(found) != 1:
            raise StaleProposal(
                f"MEMORY.md no longer holds the line {proposal.id} would replace: {old!r}"
            )
        index = found[0]
    prefix = match.group(1) if (match := _BULLET.match(old)) else ""
    if line is None:
        del lines[index]
    else:
        lines[index] = prefix + line.removeprefix("- ")
    return "\n".join(lines) + ("\n" if memory.endswith("\n") or not memory else "")


def changed_lines(before: str, after: str) -> list[str]:
    """The lines removed ("-…") and added ("+…") from `before` to `after`."""
    diff = difflib.ndiff(before.splitlines(), after.splitlines())
    return [line[0] + line[2:] for line in diff if line[:1] in ("-", "+")]


def check_only_its_line(proposal: Proposal, before: str, after: str) -> None:
    """Refuse a change that deletes or rewrites a line the proposal does not name.

    Raises:
        StaleProposal: it would.
    """
    changes = changed_lines(before, after)
    removed = [line[1:] for line in changes if line.startswith("-")]
    allowed = [proposal.replaces] if proposal.kind == "update" else []
    if removed != allowed:
        raise StaleProposal(f"accepting {proposal.id} would change other lines of MEMORY.md")


def commit_summary(verb: str, proposal: Proposal, text: str) -> str:
    """The first line of a decision's commit message."""
    sources = ", ".join(source.citation for source in proposal.sources)
    # redacted before the cut: a token cut short is no longer one the detector knows
    return f"{verb} {proposal.id} “{shorten(redacted(text), 60)}” from {sources}"


def budget_refusal(proposal_id: str, budget: MemoryBudget) -> str:
    """Why an acceptance past MEMORY.md's bootstrap budget waits for a person's confirmation."""
    return (
        f"not accepted: {proposal_id} would make MEMORY.md {budget.chars:,} characters, over its "
        f"{budget.budget:,}-character share of the prompt at a {budget.window:,}-token window, "
        "so its end would be cut from every prompt. Shorten MEMORY.md first, or accept anyway "
        "(cairn dream --apply ID --over-budget, or confirm in the review screen)."
    )
