"""The offline demo brain's turn decisions: what it says or which tools it calls for one model
call, decided purely from the messages and the tools offered.

It saves facts with memory_append, recalls them with memory_search (or memory_get), answers
with a citation, and takes part in the pre-compaction flush; requests for a compaction summary
go to `shell.demo_summary`. No litellm and no clock (today's date is injectable), so the same
input always gives the same reply.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from shell import prompts
from shell.demo import (
    DemoReply,
    PlannedCall,
    ToolResult,
    field,
    last_user_index,
    last_user_text,
    latest_tool_results,
    message_text,
    tool_calls_of,
    tool_names,
)
from shell.demo_summary import (
    collapse,
    display_line,
    identifiers,
    normalized,
    sentences,
    summary_reply,
)

MAX_FLUSH_FACTS = 20
_CONTROL_HEADERS = (
    prompts.FLUSH_MARKER,
    prompts.SUMMARY_MARKER,
    prompts.PRELUDE_HEADER,
    prompts.REINJECTION_HEADER,
    prompts.COMPACTED_PREFIX,
)
_DATE_LINE = re.compile(r"(?:Current date|Current time|Today is)\b[^\n\d]*(\d{4}-\d{2}-\d{2})")

_CHAT_REPLIES = (
    "Hi! I'm Cairn's offline demo brain, a small rule-based stand-in that needs no API key and "
    'no network. Try "remember that our deploy window is Friday 14:00", then ask me "when is '
    'our deploy window?".',
    "I'm the offline demo brain, so I follow a few simple rules rather than really thinking. "
    'Tell me something to keep with "remember that …", then ask about it later to see memory '
    "search at work.",
    "Cairn's offline demo brain here: a deterministic stand-in for a real model, so my answers "
    'stay short. Say "remember that …" to save a fact to today\'s note, then ask a question '
    "about it.",
    "Got it. As the offline demo brain I can't hold a real conversation, but I can show you the "
    'memory pipeline: try "remember that …", then ask me what you told me.',
)


def _say(text: str) -> DemoReply:
    return DemoReply(text=text)


def _call(name: str, **arguments: Any) -> DemoReply:
    return DemoReply(tool_calls=(PlannedCall(name, arguments),))


# --- questions and facts ----------------------------------------------------------------------

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


# --- deciding ---------------------------------------------------------------------------------


def decide(
    messages: Sequence[Any],
    tools: Sequence[Any] | None = None,
    *,
    today: Callable[[], date] | None = None,
) -> DemoReply:
    """Decide the demo brain's reply from the messages and the tools offered.

    Args:
        messages: OpenAI-style chat messages (dicts or litellm Message objects).
        tools: The tool schemas offered for this call.
        today: Fallback for today's date when no "Current date:" line is in the system prompt;
            defaults to the local date.
    """
    names = tool_names(tools)
    systems = [message_text(m) for m in messages if field(m, "role") == "system"]
    last_user = last_user_text(messages)
    if any(prompts.SUMMARY_MARKER in s for s in systems) or last_user.startswith(
        prompts.SUMMARY_MARKER
    ):
        return _say(summary_reply(messages))
    if any(prompts.FLUSH_MARKER in s for s in systems) or prompts.FLUSH_MARKER in last_user:
        return _flush_turn(messages, names)
    role = field(messages[-1], "role") if messages else None
    if role == "tool":
        return _after_tools(messages)
    if role == "user":
        return _user_turn(last_user, messages, names, today)
    return _say(_chat_reply(last_user))


def _today(messages: Sequence[Any], today: Callable[[], date] | None) -> str:
    stated = [
        match.group(1)
        for m in messages
        if field(m, "role") == "system"
        for match in _DATE_LINE.finditer(message_text(m))
    ]
    if stated:
        return stated[-1]
    return (today() if today else datetime.now().date()).isoformat()


def _chat_reply(prompt: str) -> str:
    digest = hashlib.sha256(prompt.encode("utf-8")).digest()
    return _CHAT_REPLIES[digest[0] % len(_CHAT_REPLIES)]


def _append_lines(facts: Sequence[str]) -> str:
    unique = list(dict.fromkeys(facts))
    return "\n".join(f"- {fact}" for fact in unique)


def _user_turn(
    text: str, messages: Sequence[Any], names: set[str], today: Callable[[], date] | None
) -> DemoReply:
    facts = [fact] if (fact := remembered_fact(text)) else []
    if not facts and is_question(text):
        if "memory_search" in names:
            return _call("memory_search", query=question_of(text))
        if "memory_get" in names:
            daily = f"memory/{_today(messages, today)}.md"
            return DemoReply(
                tool_calls=(
                    PlannedCall("memory_get", {"path": "MEMORY.md"}),
                    PlannedCall("memory_get", {"path": daily}),
                )
            )
        return _say("I would look that up in memory, but no memory tools are available right now.")
    facts = facts or stated_facts(text)
    if facts:
        if "memory_append" in names:
            return _call("memory_append", text=_append_lines(facts))
        return _say("I would save that, but memory_append is not available right now.")
    return _say(_chat_reply(text))


# --- the pre-compaction flush -----------------------------------------------------------------


def _flush_turn(messages: Sequence[Any], names: set[str]) -> DemoReply:
    start = last_user_index(messages)
    already_acted = any(
        field(m, "role") == "tool" or tool_calls_of(m) for m in messages[start + 1 :]
    )
    if already_acted or "memory_append" not in names:
        return _say(prompts.NO_REPLY)
    known: list[str] = []
    stated: list[str] = []
    for message in messages:
        role, text = field(message, "role"), message_text(message)
        if role == "system" or any(header in text for header in _CONTROL_HEADERS):
            known.append(text)
        elif role == "user":
            stated.extend(durable_facts(text))
        elif role == "tool":
            known.append(json_strings(text))
        for call in tool_calls_of(message):
            known.append(json_strings(call.arguments))
    memory = normalized("\n".join(known))
    fresh = [fact for fact in stated if normalized(fact) not in memory]
    if not fresh:
        return _say(prompts.NO_REPLY)
    return _call("memory_append", text=_append_lines(fresh[:MAX_FLUSH_FACTS]))


# --- after tool results -----------------------------------------------------------------------


def _after_tools(messages: Sequence[Any]) -> DemoReply:
    results = latest_tool_results(messages)
    succeeded = [r for r in results if r.error is None]
    appended = [r for r in succeeded if r.name == "memory_append"]
    recalled = [r for r in succeeded if r.name in ("memory_search", "memory_get")]
    if appended:
        return _say(_append_confirmation(appended[-1].payload()))
    if recalled:
        question = question_of(last_user_text(messages))
        return _say(_recall_answer(question, recalled))
    failures = [f"{r.name} failed: {r.error}" for r in results if r.error is not None]
    if failures:
        return _say(" ".join(_one_line(f) for f in failures))
    finished = ", ".join(dict.fromkeys(r.name for r in results)) or "the tool"
    return _say(f"Done: {finished} finished.")


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?")) else text + "."


def _append_confirmation(payload: dict[str, Any]) -> str:
    if not payload.get("appended"):
        return "Already in memory — nothing new to save."
    path = payload.get("path") or "memory"
    commit = payload.get("commit")
    if isinstance(commit, str) and commit:
        return f"Noted — saved to {path} (commit {commit[:7]})."
    reason = payload.get("commitError") or "no commit was made"
    return f"Noted — saved to {path}, but not committed ({reason})."


def _recall_candidates(results: Sequence[ToolResult]) -> Iterator[Candidate]:
    for result in results:
        payload = result.payload()
        if payload.get("nothingRelevant") is True:
            continue
        for hit in payload.get("results") or payload.get("hits") or ():
            if not isinstance(hit, dict):
                continue
            source = hit.get("citation") or (
                f"{hit.get('path')}#L{hit.get('startLine')}-L{hit.get('endLine')}"
            )
            for line in str(hit.get("snippet") or "").splitlines():
                yield Candidate(line, str(source))
        if isinstance(text := payload.get("text"), str):
            first = payload.get("from")
            first = first if isinstance(first, int) and first > 0 else 1
            for offset, line in enumerate(text.splitlines()):
                yield Candidate(line, f"{payload.get('path')}#L{first + offset}")


def _recall_answer(question: str, results: Sequence[ToolResult]) -> str:
    found = best_line(question, _recall_candidates(results))
    if found is None:
        return "I checked my memory and found nothing about that."
    candidate, score = found
    line = display_line(candidate.text)
    if score == 0:
        return (
            "I checked my memory and found nothing that clearly answers that. "
            f"The closest note: {line}\n\nSource: {candidate.source}"
        )
    return f"From memory: {line}\n\nSource: {candidate.source}"
