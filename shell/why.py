"""Why a memory line is there: its provenance (`shell.memory.provenance`) and, when this machine
holds the session that first wrote it, that turn (`shell.session.turns`) and the turn's writes.

`cairn why` prints it and the TUI's why screen shows it; both go through `Why`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from shell.git.history_commit import HistoryCommit
from shell.git.store import GitStore
from shell.memory.provenance import Provenance, Provenances, Step, turn_writes
from shell.session.store import SessionStore
from shell.session.turns import PastTurn, past_turn


@dataclass(frozen=True)
class Traced:
    """A line, how it got there, and the turn that wrote it."""

    provenance: Provenance
    turn: PastTurn | None = None
    turn_missing: str | None = None
    """Why the turn that wrote it cannot be shown, when a session wrote it."""
    writes: list[HistoryCommit] = field(default_factory=list)
    """Every commit of that turn, the line's among them."""

    def as_json(self) -> dict[str, object]:
        return {
            **self.provenance.as_json(),
            "turn": None if self.turn is None else self.turn.as_json(),
            "turn_missing": self.turn_missing,
            "turn_writes": [commit.as_json() for commit in self.writes],
        }


class Why:
    """Traces the lines of one workspace, with the sessions of its state folder."""

    def __init__(self, store: GitStore, state_dir: Path, sessions: SessionStore | None = None):
        self.store = store
        self.provenances = Provenances(store)
        self.sessions = sessions or SessionStore(state_dir, clock=lambda: datetime.now(UTC))

    @classmethod
    def at(cls, workspace: Path, state_dir: Path) -> Why:
        """The lines of the workspace at `workspace`, its sessions under `state_dir`."""
        return cls(GitStore(workspace), state_dir)

    def line(self, path: str, line: int) -> Traced:
        """Line `line` of `path`; raises `ProvenanceError` when it cannot be looked up."""
        provenance = self.provenances.of(path, line)
        origin = provenance.origin
        if origin is None or origin.commit.session is None or origin.commit.turn is None:
            return Traced(provenance)
        return self._with_turn(provenance, origin)

    def turn(self, session_id: str, turn: int) -> tuple[PastTurn | str, list[HistoryCommit]]:
        """A turn (or why it cannot be shown) and the commits it made."""
        return past_turn(self.sessions, session_id, turn), turn_writes(self.store, session_id, turn)

    def _with_turn(self, provenance: Provenance, origin: Step) -> Traced:
        session, number = origin.commit.session, origin.commit.turn
        assert session is not None and number is not None
        found = past_turn(self.sessions, session, number, origin.commit.sha, origin.text)
        writes = turn_writes(self.store, session, number, around=origin.commit.when)
        if isinstance(found, str):
            return Traced(provenance, None, found, writes)
        return Traced(provenance, found, None, writes)
