"""The text rules behind the offline demo brain: reading messages, spotting facts, questions and
identifiers, picking the line that answers a question, and writing a compaction summary.

Pure functions over strings, no litellm and no clock, so every rule is deterministic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shell import prompts

# --- reading messages (dicts or litellm Message objects) --------------------------------------


def field(item: Any, key: str) -> Any:
    """`item[key]` for a mapping, `item.key` for an object, None when absent."""
    if isinstance(item, Mapping):
        return item.get(key)
    return getattr(item, key, None)


def content_text(content: Any) -> str:
    """Message content as plain text (OpenAI content parts are joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = [field(part, "text") if not isinstance(part, str) else part for part in content]
        return "\n".join(p for p in parts if isinstance(p, str))
    return str(content)


def message_text(message: Any) -> str:
    return content_text(field(message, "content"))


@dataclass(frozen=True)
class CallInfo:
    """A tool call the assistant made earlier in the messages."""

    id: str
    name: str
    arguments: str


def tool_calls_of(message: Any) -> list[CallInfo]:
    calls = []
    for call in field(message, "tool_calls") or ():
        function = field(call, "function")
        calls.append(
            CallInfo(
                id=str(field(call, "id") or ""),
                name=str(field(function, "name") or ""),
                arguments=str(field(function, "arguments") or ""),
            )
        )
    return calls


# --- sentences, questions and facts -----------------------------------------------------------

_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")

QUESTION_WORDS = frozenset(
    "when what who where which how did do does is are was were whats what's".split()
)

_REMEMBER = re.compile(
    r"^(?:(?:please|hey|ok|okay|so|and)[,!]?\s+)*(?:can you\s+|could you\s+)?"
    r"(?:remember|note|don't forget|do not forget|keep in mind)\b[\s:,-]*(?:that\b\s*)?",
    re.IGNORECASE,
)
_STATED = re.compile(
    r"^(?:(?:i|we)\s+(?:really\s+|now\s+|have\s+|'ve\s+)?"
    r"(?:prefer|decided|chose|agreed|always|never|will always|will never)\b"
    r"|(?:i've|we've)\s+decided\b"
    r"|(?:our|my)\s+[\w' -]{1,40}?\s+(?:is|are|was|will be)\b"
    r"|from now on\b"
    r"|(?:the\s+)?decision\b)",
    re.IGNORECASE,
)
_DURABLE = re.compile(
    r"\b(?:remember|prefer|prefers|preference|decided|decision|agreed|chose|from now on|always"
    r"|never|deadline|due|todo|to-do|need to|needs to|must|remind|don't forget|we will|we'll"
    r"|by (?:mon|tue|wed|thu|fri|sat|sun)\w*|(?:our|my) [\w'-]+(?: [\w'-]+)? (?:is|are))\b",
    re.IGNORECASE,
)


def sentences(text: str) -> list[str]:
    """Split text into sentences and lines, without list bullets or surrounding spaces."""
    found = []
    for piece in _SENTENCE_BREAK.split(text):
        piece = _BULLET.sub("", piece).strip()
        if piece:
            found.append(piece)
    return found


def collapse(text: str) -> str:
    return " ".join(text.split())


def is_question(text: str) -> bool:
    text = text.strip()
    if not text:
        return False
    first = text.split()[0].lower().strip(",.!:;")
    return text.endswith("?") or first in QUESTION_WORDS


def question_of(text: str) -> str:
    """The last question sentence in `text`, or all of it when none ends with '?'."""
    asked = [s for s in sentences(text) if s.endswith("?")]
    return asked[-1] if asked else collapse(text)


def _clean_fact(text: str) -> str:
    return collapse(text).rstrip(".! ").strip()


def remembered_fact(text: str) -> str | None:
    """The fact in a "remember that …" request, or None when `text` is not one."""
    text = text.strip()
    if text.endswith("?"):
        return None
    match = _REMEMBER.match(text)
    if match is None:
        return None
    return _clean_fact(text[match.end() :]) or None


def stated_facts(text: str) -> list[str]:
    """Sentences that state a preference or decision ("I prefer …", "our X is Y", …)."""
    return [_clean_fact(s) for s in sentences(text) if not s.endswith("?") and _STATED.match(s)]


def durable_facts(text: str) -> list[str]:
    """Everything in a user message worth keeping past compaction: remembered facts, stated
    preferences and decisions, deadlines, todos, and sentences carrying identifiers."""
    if (fact := remembered_fact(text)) is not None:
        return [fact]
    facts = []
    for sentence in sentences(text):
        if is_question(sentence):
            continue
        if remembered := remembered_fact(sentence):
            facts.append(remembered)
        elif _STATED.match(sentence) or _DURABLE.search(sentence) or identifiers(sentence):
            facts.append(_clean_fact(sentence))
    return [f for f in facts if f]


def normalized(text: str) -> str:
    """Lower-case words joined by single spaces, for "is this already known" checks."""
    return " ".join(re.findall(r"\w+", text.lower()))


def json_strings(text: str) -> str:
    """All string values of a JSON document joined by newlines; the text itself if not JSON."""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return text

    def walk(node: Any) -> Iterator[str]:
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            for item in node.values():
                yield from walk(item)
        elif isinstance(node, list):
            for item in node:
                yield from walk(item)

    return "\n".join(walk(value))


# --- identifiers ------------------------------------------------------------------------------

_MORE_IDENTIFIERS = re.compile(
    r"""
      \bv?\d+(?:\.\d+){2,}(?:[-+][\w.]+)?\b | \bv\d+\.\d+\b      # versions: 1.106.2, v2.4
    | [\w.+-]+@[\w-]+(?:\.[\w-]+)+                             # e-mail addresses
    | (?<![\w/.~:-])[\w.-]+(?:/[\w.-]+){2,}/?                   # relative paths: src/shell/x
    | \b(?=[0-9a-f]*\d)[0-9a-f]{7,64}\b                           # hashes and long numbers
    | \b(?:[01]?\d|2[0-3]):[0-5]\d\s?[ap]m\b                      # times: 2:30pm
    """,
    re.VERBOSE | re.IGNORECASE,
)


def identifiers(text: str) -> list[str]:
    """Opaque tokens a summary must keep verbatim, in order of first appearance.

    Everything compaction's quality check counts as an identifier (ticket ids, error codes,
    hashes, paths, URLs, host:port, times, dates), so a demo summary never fails that check,
    plus versions, e-mail addresses, deeper relative paths and long numbers."""
    from shell.compaction import extract_identifiers

    more = [m.group(0).rstrip(".,;:!?") for m in _MORE_IDENTIFIERS.finditer(text)]
    found = dict.fromkeys([*extract_identifiers(text, limit=10**6), *more])
    # A date inside "2026-03-03 16:05" or a hash inside a path is kept by keeping the whole.
    kept = [i for i in found if not any(i != other and i in other for other in found)]
    return sorted(kept, key=text.find)


# --- picking the line that answers a question -------------------------------------------------

_STOPWORDS = frozenset(
    """a an the is are was were be been am do does did what whats when where who whom which how
    why we i you he she they it its our my your their me us to of in on at by for and or but
    about with from that this these those there here any some remember tell know please can
    could would should will shall have has had not no yes if then so than as just also""".split()
)


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def keywords(text: str) -> set[str]:
    return {_stem(w) for w in re.findall(r"\w+", text.lower()) if w not in _STOPWORDS}


def display_line(line: str) -> str:
    """A memory line as it reads in an answer: no bullet, no surrounding spaces."""
    return _BULLET.sub("", line).strip()


@dataclass(frozen=True)
class Candidate:
    """One line of recalled memory, with where it came from."""

    text: str
    source: str
    """A citation such as memory/2026-03-03.md#L4."""


def best_line(question: str, candidates: Iterable[Candidate]) -> tuple[Candidate, int] | None:
    """The candidate sharing the most keywords with the question (earliest wins a tie), and that
    count; None when there are no content lines at all."""
    wanted = keywords(question)
    best: tuple[Candidate, int] | None = None
    for candidate in candidates:
        line = display_line(candidate.text)
        if not line or line.startswith("#") or set(line) <= set("-=*_ "):
            continue
        score = len(wanted & keywords(line))
        if best is None or score > best[1]:
            best = (candidate, score)
    return best


# --- the compaction summary -------------------------------------------------------------------

MAX_BULLETS = 12
IDENTIFIERS_PER_BULLET = 10
LATEST_ASK_CHARS = 1200

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
_CONSTRAINT = re.compile(
    r"\b(?:never|always|don't(?! forget)|do not|must not|prefer|prefers|avoid|not allowed)\b",
    re.IGNORECASE,
)
_RETRY_NOTE = re.compile(
    r"Your previous summary failed a quality check:.*?fixing these problems\.", re.DOTALL
)
_LATEST = "Latest user message: "


def _between(text: str, tag: str) -> str | None:
    match = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.DOTALL)
    return match.group(1) if match else None


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


