"""A compaction summary by rule: a rendered transcript (`shell.lifecycle.transcript`) and the
previous summary become a structured summary under exactly `prompts.SUMMARY_HEADINGS`, keeping
every identifier compaction's quality check looks for.

Compaction falls back on it when the model's summary fails the check twice or the model cannot
summarise at all, so a weak model cannot strand a session; the offline demo brain answers its
summariser requests with it. Pure functions over strings, no litellm and no clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from shell import prompts
from shell.text import collapse, normalized, sentences, shorten
from shell.text.identifiers import identifiers
from shell.text.small_talk import small_talk

# --- the compaction summary -------------------------------------------------------------------

MAX_BULLETS = 12
IDENTIFIERS_PER_BULLET = 10
LATEST_ASK_CHARS = 1200
BULLET_CHARS = 240

_ROLE_LINE = re.compile(  # "User: …", "Tool memory_search → …", "**Assistant**: …", "[user] …"
    r"^\s*(?:[-*]\s*)?(?:#+\s*)?(?:\*\*|\[|<)?(user|human|assistant|ai|tool|system)\b"
    r"(?:\s*\([^)]*\)|\s+[\w.-]+)?(?:\*\*|\]|>)?\s*(?::|>|→|->)\s?(.*)$",
    re.IGNORECASE,
)
_CALL_LINE = re.compile(r"^\s*Assistant called\b\s*(.*)$", re.IGNORECASE)
_REQUEST = re.compile(
    r"^(?:please|can you|could you|would you|will you|help|show|tell|find|write|fix|add|make|"
    r"check|explain|summari[sz]e|list|draft|update|create|remind|look up|search)\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(?:decided|decision|we will|we'll|we chose|chose|agreed|settled on|going with|"
    r"deploy window|approved|signed off)\b",
    re.IGNORECASE,
)
_ASSISTANT_DECISION = re.compile(
    r"\b(?:we decided|we agreed|we will|we'll|decided|agreed|settled on)\b", re.IGNORECASE
)
_TODO = re.compile(
    r"\b(?:todo|to-do|need to|needs to|must|should|remind|don't forget|follow up|action item)\b",
    re.IGNORECASE,
)
_CONSTRAINT = re.compile(  # a rule says what must or must not be done, not what someone likes
    r"\b(?:never|always|don't(?! forget)|do not|must|mustn't|should|shouldn't|avoid|"
    r"not allowed|make sure)\b",
    re.IGNORECASE,
)
_PROMISE = re.compile(
    r"^(?:(?:ok|okay|sure|got it|right|of course)\W+)?(?:i will|i'll|will do|on it|let me|"
    r"i'm going to|i am going to|i can do that)\b.{0,80}$",
    re.IGNORECASE | re.DOTALL,
)
"""An assistant reply that only promises to act: the ask it answers stays open."""
_QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”')
"""A quoted span in the assistant's words: an example or a suggestion, not a fact."""
_MEMORY_COMMIT = re.compile(r'"commit":\s*"([0-9a-f]{7,40})"|\(commit ([0-9a-f]{7,40})\)')
MEMORY_COMMITS = "memory commits: "
"""Starts the identifiers bullet of memory-write receipts, which the next summary drops."""
_LATEST = "Latest user message: "


def transcript_entries(transcript: str) -> list[tuple[str, str]]:
    """(role, text) pairs from a rendered transcript ("User: …" lines and their continuations).
    Text with no role lines at all counts as one user entry."""
    entries: list[tuple[str, list[str]]] = []
    for line in transcript.splitlines():
        if call := _CALL_LINE.match(line):
            entries.append(("call", [call.group(1)]))
        elif match := _ROLE_LINE.match(line):
            role = match.group(1).lower()
            role = {"human": "user", "ai": "assistant"}.get(role, role)
            entries.append((role, [match.group(2)]))
        elif entries:
            entries[-1][1].append(line)
    if not entries:
        return [("user", transcript)] if transcript.strip() else []
    return [(role, "\n".join(lines).strip()) for role, lines in entries]


