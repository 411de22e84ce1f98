"""Compaction: cut the history on a turn boundary, summarise the old part, check the summary.

The old part becomes one summary message (a user message starting with
`prompts.COMPACTED_PREFIX`); the recent tail is kept verbatim. A summary that misses a required
heading, an exact identifier or the latest user ask gets one corrective retry; if that fails too
compaction falls back on a summary by rule (`shell.rule_summary`), under the same check, and the
receipt says so. Only when that fails too does the compaction fail, keeping the history as it
was. A bad summary is never stored.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from shell import prompts
from shell.calls import ModelCall
from shell.context import TokenCounter
from shell.events import (
    CompactionFailed,
    CompactionFinished,
    CompactionSkipped,
    CompactionStarted,
    CompactionTrigger,
    Event,
)
from shell.identifiers import extract_identifiers
from shell.messages import content_text
from shell.rule_summary import summarise
from shell.text import shorten

if TYPE_CHECKING:
    from shell.llm import LLM

TOOL_RESULT_CHARS = 1500
"""Tool results longer than this are shown to the summariser as head + tail."""
RECENT_MESSAGES = 10
ASK_OVERLAP = 0.3
MAX_ATTEMPTS = 2


# --- the summary message ---------------------------------------------------------------------


def summary_message(summary: str) -> dict[str, Any]:
    """The user-role message that stands for everything a compaction summarised."""
    return {"role": "user", "content": f"{prompts.COMPACTED_PREFIX}\n\n{summary}"}


def is_summary_message(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, str)
        and content.startswith(prompts.COMPACTED_PREFIX)
    )


def summary_text(message: dict[str, Any]) -> str:
    """The summary inside a summary message."""
    return str(message["content"])[len(prompts.COMPACTED_PREFIX) :].strip()


# --- the cut -------------------------------------------------------------------------------


def _pairs_intact(messages: Sequence[dict[str, Any]], cut: int) -> bool:
    """Whether cutting before `cut` keeps every tool call with its results.

    Tool results directly follow the assistant message that asked for them, so a cut separates
    a pair exactly when it lands on a tool message. This is positional on purpose: some
    providers reuse call ids ("call_0") across replies, so matching by id would mislead.
    """
    return 0 <= cut < len(messages) and messages[cut].get("role") != "tool"


def find_cut(
    messages: Sequence[dict[str, Any]], counter: TokenCounter, keep_tail_tokens: int
) -> int:
    """Index of the first message kept verbatim; 0 means there is nothing to compact.

    Walks back from the newest message until the tail holds `keep_tail_tokens`, then moves
    forward to the next turn start (a user message), so the tail never exceeds the budget by
    more than one message. When the last turn alone is bigger than the tail, the cut goes inside
    it, before an assistant message, keeping every tool call with its results. A leading summary
    message is never kept: it is merged into the next summary.

    Args:
        messages: The conversation without the system prompt.
        counter: The token counter of the one budget.
        keep_tail_tokens: How many recent tokens to keep verbatim.
    """
    start = 1 if messages and is_summary_message(messages[0]) else 0
    if len(messages) <= start:
        return 0
    sizes = [counter.message(m) for m in messages]
    if sum(sizes[start:]) <= keep_tail_tokens:
        return 0  # everything after a previous summary fits: re-summarising gains nothing
    tail_start = len(messages) - 1
    accumulated = 0
    for index in range(len(messages) - 1, -1, -1):
        accumulated += sizes[index]
        tail_start = index
        if accumulated >= keep_tail_tokens:
            break

    def usable(index: int) -> bool:
        return start < index and _pairs_intact(messages, index)

    turn_starts = [
        i for i in range(len(messages)) if messages[i].get("role") == "user" and usable(i)
    ]
    inside_turn = [
        i for i in range(len(messages)) if messages[i].get("role") == "assistant" and usable(i)
    ]
    for candidates in (turn_starts, inside_turn):
        after = [i for i in candidates if i >= tail_start]
        if after:
            return after[0]
    # Even the newest message alone is over the tail: keep what is left from the latest boundary.
    before = [i for i in turn_starts + inside_turn if i < tail_start]
    return max(before) if before else 0


# --- the transcript the summariser reads -----------------------------------------------------


def trim_middle(text: str, limit: int = TOOL_RESULT_CHARS) -> str:
    """Keep the head and tail of a long text, with a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}\n...[{len(text) - limit:,} chars trimmed]...\n{text[-tail:]}"