def _shorten(text: str, limit: int = 240) -> str:
    text = collapse(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _is_ask(sentence: str) -> bool:
    return sentence.endswith("?") or bool(_REQUEST.match(sentence))


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


def summarise(request: str) -> str:
    """A structured summary of the <conversation> in a summariser request, merged with its
    <previous-summary>, under exactly `prompts.SUMMARY_HEADINGS`."""
    transcript = _between(request, "conversation")
    if transcript is None:
        transcript = _RETRY_NOTE.sub("", request.replace(prompts.SUMMARY_MARKER, ""))
    previous_text = _between(request, "previous-summary") or ""
    previous = _previous_sections(previous_text)
    entries = transcript_entries(transcript)
    user_texts = [text for role, text in entries if role == "user" and text.strip()]
    latest = user_texts[-1] if user_texts else None
    h_decisions, h_todos, h_rules, h_asks, h_ids = prompts.SUMMARY_HEADINGS

    found: dict[str, list[str]] = {
        h: [i for i in items if not i.startswith(_LATEST)] for h, items in previous.items()
    }
    found[h_asks] += [
        ask for i in previous[h_asks] if (ask := i.removeprefix(_LATEST)) != i and _is_ask(ask)
    ]
    for role, text in entries:
        for sentence in sentences(text):
            heading = _heading_for(role, sentence)
            if heading and not (heading == h_asks and text is latest):
                found[heading].append(_shorten(sentence))
    body = {h: _latest_unique(found[h], MAX_BULLETS) for h in (h_decisions, h_todos, h_rules)}
    if latest is None:
        body[h_asks] = _latest_unique(found[h_asks], MAX_BULLETS)
    else:  # the newest user message is kept whole: it is the ask most likely still open
        newest = _LATEST + _shorten(latest, LATEST_ASK_CHARS)
        body[h_asks] = [*_latest_unique(found[h_asks], MAX_BULLETS - 1), newest]

    previous_ids = [i.strip("` ") for item in previous[h_ids] for i in item.split(", ")]
    ids = _latest_unique(
        [*previous_ids, *identifiers(previous_text), *identifiers(transcript)],
        MAX_BULLETS * IDENTIFIERS_PER_BULLET,
    )
    body[h_ids] = [
        ", ".join(ids[i : i + IDENTIFIERS_PER_BULLET])
        for i in range(0, len(ids), IDENTIFIERS_PER_BULLET)
    ]
    blocks = []
    for heading in prompts.SUMMARY_HEADINGS:
        bullets = body[heading] or ["none"]
        blocks.append(heading + "\n" + "\n".join(f"- {b}" for b in bullets))
    return "\n\n".join(blocks)
