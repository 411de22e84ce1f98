"""What dreaming never proposes, however often it is recalled.

OpenClaw's users cleaned raw candidates, shell commands, headings with no body and score
metadata out of MEMORY.md every morning (#67580, #89444, #87080), and saw dreaming's own output
and prompts come back as memory (#79699, #77831). A proposal here is a sentence about the user's
world: `junk_kind` names what a text is instead, checked on the note a candidate comes from and
again on the text distilled from it. A chat line is judged by the fact it states (`facts`), so a
speaker's name, a vocative, emoji or quotes do not carry a reaction past the filters.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from shell import prompts
from shell.dreaming.facts import NOTE_MIN_WORDS, SMALL_TALK_WORDS, cleaned, fact_of, spoken
from shell.events import JunkKind
from shell.text import collapse, display_line, normalized
from shell.text.statements import is_question, is_statement_of_fact, remembered_fact, without_opener

_CONTROL = re.compile(
    "|".join(
        re.escape(marker)
        for marker in (
            prompts.FLUSH_MARKER,
            prompts.SUMMARY_MARKER,
            prompts.DREAM_MARKER,
            prompts.PRELUDE_HEADER,
            prompts.REINJECTION_HEADER,
            prompts.COMPACTED_PREFIX,
        )
    )
    + r"|\bNO_REPLY\b|pre-compaction memory flush|durable memories to disk"
    + r"|context summari[sz]ation assistant|startup context|post-compaction context",
    re.IGNORECASE,
)
"""Cairn's own control texts: the flush and summary prompts, the prelude, re-injection."""
_DREAMING = re.compile(
    r"<!--\s*/?cairn:dream|\b(?:light|rem|deep) sleep\b|\bdream diary\b|\bd-[0-9a-f]{6}\b",
    re.IGNORECASE,
)
_METADATA = re.compile(
    r"<!--|-->|\b(?:score|signals|recalls|importance|confidence|trigger|avg|source)\s*[=:]\s*\S"
    r"|^\s*[{\[]\s*\"|\bopenclaw-memory-promotion\b",
    re.IGNORECASE,
)
_SHELL_WORDS = frozenset(
    """git cd ls rm cp mv mkdir sudo pip pip3 npm npx yarn make docker kubectl curl wget ssh scp
    python python3 cat grep sed awk chmod chown systemctl apt apt-get brew tar export source
    echo uv poetry cargo go node psql""".split()
)
_CLI_TOKEN = re.compile(r"(?:^|\s)(?:-{1,2}[\w-]+|\S*/\S*|\||&&|>|\$\w+|\w+=\S+)")
_CITATION = re.compile(r"(?:\s+[—–-]+\s*Source:\s*\S+|\s*\(Source:[^)]*\))\s*$")
"""The `Source:` an accepted proposal's line carries in MEMORY.md (`review.memory_line`)."""
_TIMESTAMP = re.compile(r"^\[?\d{1,2}:\d{2}(?::\d{2})?\]?\s*[-–—:]?\s*")


def statement(text: str) -> str:
    """A note's unit as a plain statement: one line, no bullet or checkbox, no leading clock
    time, no "remember that"."""
    lines = [_CITATION.sub("", display_line(line)) for line in text.splitlines()]
    line = collapse(" ".join(line for line in lines if line))
    line = _TIMESTAMP.sub("", line)
    return remembered_fact(line) or line


def junk_kind(text: str, dreamed: Collection[str] = ()) -> JunkKind | None:
    """What `text` is when it is not a sentence about the user's world, else None.

    Args:
        text: a unit of a note (any lines) or a distilled proposal.
        dreamed: `normalized` lines dreaming wrote (DREAMS.md and its proposals).
    """
    raw = "\n".join(_CITATION.sub("", line) for line in text.strip().splitlines())
    if _CONTROL.search(raw):
        return "control"
    line = statement(raw)
    if _DREAMING.search(raw) or (dreamed and normalized(line) in dreamed):
        return "dreaming"
    if "[REDACTED" in raw:
        return "redacted"
    if _METADATA.search(raw):
        return "metadata"
    if raw.startswith("#") and "\n" not in raw:
        return "heading"
    if _is_command(raw, line):
        return "command"
    if fact_of(line) is not None:
        return None
    said = spoken(cleaned(line)).said
    words = normalized(said).split()
    if not words or words[0] in SMALL_TALK_WORDS:
        return "small_talk"
    if said.endswith("?") or is_question(said):
        return "question"
    return "not_a_fact"


def _is_command(raw: str, line: str) -> bool:
    """A shell command or code, or a request to the assistant ("tell me a joke")."""
    if raw.startswith(("```", "~~~", "    ")) or line.startswith(("$ ", "> $", "# $")):
        return True
    if re.fullmatch(r"`[^`]+`", line):
        return True
    first, _, rest = line.partition(" ")
    if first.lower() in _SHELL_WORDS and (not rest or _CLI_TOKEN.search(rest)):
        return True
    fact = is_statement_of_fact(line, min_words=NOTE_MIN_WORDS)
    return bool(line) and not fact and _asks_the_assistant(line)


def _asks_the_assistant(line: str) -> bool:
    first = normalized(without_opener(line)).split()[:1]
    return bool(first) and first[0] in {
        "tell",
        "show",
        "give",
        "run",
        "open",
        "write",
        "make",
        "please",
        "can",
        "could",
        "would",
        "let",
        "lets",
        "remind",
        "explain",
        "find",
        "search",
    }
