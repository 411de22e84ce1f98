"""Cairn's offline demo brain: a deterministic litellm custom provider for "cairn-demo/brain".

It needs no API key and no network, yet drives the whole memory pipeline: it saves facts with
memory_append, recalls them with memory_search (or memory_get), answers with a citation, takes
part in the pre-compaction flush, and writes the compaction summary. Every reply is decided
purely from the messages and the tools offered, so the same input always gives the same output.

`DemoBrain` subclasses `litellm.CustomLLM`, so it only exists once litellm is imported: the
class is built on first access (`from shell.demo import DemoBrain`), which imports litellm.
Importing this module alone does not.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from shell import prompts
from shell.context import count_tokens
from shell.demo_rules import (
    Candidate,
    best_line,
    display_line,
    durable_facts,
    field,
    is_question,
    json_strings,
    message_text,
    normalized,
    question_of,
    remembered_fact,
    stated_facts,
    summarise,
    tool_calls_of,
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


@dataclass(frozen=True)
class PlannedCall:
    """A tool call the demo brain decided to make."""

    name: str
    arguments: dict[str, Any]

    @property
    def arguments_json(self) -> str:
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True)
class DemoReply:
    """What the demo brain says for one model call: text, or tool calls, never both."""

    text: str = ""
    tool_calls: tuple[PlannedCall, ...] = ()

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"


def _say(text: str) -> DemoReply:
    return DemoReply(text=text)


def _call(name: str, **arguments: Any) -> DemoReply:
    return DemoReply(tool_calls=(PlannedCall(name, arguments),))


# --- deciding ---------------------------------------------------------------------------------


def tool_names(tools: Sequence[Any] | None) -> set[str]:
    """Names of the function tools offered to the model."""
    names = set()
    for tool in tools or ():
        if isinstance(name := field(field(tool, "function"), "name"), str):
            names.add(name)
    return names


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
    last_user = _last_user_text(messages)
    if any(prompts.SUMMARY_MARKER in s for s in systems) or last_user.startswith(
        prompts.SUMMARY_MARKER
    ):
        return _say(summarise(_summary_request(messages)))
    if any(prompts.FLUSH_MARKER in s for s in systems) or prompts.FLUSH_MARKER in last_user:
        return _flush_turn(messages, names)
    role = field(messages[-1], "role") if messages else None
    if role == "tool":
        return _after_tools(messages)
    if role == "user":
        return _user_turn(last_user, messages, names, today)
    return _say(_chat_reply(last_user))


def _last_user_index(messages: Sequence[Any]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if field(messages[index], "role") == "user":
            return index
    return -1


def _last_user_text(messages: Sequence[Any]) -> str:
    index = _last_user_index(messages)
    return message_text(messages[index]).strip() if index >= 0 else ""


def _summary_request(messages: Sequence[Any]) -> str:
    users = [message_text(m) for m in messages if field(m, "role") == "user"]
    with_conversation = [u for u in users if "<conversation>" in u]
    return with_conversation[-1] if with_conversation else "\n\n".join(users)


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
    start = _last_user_index(messages)
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


@dataclass(frozen=True)
class _Result:
    name: str
    content: str

    @property
    def error(self) -> str | None:
        text = self.content.strip()
        return text.removeprefix("Error:").strip() if text.startswith("Error") else None

    def payload(self) -> dict[str, Any]:
        try:
            value = json.loads(self.content)
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}


def _latest_results(messages: Sequence[Any]) -> list[_Result]:
    names = {call.id: call.name for m in messages for call in tool_calls_of(m)}
    results: list[_Result] = []
    for message in reversed(messages):
        if field(message, "role") != "tool":
            break
        name = field(message, "name") or names.get(str(field(message, "tool_call_id")), "tool")
        results.append(_Result(str(name), message_text(message)))
    return results[::-1]


def _after_tools(messages: Sequence[Any]) -> DemoReply:
    results = _latest_results(messages)
    succeeded = [r for r in results if r.error is None]
    appended = [r for r in succeeded if r.name == "memory_append"]
    recalled = [r for r in succeeded if r.name in ("memory_search", "memory_get")]
    if appended:
        return _say(_append_confirmation(appended[-1].payload()))
    if recalled:
        question = question_of(_last_user_text(messages))
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


def _recall_candidates(results: Sequence[_Result]) -> Iterator[Candidate]:
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


def _recall_answer(question: str, results: Sequence[_Result]) -> str:
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


# --- usage and the litellm adapter ------------------------------------------------------------


def prompt_tokens(messages: Sequence[Any], tools: Sequence[Any] | None) -> int:
    """tiktoken count of every message's content, every tool call's arguments, and the tool
    schemas as JSON (`json.dumps(list(tools), sort_keys=True)`), each counted on its own."""
    total = 0
    for message in messages:
        total += count_tokens(message_text(message))
        total += sum(count_tokens(call.arguments) for call in tool_calls_of(message))
    if tools:
        total += count_tokens(json.dumps(list(tools), sort_keys=True))
    return total


def completion_tokens(reply: DemoReply) -> int:
    """tiktoken count of the reply text plus each tool call's arguments JSON."""
    return count_tokens(reply.text) + sum(count_tokens(c.arguments_json) for c in reply.tool_calls)


