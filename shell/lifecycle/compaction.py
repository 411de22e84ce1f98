"""Compaction: cut the history on a turn boundary, summarise the old part, check the summary.

The old part becomes one summary message (a user message starting with
`prompts.COMPACTED_PREFIX`); the recent tail is kept verbatim. A summary that misses a required
heading, an exact identifier or the latest user ask gets one corrective retry; if that fails too
compaction falls back on a summary by rule (`shell.rule_summary`), under the same check, and the
receipt says so. Only when that fails too does the compaction fail, keeping the history as it
was. A bad summary is never stored.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from shell import prompts
from shell.context.calibration import KeptCalibration
from shell.context.counter import TokenCounter
from shell.events import (
    CompactionFailed,
    CompactionFinished,
    CompactionSkipped,
    CompactionStarted,
    CompactionTrigger,
    Event,
)
from shell.lifecycle.rule_summary import answered, summarise
from shell.lifecycle.summary_check import is_unavailable, quality_problems
from shell.lifecycle.transcript import render_transcript
from shell.loop.calls import ModelCall
from shell.messages import content_text, is_summary_message, summary_message, summary_text
from shell.text.small_talk import small_talk

if TYPE_CHECKING:
    from shell.model import LLM

RECENT_MESSAGES = 10
MAX_ATTEMPTS = 2


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


# --- compact ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompactionResult:
    """The new history, and the receipt (already yielded) that holds the compaction's numbers."""

    messages: list[dict[str, Any]]
    receipt: CompactionFinished


def _latest_ask(messages: Sequence[dict[str, Any]]) -> str | None:
    """The latest user message of the summarised part while it is still open: not answered
    after it (`rule_summary.answered`), and no small talk (the summary must carry only that)."""
    entries = [
        (str(m.get("role")), content_text(m.get("content")).strip())
        for m in messages
        if not is_summary_message(m)
    ]
    users = [i for i, (role, text) in enumerate(entries) if role == "user" and text]
    if not users or answered(entries)[users[-1]] or small_talk(entries[users[-1]][1]):
        return None
    return entries[users[-1]][1]


@dataclass
class _Summariser:
    """The summariser's calls for one compaction: a rolling summary over the earlier chunks,
    then the final summary with its quality check and one corrective retry."""

    llm: LLM
    focus: str | None
    previous: str | None
    """The summary so far: an earlier compaction's, then the rolling one."""
    counter: TokenCounter
    sizes: KeptCalibration | None
    """How the provider counts the summariser's prompts: each call's report teaches it."""
    stage_tokens: int | None = None
    """The most a stage's transcript may be, as the provider counts it (None: no bound)."""
    request_tokens: int | None = None
    """The most a summariser's whole prompt may be, as the provider counts it, so that its
    reply fits the window (None: no bound)."""
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
        from shell.model import ModelError

        previous, pending = self.previous, list(chunks)
        try:
            while pending and not self.problems:
                chunk = pending.pop(0)
                prompt = prompts.summary_prompt(render_transcript(chunk), self.previous, self.focus)
                reported = await self.count(prompt)
                if parts := self.resplit(chunk, reported):
                    pending[:0] = parts
                    continue
                events = (
                    self.fold(prompt, reported)
                    if pending
                    else self.finish(prompt, reported, recent, ask)
                )
                async for event in events:
                    yield event
            if self.problems:
                self.fallback = "the model's summary failed the check: " + "; ".join(self.problems)
        except ModelError as error:
            self.fallback = f"the summariser failed: {error.message}"
        if self.fallback is not None:
            self.summary = summary_by_rule(chunks, previous, self.focus)

    async def count(self, prompt: str) -> int:
        """The server's count of `prompt`'s call, asked before it where the server must be
        asked (`LLM.count`), and learned: a template may count a transcript unlike the last
        (SmolLM2's escapes every quote). 0 when not asked."""
        request = _summary_request(prompt)
        reported = await self.llm.count(request)
        if reported and self.sizes is not None:
            self.sizes.learn(self.counter.messages(request), reported)
        return reported

    def resplit(self, chunk: list[dict[str, Any]], reported: int) -> list[list[dict[str, Any]]]:
        """The chunk in smaller stages when the server's count of its prompt shows it bigger
        than a stage may be; else nothing."""
        if not reported or self.sizes is None or not self.stage_tokens:
            return []
        sizes = self.sizes.calibration
        within = sizes.counted_within(self.stage_tokens)
        if self.request_tokens and reported > self.request_tokens:  # no room for the reply
            ours = sum(self.counter.message(message) for message in chunk)
            within = min(within, ours - sizes.counted_within(reported - self.request_tokens))
        parts = split_for_summary(chunk, self.counter, within) if within > 0 else [chunk]
        return parts if len(parts) > 1 else []

    async def ask(self, prompt: str, reported: int | None = None) -> AsyncIterator[Event]:
        """One call without tools, its text hidden; the reply lands in `summary`. `reported`:
        the server's count of it, asked already (None: ask here)."""
        self.attempts += 1
        if reported is None:
            reported = await self.count(prompt)
        request = _summary_request(prompt)
        call = ModelCall(
            self.llm, request, silent=True, options={"counted": True} if reported else None
        )
        async for event in call.events():
            yield event
        if self.sizes is not None and not reported and call.reply.prompt_tokens:
            self.sizes.learn(self.counter.messages(request), call.reply.prompt_tokens)
        self.summary = (call.reply.text or "").strip()

    async def fold(self, prompt: str, reported: int) -> AsyncIterator[Event]:
        """Fold one chunk into the rolling summary; when the summariser gives up on it,
        `problems` says so."""
        async for event in self.ask(prompt, reported):
            yield event
        if is_unavailable(self.summary):
            self.problems = ["the summariser returned nothing for an earlier part"]
            return
        self.previous = self.summary

    async def finish(
        self, prompt: str, reported: int, recent: Sequence[dict[str, Any]], ask: str | None
    ) -> AsyncIterator[Event]:
        """The final summary, checked; retried once with the problems named."""
        for attempt in range(MAX_ATTEMPTS):
            note = f"\n\n{prompts.summary_retry_note(self.problems)}" if self.problems else ""
            async for event in self.ask(prompt + note, reported if attempt == 0 else None):
                yield event
            self.problems = quality_problems(self.summary, recent, ask)
            if not self.problems:
                return