def render_message(message: dict[str, Any], tool_names: dict[str, str] | None = None) -> str:
    """One message as plain transcript lines ("User: …", "Tool memory_search → …")."""
    role = message.get("role")
    body = content_text(message.get("content")).strip()
    if role == "tool":
        name = message.get("name") or (tool_names or {}).get(message.get("tool_call_id", ""), "")
        return f"Tool {name or 'result'} → {trim_middle(body)}"
    if role == "assistant":
        lines = [f"Assistant: {body}"] if body else []
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            arguments = trim_middle(str(function.get("arguments") or ""), 300)
            lines.append(f"Assistant called {function.get('name', '?')}({arguments})")
        return "\n".join(lines)
    label = {"user": "User", "system": "System"}.get(str(role), str(role).title())
    return f"{label}: {body}"


def render_transcript(messages: Sequence[dict[str, Any]]) -> str:
    """The messages as a plain transcript, long tool results trimmed to head + tail."""
    tool_names = {
        call.get("id", ""): (call.get("function") or {}).get("name", "")
        for m in messages
        for call in m.get("tool_calls") or ()
    }
    rendered = (render_message(m, tool_names) for m in messages)
    return "\n\n".join(r for r in rendered if r)


# --- the quality check -----------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_'-]*")
_STOPWORDS = frozenset(
    """a an and are as at be but by can could did do does for from had has have how i if in
    into is it its just let me my no not of on or our please should so some than that the
    their them then there these they this to too up us was we were what when where which who
    why will with would you your yes ok okay also about can't don't it's i'm""".split()
)


def _words(text: str) -> set[str]:
    return {w.lower().strip("'") for w in _WORD.findall(text)} - _STOPWORDS


def ask_reflected(summary: str, ask: str) -> bool:
    """Whether the summary reflects the ask: ≥30% of its words, or all its distinctive words."""
    ask_words = _words(ask)
    if not ask_words:
        return True
    summary_words = _words(summary)
    if len(ask_words & summary_words) / len(ask_words) >= ASK_OVERLAP:
        return True
    distinctive = {w for w in ask_words if len(w) >= 7 or any(ch.isdigit() for ch in w)}
    return bool(distinctive) and distinctive <= summary_words


def _has_heading(summary: str, heading: str) -> bool:
    wanted = heading.strip().lower()
    return any(line.strip().lower().rstrip(":") == wanted for line in summary.splitlines())


def is_unavailable(summary: str) -> bool:
    """An empty summary, or the "summary unavailable" fallback that erases memory."""
    text = summary.strip().lower()
    return not text or "summary unavailable" in text or text.strip(".") in {"unavailable", "n/a"}


def quality_problems(
    summary: str, recent: Sequence[dict[str, Any]], latest_ask: str | None
) -> list[str]:
    """What is wrong with a summary; an empty list means it passes.

    Args:
        summary: The summariser's output.
        recent: The last messages of the summarised part; their identifiers must survive.
        latest_ask: The latest user request in the summarised part, if any.
    """
    if is_unavailable(summary):
        return ["the summary is empty or says it is unavailable"]
    problems: list[str] = []
    missing_headings = [h for h in prompts.SUMMARY_HEADINGS if not _has_heading(summary, h)]
    if missing_headings:
        problems.append("missing headings: " + ", ".join(missing_headings))
    identifiers = extract_identifiers(render_transcript(recent))
    missing_ids = [i for i in identifiers if i not in summary]
    if missing_ids:
        problems.append("identifiers not kept verbatim: " + ", ".join(missing_ids))
    if latest_ask and not ask_reflected(summary, latest_ask):
        problems.append(f"the latest user ask is not reflected: {shorten(latest_ask, 120)!r}")
    return problems