def usage_of(
    messages: Sequence[Any], tools: Sequence[Any] | None, reply: DemoReply
) -> dict[str, int]:
    prompt, completion = prompt_tokens(messages, tools), completion_tokens(reply)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def call_ids(messages: Sequence[Any], reply: DemoReply) -> list[str]:
    """Deterministic tool call ids, distinct across turns (they hash the conversation)."""
    digest = hashlib.sha256()
    for message in messages:
        digest.update(f"{field(message, 'role')}\0{message_text(message)}\0".encode())
    base = digest.hexdigest()[:12]
    return [f"call_demo_{base}_{index}" for index in range(len(reply.tool_calls))]


def _chunk(
    text: str = "",
    tool_use: dict[str, Any] | None = None,
    finish_reason: str = "",
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    return {
        "text": text,
        "tool_use": tool_use,
        "is_finished": bool(finish_reason),
        "finish_reason": finish_reason,
        "usage": usage,
        "index": 0,
    }


def stream_chunks(
    reply: DemoReply, usage: dict[str, int], ids: Sequence[str]
) -> Iterator[dict[str, Any]]:
    """The reply as litellm `GenericStreamingChunk` dicts: text word by word, each tool call's
    arguments in two pieces, then one finished chunk carrying finish_reason and usage."""
    for word in re.findall(r"\s*\S+\s*", reply.text):
        yield _chunk(word)
    for index, (call, call_id) in enumerate(zip(reply.tool_calls, ids, strict=True)):
        arguments = call.arguments_json
        cut = len(arguments) // 2
        for piece, first in ((arguments[:cut], True), (arguments[cut:], False)):
            function = {"name": call.name if first else None, "arguments": piece}
            tool_use = {"id": call_id if first else None, "type": "function", "index": index}
            yield _chunk(tool_use={**tool_use, "function": function})
    yield _chunk(finish_reason=reply.finish_reason, usage=usage)


@lru_cache(maxsize=1)
def _demo_brain_class() -> type:
    import litellm
    from litellm.types.utils import (
        ChatCompletionMessageToolCall,
        Choices,
        Function,
        Message,
        ModelResponse,
        Usage,
    )

    class DemoBrain(litellm.CustomLLM):  # type: ignore[misc, unused-ignore]
        """The offline demo brain as a litellm custom provider (register it under "cairn-demo").

        Args:
            today: Fallback for today's date when the system prompt states none.
        """

        def __init__(self, today: Callable[[], date] | None = None) -> None:
            super().__init__()
            self.today = today

        def _answer(
            self, messages: list[Any], kwargs: dict[str, Any]
        ) -> tuple[DemoReply, dict[str, int], list[str]]:
            tools = (kwargs.get("optional_params") or {}).get("tools") or []
            reply = decide(messages, tools, today=self.today)
            return reply, usage_of(messages, tools, reply), call_ids(messages, reply)

        def completion(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
            reply, usage, ids = self._answer(messages, kwargs)
            calls = [
                ChatCompletionMessageToolCall(
                    id=call_id,
                    type="function",
                    function=Function(name=call.name, arguments=call.arguments_json),
                )
                for call, call_id in zip(reply.tool_calls, ids, strict=True)
            ]
            message = Message(
                role="assistant", content=reply.text or None, tool_calls=calls or None
            )
            return ModelResponse(
                model=model,
                choices=[Choices(index=0, message=message, finish_reason=reply.finish_reason)],
                usage=Usage(**usage),
            )

        async def acompletion(
            self, model: str, messages: list[Any], *args: Any, **kwargs: Any
        ) -> Any:
            return self.completion(model, messages, *args, **kwargs)

        def streaming(
            self, model: str, messages: list[Any], *args: Any, **kwargs: Any
        ) -> Iterator[Any]:
            reply, usage, ids = self._answer(messages, kwargs)
            yield from stream_chunks(reply, usage, ids)

        async def astreaming(
            self, model: str, messages: list[Any], *args: Any, **kwargs: Any
        ) -> AsyncIterator[Any]:
            reply, usage, ids = self._answer(messages, kwargs)
            for chunk in stream_chunks(reply, usage, ids):
                yield chunk

    return DemoBrain


def __getattr__(name: str) -> Any:
    if name == "DemoBrain":
        return _demo_brain_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
