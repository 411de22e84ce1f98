"""A session's record: the counters the flush gate and the meters read, saved as one JSON file.

The flush cycle (`FlushCycle`) is the one owner of the counters that make "at most one flush per
compaction cycle" hold across restarts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass
class FlushCycle:
    """Where the memory flush stands in the current compaction cycle: the one owner of the
    counters that make "at most one flush per cycle" hold across restarts.

    A cycle runs from one compaction to the next (`compactions` counts them). A flush that
    wrote or had nothing to write settles the cycle; so does giving up after `max_failures`.
    """

    compactions: int = 0
    flushed_in: int | None = None
    """The cycle whose flush settled it; None when no flush ever did."""
    flushed_at: str | None = None
    """When (ISO): set with `flushed_in`."""
    failures: int = 0
    """Consecutive failed flushes in this cycle."""
    last_error: str | None = None
    flushed_after: int | None = None
    """How many messages the conversation held when that flush ran: what came after it, the
    flush has not seen (None: a record from before this was kept)."""

    def flushed(self) -> bool:
        """Whether a flush already settled this cycle.

        A record that says cycle 0 but no time is a legacy record with an implicit 0: it must
        not suppress the very first flush (OpenClaw's fix for rows written before the field
        existed)."""
        if self.flushed_in is None or self.flushed_in != self.compactions:
            return False
        return self.compactions != 0 or self.flushed_at is not None

    def exhausted(self, max_failures: int) -> bool:
        return self.failures >= max_failures

    def succeeded(self, at: str, messages: int) -> None:
        """A flush of the first `messages` messages wrote what mattered (or had nothing to
        write): the cycle is settled."""
        self.flushed_in, self.flushed_at, self.flushed_after = self.compactions, at, messages
        self.failures, self.last_error = 0, None

    def failed(self, error: str, at: str, max_failures: int) -> bool:
        """A flush failed; True when that was the last try of this cycle (it is then settled,
        so compaction goes ahead without it)."""
        self.failures += 1
        self.last_error = error
        if self.exhausted(max_failures):
            self.flushed_in, self.flushed_at = self.compactions, at
            return True
        return False

    def compacted(self) -> None:
        """A compaction ended the cycle: the next one starts with no failures."""
        self.compactions += 1
        self.failures = 0


_LEGACY_CYCLE = {
    "compaction_count": "compactions",
    "memory_flush_compaction_count": "flushed_in",
    "memory_flush_at": "flushed_at",
    "flush_failures": "failures",
    "flush_last_error": "last_error",
}
"""Records written before the flush cycle was one object kept its counters flat."""


@dataclass
class SessionRecord:
    """The counters of one session; the flush gate and the meters read these."""

    session_id: str
    created_at: str
    updated_at: str
    model: str
    turns: int = 0
    cycle: FlushCycle = dataclasses.field(default_factory=FlushCycle)
    prompt_tokens_total: int = 0
    completion_tokens_total: int = 0
    needs_reinjection: bool = False
    """A compaction happened: the next call gets the AGENTS.md sections again."""
    needs_prelude: bool = False
    """A new session: the first call gets recent daily notes as background."""

    @property
    def compaction_count(self) -> int:
        return self.cycle.compactions

    @classmethod
    def from_dict(cls, data: Any) -> SessionRecord:
        """The record `data` (a parsed record file) holds.

        Raises:
            ValueError: `data` is no record: not an object, a field missing, or of a wrong type
                (a number where a name should be, say).
        """
        if not isinstance(data, dict):
            raise ValueError(f"a record is a JSON object, not {type(data).__name__}")
        cycle = data.get("cycle") or {}
        if not isinstance(cycle, dict):
            raise ValueError(f"field cycle: a JSON object, not {type(cycle).__name__}")
        cycle = dict(cycle)
        for old, new in _LEGACY_CYCLE.items():
            if old in data:
                cycle.setdefault(new, data[old])
        values = {k: v for k, v in data.items() if k in _TYPES and k != "cycle"}
        _check(values, _TYPES)
        _check(cycle, _CYCLE_TYPES)
        try:
            return cls(**values, cycle=FlushCycle(**cycle))
        except TypeError as error:  # a field missing
            raise ValueError(str(error)) from None


_TYPES: dict[str, tuple[type, ...]] = {
    "session_id": (str,),
    "created_at": (str,),
    "updated_at": (str,),
    "model": (str,),
    "turns": (int,),
    "cycle": (dict,),
    "prompt_tokens_total": (int,),
    "completion_tokens_total": (int,),
    "needs_reinjection": (bool,),
    "needs_prelude": (bool,),
}
_CYCLE_TYPES: dict[str, tuple[type, ...]] = {
    "compactions": (int,),
    "flushed_in": (int, type(None)),
    "flushed_at": (str, type(None)),
    "flushed_after": (int, type(None)),
    "failures": (int,),
    "last_error": (str, type(None)),
}


def _check(values: dict[str, Any], types: dict[str, tuple[type, ...]]) -> None:
    for name in list(values):
        if name not in types:
            del values[name]  # a field of another version: not ours to read
            continue
        value, allowed = values[name], types[name]
        # bool is an int to Python: a count of True is as wrong as one of "3"
        if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
            raise ValueError(f"field {name}: {type(value).__name__} {value!r:.40}")