# --- compact ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompactionResult:
    """The new history and the numbers of the compaction that produced it."""

    messages: list[dict[str, Any]]
    summary: str
    tokens_before: int
    tokens_after: int
    turns_summarised: int
    attempts: int


def _latest_ask(messages: Sequence[dict[str, Any]]) -> str | None:
    for message in reversed(messages):
        if message.get("role") == "user" and not is_summary_message(message):
            text = content_text(message.get("content")).strip()
            if text:
                return text
    return None


@dataclass
class _Summariser:
    """The summariser's calls for one compaction: a rolling summary over the earlier chunks,
    then the final summary with its quality check and one corrective retry."""

    llm: LLM
    focus: str | None
    previous: str | None
    """The summary so far: an earlier compaction's, then the rolling one."""
    attempts: int = 0
    summary: str = ""
    problems: list[str] = field(default_factory=list)
    fallback: str | None = None
    """Why `summary` is by rule (the model's failed, or the model did), or None."""

    async def run(
        self,
        chunks: Sequence[list[dict[str, Any]]],
        recent: Sequence[dict[str, Any]],
        ask: str | None,
    ) -> AsyncIterator[Event]:
        """The model's summary of the chunks; when it fails the check twice or the model fails,
        the summary by rule, so a weak model cannot strand the session."""
        from shell.llm import ModelError

        previous = self.previous
        try:
            async for event in self.fold(chunks[:-1]):
                yield event
            if not self.problems:
                async for event in self.finish(chunks[-1], recent, ask):
                    yield event
            if self.problems:
                self.fallback = "the model's summary failed the check: " + "; ".join(self.problems)
        except ModelError as error:
            self.fallback = f"the summariser failed: {error.message}"
        if self.fallback is not None:
            self.summary = summary_by_rule(chunks, previous, self.focus)

    async def ask(self, prompt: str) -> AsyncIterator[Event]:
        """One call without tools, its text hidden; the reply lands in `summary`."""
        self.attempts += 1
        request = [
            {"role": "system", "content": prompts.summary_system()},
            {"role": "user", "content": prompt},
        ]
        call = ModelCall(self.llm, request, silent=True)
        async for event in call.events():
            yield event
        self.summary = (call.reply.text or "").strip()

    async def fold(self, chunks: Sequence[list[dict[str, Any]]]) -> AsyncIterator[Event]:
        """Fold each chunk into the rolling summary; stop at one the summariser gives up on
        (then `problems` says so)."""
        for chunk in chunks:
            prompt = prompts.summary_prompt(render_transcript(chunk), self.previous, self.focus)
            async for event in self.ask(prompt):
                yield event
            if is_unavailable(self.summary):
                self.problems = ["the summariser returned nothing for an earlier part"]
                return
            self.previous = self.summary

    async def finish(
        self, chunk: list[dict[str, Any]], recent: Sequence[dict[str, Any]], ask: str | None
    ) -> AsyncIterator[Event]:
        """The final summary, checked; retried once with the problems named."""
        prompt = prompts.summary_prompt(render_transcript(chunk), self.previous, self.focus)
        for _ in range(MAX_ATTEMPTS):
            note = f"\n\n{prompts.summary_retry_note(self.problems)}" if self.problems else ""
            async for event in self.ask(prompt + note):
                yield event
            self.problems = quality_problems(self.summary, recent, ask)
            if not self.problems:
                return


def summary_by_rule(
    chunks: Sequence[list[dict[str, Any]]], previous: str | None, focus: str | None
) -> str:
    """The summary `shell.rule_summary` writes for the same requests the model got, folded over
    the chunks like the model's: deterministic, and it keeps every identifier and the latest
    ask, so it passes the check where a weak model's summary did not."""
    for chunk in chunks:
        previous = summarise(prompts.summary_prompt(render_transcript(chunk), previous, focus))
    return previous or ""