def _previous_sections(summary: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {h: [] for h in prompts.SUMMARY_HEADINGS}
    current: str | None = None
    for line in summary.splitlines():
        stripped = line.strip()
        if stripped in sections:
            current = stripped
        elif current and stripped.startswith("- ") and stripped != "- none":
            sections[current].append(stripped[2:].strip())
    return sections


def _latest_unique(items: Iterable[str], limit: int) -> list[str]:
    seen: dict[str, str] = {}
    for item in items:
        key = normalized(item)
        if key:
            seen.pop(key, None)
            seen[key] = item
    return list(seen.values())[-limit:]


def _is_ask(sentence: str) -> bool:
    return sentence.endswith("?") or bool(_REQUEST.match(sentence))


def answered(entries: Sequence[tuple[str, str]]) -> list[bool]:
    """For each (role, text) entry, whether the assistant answered it: said something other
    than a promise ("I will.", "on it") before the next user message. An ask answered only
    with a promise is still an open task."""
    result, replied = [], False
    for role, text in reversed(entries):
        result.append(replied)
        if role == "assistant" and text.strip() and not _PROMISE.match(text.strip()):
            replied = True
        elif role == "user" and text.strip():
            replied = False
    return result[::-1]


def _heading_for(role: str, sentence: str) -> str | None:
    """The summary heading a transcript sentence belongs under, if any. The assistant's own
    words count only when they record a decision."""
    decisions, todos, rules, asks, _ = prompts.SUMMARY_HEADINGS
    if role == "user" and _is_ask(sentence):
        return asks
    if sentence.endswith("?") or role not in ("user", "assistant"):
        return None
    if role == "assistant":
        return decisions if _ASSISTANT_DECISION.search(sentence) else None
    if _CONSTRAINT.search(sentence):
        return rules
    if _DECISION.search(sentence):
        return decisions
    return todos if _TODO.search(sentence) else None


def grounded_text(entries: str | Sequence[tuple[str, str]]) -> str:
    """The text of a transcript (or of its entries) whose identifiers are facts of the
    conversation: what the user said, the calls made, what tools returned, and what the
    assistant said, less its canned words: its replies to small talk (but for decisions) and
    the examples it quotes (the demo's 'Try "remember that our deploy window is Friday
    14:00"' is no fact)."""
    if isinstance(entries, str):
        entries = transcript_entries(entries)
    kept, chatting = [], False
    for role, text in entries:
        if role == "user":
            chatting = small_talk(text) is not None
        if role != "assistant":
            kept.append(text)
        elif not chatting:
            kept.append(_QUOTED.sub(" ", text))
        else:  # a decision counts wherever it is said (as in the summary's Decisions)
            kept += [s for s in sentences(text) if _ASSISTANT_DECISION.search(s)]
    return "\n".join(kept)


def _last_user(entries: Sequence[tuple[str, str]]) -> int:
    return max(i for i, (role, text) in enumerate(entries) if role == "user" and text.strip())


def _receipts(identifiers_found: Sequence[str], transcript: str) -> list[str]:
    """The identifiers that are commits of memory writes: the memory tools' "commit" fields and
    the "(commit abc1234)" confirmations, full or short."""
    commits = {full or short for full, short in _MEMORY_COMMIT.findall(transcript)}
    return [i for i in identifiers_found if any(c.startswith(i) for c in commits)]


def _is_receipts(line: str) -> bool:
    return line.strip().startswith("- " + MEMORY_COMMITS)


def _without_receipts(summary: str) -> str:
    return "\n".join(line for line in summary.splitlines() if not _is_receipts(line))


def _receipts_of(summary: str) -> list[str]:
    return [
        commit
        for line in summary.splitlines()
        if _is_receipts(line)
        for commit in line.strip().removeprefix("- " + MEMORY_COMMITS).split(", ")
    ]


def summarise(
    transcript: str, previous_summary: str | None = None, *, same_compaction: bool = False
) -> str:
    """A structured summary of `transcript`, merged with the previous summary, under exactly
    `prompts.SUMMARY_HEADINGS`.

    The commits of memory writes in the conversation are kept verbatim (compaction's quality
    check looks for them) but in a bullet of their own that the next compaction drops: what they
    saved is in the notes, and carrying every commit forward grew the summary at each compaction
    until the compacted prompt stood above the flush threshold. Within one compaction
    (`same_compaction`: the previous summary is this compaction's summary of an earlier part)
    they are kept, since the check asks for those of the last messages, which may lie in the
    earlier part."""
    previous_text = _without_receipts(previous_summary or "")
    earlier_receipts = _receipts_of(previous_summary or "") if same_compaction else []
    previous = _previous_sections(previous_text)
    entries = transcript_entries(transcript)
    done_asks = answered(entries)
    user_texts = [text for role, text in entries if role == "user" and text.strip()]
    latest = user_texts[-1] if user_texts else None
    open_latest = (
        latest is not None and not done_asks[_last_user(entries)] and not small_talk(latest)
    )
    h_decisions, h_todos, h_rules, h_asks, h_ids = prompts.SUMMARY_HEADINGS

    found: dict[str, list[str]] = {
        h: [i for i in items if not i.startswith(_LATEST)] for h, items in previous.items()
    }
    found[h_asks] += [
        ask for i in previous[h_asks] if (ask := i.removeprefix(_LATEST)) != i and _is_ask(ask)
    ]
    for (role, text), done in zip(entries, done_asks, strict=True):
        if role == "user" and small_talk(text):
            continue  # "hi", "how are you today?", "tell me a joke": nothing to keep or answer
        for sentence in sentences(text):
            heading = _heading_for(role, sentence)
            if heading == h_asks and (done or text is latest):
                continue  # an answered ask is not pending; the open latest one comes whole
            if heading:
                found[heading].append(shorten(collapse(sentence), BULLET_CHARS))
    body = {h: _latest_unique(found[h], MAX_BULLETS) for h in (h_decisions, h_todos, h_rules)}
    if latest is None:  # a part without user messages keeps the last one a part before had
        carried = [i for i in previous[h_asks] if i.startswith(_LATEST)][-1:]
        body[h_asks] = [*_latest_unique(found[h_asks], MAX_BULLETS - len(carried)), *carried]
    elif open_latest:  # the newest user message, unanswered, is kept whole
        newest = _LATEST + shorten(collapse(latest), LATEST_ASK_CHARS)
        body[h_asks] = [*_latest_unique(found[h_asks], MAX_BULLETS - 1), newest]
    else:
        body[h_asks] = _latest_unique(found[h_asks], MAX_BULLETS)

    previous_ids = [i.strip("` ") for item in previous[h_ids] for i in item.split(", ")]
    found_now = identifiers(grounded_text(entries))
    receipts = list(dict.fromkeys([*earlier_receipts, *_receipts(found_now, transcript)]))
    ids = _latest_unique(
        [*previous_ids, *identifiers(previous_text), *(i for i in found_now if i not in receipts)],
        MAX_BULLETS * IDENTIFIERS_PER_BULLET,
    )
    body[h_ids] = [
        ", ".join(ids[i : i + IDENTIFIERS_PER_BULLET])
        for i in range(0, len(ids), IDENTIFIERS_PER_BULLET)
    ]
    if receipts:
        body[h_ids].append(MEMORY_COMMITS + ", ".join(receipts))
    blocks = []
    for heading in prompts.SUMMARY_HEADINGS:
        bullets = body[heading] or ["none"]
        blocks.append(heading + "\n" + "\n".join(f"- {b}" for b in bullets))
    return "\n\n".join(blocks)
