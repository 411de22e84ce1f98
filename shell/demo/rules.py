"""The offline demo brain's turn decisions: what it says or which tools it calls for one model
call, decided purely from the messages and the tools offered.

It saves facts with memory_append at their turn ("remember that …", and every plain statement
of fact, see `shell.text.user_facts`), recalls them with memory_search (or memory_get),
answers with a citation, and takes part in the pre-compaction flush, which keeps what no turn
saved (a fact told along with a question, a todo); requests for a compaction summary go to
`shell.demo.summary`, dreaming's distilling call to `shell.demo.dreams`; work on a project
folder (read, remember, run the tests) to `shell.demo.project`.
No litellm and no clock (today's date is injectable), so the same input always gives the same
reply.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from datetime import date, datetime
from typing import Any

from shell import prompts
from shell.demo.dreams import dream_reply
from shell.demo.messages import (
    DemoReply,
    PlannedCall,
    field,
    last_user_index,
    last_user_text,
    latest_tool_results,
    message_text,
    offers_scope,
    tool_calls_of,
    tool_names,
)
from shell.demo.project import after_project_tools, is_project_request, project_turn
from shell.demo.recalled import recall_answer
from shell.demo.summary import summary_reply
from shell.memory.paths import daily_note
from shell.scopes.routing import about_user
from shell.text import collapse, normalized, sentences, short_sha
from shell.text.small_talk import SmallTalk, small_talk
from shell.text.user_facts import durable_facts, is_question, turn_facts

MAX_FLUSH_FACTS = 20
_CONTROL_HEADERS = (
    prompts.FLUSH_MARKER,
    prompts.SUMMARY_MARKER,
    prompts.PRELUDE_HEADER,
    prompts.REINJECTION_HEADER,
    prompts.COMPACTED_PREFIX,
)
_ASKS_ABOUT = re.compile(
    r"^\W*(?:please\s+|can you\s+|could you\s+)?(?:tell|remind|show)\s+me\s+"
    r"(?:about|of|what|where|when|who|how|which)\b",
    re.IGNORECASE,
)
"""A request worded as an order ("tell me about the build server"): a question all the same."""
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


_SMALL_TALK: dict[SmallTalk, str] = {
    "greeting": "Hello! I'm Cairn's offline demo brain. Tell me something to keep with "
    '"remember that …", and ask me about it later.',
    "how_are_you": "I'm doing well, thanks for asking! What can I do for you?",
    "thanks": "You're welcome!",
    "joke": "Why did the note never get lost? Because every word of it was committed.",
    "story": "Once upon a time someone wrote a fact down in a Markdown file, git kept it, and "
    "years later it was still there when they asked. The end.",
    "acknowledgement": "Okay. Anything you'd like me to remember?",
}
"""Canned replies to small talk (`shell.text.small_talk`): no memory search for a greeting."""


def _say(text: str) -> DemoReply:
    return DemoReply(text=text)


def _call(name: str, **arguments: Any) -> DemoReply:
    return DemoReply(tool_calls=(PlannedCall(name, arguments),))


# --- questions and tool payloads -----------------------------------------------------------


def question_of(text: str) -> str:
    """The last question sentence in `text`, or all of it when none ends with '?'."""
    asked = [s for s in sentences(text) if s.endswith("?")]
    return asked[-1] if asked else collapse(text)


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
    if any(prompts.DREAM_MARKER in s for s in systems):
        return _say(dream_reply(messages))
    if any(prompts.FLUSH_MARKER in s for s in systems) or prompts.FLUSH_MARKER in last_user:
        return _flush_turn(messages, names)
    role = field(messages[-1], "role") if messages else None
    if role == "tool":
        return _after_tools(messages)
    if role == "user":
        return _user_turn(last_user, messages, names, today, scoped=offers_scope(tools))
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
    text: str,
    messages: Sequence[Any],
    names: set[str],
    today: Callable[[], date] | None,
    *,
    scoped: bool = False,
) -> DemoReply:
    """`scoped`: memory_append takes a scope, and facts all about the user go to "user"."""
    if kind := small_talk(text):
        return _say(_SMALL_TALK[kind])
    if (project := project_turn(text, names)) is not None:
        return project
    facts = turn_facts(text)
    if not facts and (is_question(text) or _ASKS_ABOUT.match(text)):
        if "memory_search" in names:
            return _call("memory_search", query=question_of(text))
        if "memory_get" in names:
            daily = daily_note(_today(messages, today))
            return DemoReply(
                tool_calls=(
                    PlannedCall("memory_get", {"path": "MEMORY.md"}),
                    PlannedCall("memory_get", {"path": daily}),
                )
            )
        return _say("I would look that up in memory, but no memory tools are available right now.")
    if facts:
        if "memory_append" in names:
            lines = _append_lines(facts)
            if scoped and all(about_user(line) for line in lines.split("\n")):
                return _call("memory_append", text=lines, scope="user")
            return _call("memory_append", text=lines)
        return _say("I would save that, but memory_append is not available right now.")
    return _say(_chat_reply(text))


# --- the pre-compaction flush -----------------------------------------------------------------


def _is_control(message: Any) -> bool:
    text = message_text(message)
    return field(message, "role") == "system" or any(h in text for h in _CONTROL_HEADERS)


def _pending_turn_facts(messages: Sequence[Any]) -> list[str]:
    """The facts the coming turn saves itself. A flush that runs before a turn's model call sees
    that turn's user message last (compaction always keeps it); the turn saves its facts at
    once, where the user sees them, so the flush leaves them to it."""
    chat = [m for m in messages if not _is_control(m)]
    if chat and field(chat[-1], "role") == "user":
        return turn_facts(message_text(chat[-1]))
    return []


WRITES = frozenset({"memory_append", "memory_write"})


def _without_query(result: str) -> str:
    """A tool result without the query it echoes: memory_search repeats what was asked, which
    is not what memory holds."""
    try:
        value = json.loads(result)
    except (json.JSONDecodeError, TypeError):
        return result
    if isinstance(value, dict):
        value.pop("query", None)
    return json.dumps(value)


def _flush_turn(messages: Sequence[Any], names: set[str]) -> DemoReply:
    start = last_user_index(messages)
    already_acted = any(
        field(m, "role") == "tool" or tool_calls_of(m) for m in messages[start + 1 :]
    )
    if already_acted or "memory_append" not in names:
        return _say(prompts.NO_REPLY)
    known: list[str] = _pending_turn_facts(messages)
    stated: list[str] = []
    for message in messages:
        role, text = field(message, "role"), message_text(message)
        if _is_control(message):
            known.append(text)
        elif role == "user" and not is_project_request(text):
            stated.extend(durable_facts(text))
        elif role == "tool":
            known.append(json_strings(_without_query(text)))
        for call in tool_calls_of(message):
            if call.name in WRITES:  # a search's query is what was asked, not what was kept
                known.append(json_strings(call.arguments))
    memory = normalized("\n".join(known))
    fresh = [fact for fact in stated if normalized(fact) not in memory]
    if not fresh:
        return _say(prompts.NO_REPLY)
    return _call("memory_append", text=_append_lines(fresh[:MAX_FLUSH_FACTS]))


# --- after tool results -----------------------------------------------------------------------


def _after_tools(messages: Sequence[Any]) -> DemoReply:
    results = latest_tool_results(messages)
    if (project := after_project_tools(last_user_text(messages), results)) is not None:
        return project
    succeeded = [r for r in results if r.error is None]
    appended = [r for r in succeeded if r.name == "memory_append"]
    recalled = [r for r in succeeded if r.name in ("memory_search", "memory_get")]
    if appended:
        return _say(_append_confirmation(appended[-1].payload()))
    if recalled:
        question = question_of(last_user_text(messages))
        return _say(recall_answer(question, recalled))
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
        return f"Noted — saved to {path} (commit {short_sha(commit)})."
    reason = payload.get("commitError") or "no commit was made"
    return f"Noted — saved to {path}, but not committed ({reason})."