def _summary_request(prompt: str) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": prompts.summary_system()},
        {"role": "user", "content": prompt},
    ]


def summary_by_rule(
    chunks: Sequence[list[dict[str, Any]]], previous: str | None, focus: str | None
) -> str:
    """The summary by rule (`rule_summary.py`) of the transcripts the model got, folded over the
    chunks like the model's: deterministic, and it keeps every identifier and the latest ask, so
    it passes the check where a weak model's summary did not. (`focus` only steers a model.)"""
    for n, chunk in enumerate(chunks):
        previous = summarise(render_transcript(chunk), previous, same_compaction=n > 0)
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
    max_request_tokens: int | None = None,
    summary_sizes: KeptCalibration | None = None,
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
        max_transcript_tokens: When the part to summarise is bigger than this, as the provider
            counts it, it is summarised in stages of at most this size (a rolling summary), so
            the summariser's own request fits the window. None: one stage.
        max_request_tokens: The most a summariser's request may be as the provider counts it,
            so its reply fits: where the server is asked before each call (`LLM.count`), a
            stage it counts above this, or above `max_transcript_tokens`, is split again.
        summary_sizes: How the provider counts the summariser's prompts (None: as we do);
            learned from each call.

    Yields:
        CompactionStarted; then CompactionSkipped, or CompactionFailed (history kept, no
        result), or CompactionFinished (the receipt) followed by the `CompactionResult` (the new
        history, and that receipt for its numbers).
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
    stage = max_transcript_tokens
    if max_transcript_tokens and summary_sizes is not None:
        stage = summary_sizes.calibration.counted_within(max_transcript_tokens)
    chunks = split_for_summary(body, counter, stage)
    recent, latest_ask = body[-RECENT_MESSAGES:], _latest_ask(body)
    summariser = _Summariser(
        llm, focus, previous, counter, summary_sizes, max_transcript_tokens, max_request_tokens
    )
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
    receipt = CompactionFinished(
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
    yield receipt
    yield CompactionResult(messages=new_messages, receipt=receipt)


def compaction_entry(result: CompactionResult) -> dict[str, Any]:
    """The transcript entry for a compaction, for `SessionStore.append`.

    `kept` is how many messages at the end of the live list survived verbatim, so `messages()`
    rebuilds exactly what the agent had: the summary followed by those messages.
    """
    receipt = result.receipt
    return {
        "kind": "compaction",
        "summary": receipt.summary,
        "kept": len(result.messages) - 1,
        "tokens_before": receipt.tokens_before,
        "tokens_after": receipt.tokens_after,
        "turns_summarised": receipt.turns_summarised,
    }