def split_for_summary(
    messages: Sequence[dict[str, Any]], counter: TokenCounter, max_tokens: int | None
) -> list[list[dict[str, Any]]]:
    """Consecutive chunks of at most `max_tokens` each (a bigger single message is a chunk of
    its own), never separating a tool call from its results; one chunk when `max_tokens` is
    None."""
    if not max_tokens:
        return [list(messages)]
    chunks: list[list[dict[str, Any]]] = [[]]
    size = 0
    for message in messages:
        tokens = counter.message(message)
        if chunks[-1] and size + tokens > max_tokens and message.get("role") != "tool":
            chunks.append([])
            size = 0
        chunks[-1].append(message)
        size += tokens
    return chunks


async def compact(
    *,
    llm: LLM,
    messages: list[dict[str, Any]],
    counter: TokenCounter,
    keep_tail_tokens: int,
    trigger: CompactionTrigger,
    focus: str | None,
    count_prompt: Callable[[list[dict[str, Any]]], int],
    compaction_count: int,
    clock: Callable[[], float] = time.monotonic,
    max_transcript_tokens: int | None = None,
) -> AsyncIterator[Event | CompactionResult]:
    """Summarise the old part of the history and keep the recent tail verbatim.

    Args:
        llm: The model client; called without tools.
        messages: The conversation without the system prompt.
        counter: Counts messages for the cut.
        keep_tail_tokens: Recent tokens kept verbatim (the budget's keep_tail).
        trigger: "threshold", "overflow" or "manual".
        focus: Extra instructions from `/compact <focus>`.
        count_prompt: Counts the whole prompt (system + tools + these messages), for the receipt.
        compaction_count: Compactions so far; the receipt carries the new count.
        clock: Monotonic seconds, for the duration.
        max_transcript_tokens: When the part to summarise is bigger than this, it is summarised
            in stages of at most this size (a rolling summary), so the summariser's own request
            fits the window. None: one stage.

    Yields:
        CompactionStarted; then CompactionSkipped, or CompactionFailed (history kept, no
        result), or CompactionFinished (the receipt) followed by the `CompactionResult`.
    """
    started = clock()
    tokens_before = count_prompt(messages)
    yield CompactionStarted(trigger=trigger, tokens_before=tokens_before, focus=focus)
    cut = find_cut(messages, counter, keep_tail_tokens)
    if cut == 0:
        yield CompactionSkipped(
            reason=f"nothing to compact: the history fits in the kept tail "
            f"({keep_tail_tokens:,} tokens)"
        )
        return
    old, tail = messages[:cut], messages[cut:]
    previous = summary_text(old[0]) if is_summary_message(old[0]) else None
    body = old[1:] if previous is not None else old
    chunks = split_for_summary(body, counter, max_transcript_tokens)
    recent, latest_ask = body[-RECENT_MESSAGES:], _latest_ask(body)
    summariser = _Summariser(llm, focus, previous)
    async for event in summariser.run(chunks, recent, latest_ask):
        yield event
    summary, attempts, fallback = summariser.summary, summariser.attempts, summariser.fallback
    if fallback is not None and (problems := quality_problems(summary, recent, latest_ask)):
        reason = f"{fallback}; the summary by rule failed too: " + "; ".join(problems)
        yield CompactionFailed(trigger=trigger, reason=reason, attempts=attempts)
        return

    new_messages = [summary_message(summary), *tail]
    tokens_after = count_prompt(new_messages)
    turns = sum(1 for m in body if m.get("role") == "user")
    yield CompactionFinished(
        trigger=trigger,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        turns_summarised=turns,
        messages_kept=len(tail),
        duration_ms=(clock() - started) * 1000,
        summary=summary,
        compaction_count=compaction_count + 1,
        attempts=attempts,
        fallback=fallback,
    )
    yield CompactionResult(
        messages=new_messages,
        summary=summary,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        turns_summarised=turns,
        attempts=attempts,
    )
