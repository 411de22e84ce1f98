"""The `[dreaming]` table of the settings (`shell.config` reads it, with the rest)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DreamSettings:
    """Dreaming (`shell.dreaming`), set in the config's `[dreaming]` table or by
    `CAIRN_DREAMING_<NAME>`. OpenClaw's defaults (openclaw-memory.md §7), except where noted."""

    enabled: bool = True
    """Off: no sweep runs and searches record no hits."""
    idle_minutes: float = 0.0
    """In the TUI, sweep after this many idle minutes (0: only `/dream`)."""
    light_lookback_days: int = 2
    light_dedupe_similarity: float = 0.9
    light_limit: int = 100
    rem_lookback_days: int = 7
    rem_min_confidence: float = 0.45
    rem_dedupe_similarity: float = 0.88
    rem_limit: int = 10
    min_score: float = 0.75
    min_recalls: int = 3
    min_queries: int = 3
    max_age_days: int = 30
    """Notes and recalls older than this count for nothing (an older note may have been
    overtaken since)."""
    limit: int = 10
    """At most this many proposals a sweep."""
    recency_half_life_days: float = 14.0
    max_proposal_tokens: int = 160
