"""The only litellm caller: streaming, tool-call assembly, usage, retries and error mapping.

`LLM.stream` yields `TextDelta` pieces as they arrive, a `ModelRetry` before each retry, and a
`ModelReply` last. Failures that retrying cannot fix raise `ModelError` with a stable `kind`
and one line for the user. litellm is loaded by `shell.litellm_loader` (it takes seconds).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from types import SimpleNamespace
from typing import Any, Literal

from shell.config import DEMO_CONTEXT_WINDOW, DEMO_MODEL
from shell.events import ErrorKind, Loading, ModelRetry, TextDelta
from shell.litellm_loader import loaded_litellm, preload_litellm, prepare_litellm
from shell.messages import field as read_field
from shell.text import shorten

DEMO_PROVIDER = DEMO_MODEL.split("/", 1)[0]
LOCAL_DUMMY_KEY = "sk-cairn-local"
"""litellm's openai provider insists on a key, even for a local server that ignores it."""

_OVERFLOW = re.compile(
    # OpenAI, vLLM (old), llama-cpp-python and Ollama: "maximum context length is N tokens";
    # Anthropic: "prompt is too long", "input length and `max_tokens` exceed context limit";
    # llama.cpp's llama-server: "the request exceeds the available context size";
    # vLLM: "the decoder prompt (length N) is longer than the maximum model length of M".
    r"context length|context_length_exceeded|maximum context|context window|too many tokens"
    r"|prompt is too long|input is too long|request_too_large|context limit"
    r"|exceeds? the available context size|exceed_context_size|maximum model length",
    re.IGNORECASE,
)
_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*|\w*(?:Error|Exception)\s*[-:]\s*)+")
_MAX_RETRY_AFTER = 60.0


class ModelError(Exception):
    """A model call failed for good.

    `kind` is one of auth, bad_request, context_overflow, not_found, unavailable, timeout,
    rate_limited; `message` is one line for the user, without a traceback.
    """

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message


@dataclass(frozen=True)
class ToolCallRequest:
    id: str
    name: str
    arguments: str
    """Raw JSON text as the model sent it; possibly malformed (the tool layer reports that)."""


@dataclass(frozen=True)
class ModelReply:
    text: str
    tool_calls: list[ToolCallRequest]
    finish_reason: str
    prompt_tokens: int = 0
    """Provider-reported usage; 0 when the provider said nothing."""
    completion_tokens: int = 0

    def message(self) -> dict[str, Any]:
        """The reply as an OpenAI-format assistant message for the transcript."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
        return message


@dataclass(frozen=True)
class _Failure:
    """A retryable failure: `kind` is rate_limited, timeout or unavailable."""

    kind: Literal["rate_limited", "timeout", "unavailable"]
    reason: str
    detail: str
    retry_after: float | None = None


_UNFINISHED = _Failure(
    "unavailable",
    "stream ended before the answer did (no finish reason)",
    "the stream ended before the answer did (no finish reason): the reply was incomplete",
)
_EMPTY = _Failure(
    "unavailable",
    "the stream ended empty; asking once without streaming to learn why",
    "the stream ended empty, and so did the request without streaming",
)
"""llama-cpp-python answers 200 and then closes an empty stream when the prompt overflows its
window; the same request without streaming gets its error (`context_length_exceeded`)."""


class LLM:
    """One configured model. `stream` is the only way Cairn talks to it."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        max_attempts: int = 4,
        base_delay: float = 1.0,
        max_delay: float = 20.0,
        timeout: float = 120.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        jitter: Callable[[], float] = lambda: random.uniform(0.5, 1.0),
    ) -> None:
        self.model = model
        self.api_base = api_base
        self.api_key = api_key
        self.max_attempts = max(1, max_attempts)
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.timeout = timeout
        self._sleep = sleep
        self._jitter = jitter

    async def stream(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        attempts: int | None = None,
    ) -> AsyncIterator[Loading | TextDelta | ModelRetry | ModelReply]:
        """Call the model, streaming; retry what is worth retrying.

        `response_format` asks for structured output; callers check what comes back, and
        `supports_response_schema` says which form to ask for. `max_tokens` bounds the
        answer; `attempts` replaces `max_attempts` for this call.

        Yields:
            `Loading("model")` before and after waiting for litellm's import (first call only),
            `TextDelta` per text piece, `ModelRetry` before each retry (`discard_partial` when
            text of the failed attempt was already yielded), and finally one `ModelReply`.

        Raises:
            ModelError: for auth, bad request, unknown model, context overflow (the caller
                compacts and retries), or when every attempt failed.
        """
        litellm = loaded_litellm()
        if litellm is None:  # the import takes seconds: off the event loop, and visibly
            yield Loading("model", done=False)
            litellm = await asyncio.to_thread(prepare_litellm)
            yield Loading("model", done=True)
        request = self._request(messages, tools)
        if response_format is not None:
            request["response_format"] = response_format
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        attempt, streaming = 1, True
        limit = max(1, attempts or self.max_attempts)
        while True:
            reply = _ReplyBuilder()
            failure: _Failure | None = None
            if streaming:
                async for piece in self._stream_once(litellm, request, reply):
                    if isinstance(piece, _Failure):
                        failure = piece
                    else:
                        yield TextDelta(text=piece)
            else:
                failure = await self._complete_once(litellm, request, reply)
                if failure is None and reply.yielded_text:
                    yield TextDelta(text="".join(reply.text))
            if failure is None:
                yield reply.build()
                return
            probe = failure is _EMPTY and streaming  # the same attempt, asked without streaming
            if not probe and (attempt >= limit or failure is _EMPTY):
                raise ModelError(failure.kind, self._exhausted_message(failure, limit))
            delay = 0.0 if probe else self._delay(attempt, failure.retry_after)
            yield ModelRetry(
                attempt=attempt,
                max_attempts=limit,
                delay_s=delay,
                reason=failure.reason,
                discard_partial=reply.yielded_text,
            )
            await self._sleep(delay)
            attempt, streaming = (attempt, False) if probe else (attempt + 1, True)

    async def _stream_once(
        self, litellm: Any, request: dict[str, Any], reply: _ReplyBuilder
    ) -> AsyncIterator[str | _Failure]:
        """One streamed attempt: each text piece, then a `_Failure` if it failed."""
        response: Any = None
        try:
            try:
                response = await litellm.acompletion(**request)
                chunks = aiter(response)
            except Exception as error:
                yield self._classify(error, litellm, streaming=False)
                return
            while True:
                try:
                    chunk = await anext(chunks)
                except StopAsyncIteration:
                    break
                except Exception as error:
                    yield self._classify(error, litellm, streaming=True)
                    return
                if piece := reply.add(chunk):
                    yield piece
            if _unfinished(response):  # a server that gave up mid-answer ends cleanly too
                yield _UNFINISHED if reply.yielded_text or reply.calls else _EMPTY
        finally:
            await _close(response)

    async def _complete_once(
        self, litellm: Any, request: dict[str, Any], reply: _ReplyBuilder
    ) -> _Failure | None:
        """One attempt without streaming (after an empty stream), into `reply`."""
        plain = {**request, "stream": False, "stream_options": None}
        try:
            response = await litellm.acompletion(**plain)
        except Exception as error:
            return self._classify(error, litellm, streaming=False)
        if not reply.add_response(response):
            return _EMPTY
        return None

    def preload(self) -> None:
        """Begin loading litellm in the background (see `preload_litellm`)."""
        preload_litellm()

    @staticmethod
    def loaded() -> bool:
        """Whether litellm is ready (never waits)."""
        return loaded_litellm() is not None

    @staticmethod
    async def wait_loaded() -> None:
        """Wait, off the event loop, until litellm is ready. A failed import is not raised
        here: the first model call reports it."""
        with contextlib.suppress(Exception):
            await asyncio.to_thread(prepare_litellm)

    def supports_response_schema(self) -> bool:
        """Whether litellm knows the model to take a JSON schema as its response format
        (OpenAI, Anthropic, Gemini …); a local server or an unknown model: False."""
        if self.model.startswith(f"{DEMO_PROVIDER}/"):
            return False
        try:
            return bool(prepare_litellm().supports_response_schema(model=self.model))
        except Exception:
            return False

    def context_window(self) -> tuple[int | None, Literal["demo", "model_info", "unknown"]]:
        """(window in tokens, source): from litellm's model info, or (None, "unknown")."""
        if self.model.startswith(f"{DEMO_PROVIDER}/"):
            return DEMO_CONTEXT_WINDOW, "demo"
        try:
            info = prepare_litellm().get_model_info(self.model)
            window = info.get("max_input_tokens") or info.get("max_tokens")
            return (int(window), "model_info") if window else (None, "unknown")
        except Exception:
            return None, "unknown"

    def _request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        api_key = self.api_key
        local_openai = self.model.startswith("openai/") and self.api_base
        if api_key is None and local_openai and not os.environ.get("OPENAI_API_KEY"):
            api_key = LOCAL_DUMMY_KEY
        return {
            "model": self.model,
            "messages": messages,
            "tools": tools or None,
            "stream": True,
            "stream_options": {"include_usage": True},
            "api_base": self.api_base,
            "api_key": api_key,
            "timeout": self.timeout,
            "max_retries": 0,  # the openai client would retry silently; we retry visibly
            # Cairn runs its own tools: litellm's MCP gateway check would import the whole MCP
            # stack at the first call with tools (0.9 s of CPU) to find no MCP tool.
            "_skip_mcp_handler": True,
        }

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, max(self.max_delay, _MAX_RETRY_AFTER))
        return min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1)) * self._jitter()

    def _classify(self, error: Exception, litellm: Any, *, streaming: bool) -> _Failure:
        """Return the retryable failure, or raise the final `ModelError` from `error`."""
        import openai

        status = getattr(error, "status_code", None)
        detail = _detail(error)
        model = self.model
        if (
            isinstance(error, litellm.ContextWindowExceededError)
            or status == 413
            or (status in (400, None) and _OVERFLOW.search(detail))
        ):
            raise ModelError(
                "context_overflow", f"The conversation is too long for {model}: {detail}"
            ) from error
        if (
            isinstance(error, openai.AuthenticationError)
            or status == 401
            or ("missing credentials" in detail.lower())
        ):
            raise ModelError(
                "auth",
                f"{model} rejected the credentials ({detail}): check your "
                "API key (OPENAI_API_KEY, ANTHROPIC_API_KEY, … or api_key in "
                "the config).",
            ) from error
        if isinstance(error, openai.PermissionDeniedError) or status == 403:
            raise ModelError("auth", f"This API key may not use {model}: {detail}") from error
        if isinstance(error, openai.NotFoundError) or status == 404:
            raise ModelError(
                "not_found",
                f"Model {model!r} was not found: {detail}. Check the model name and api_base.",
            ) from error
        if isinstance(error, openai.RateLimitError) or status == 429:
            return _Failure("rate_limited", f"rate limited: {detail}", detail, _retry_after(error))
        if isinstance(error, (openai.APITimeoutError, TimeoutError)):
            return _Failure("timeout", f"no answer within {self.timeout:g} s", detail)
        if streaming:  # whatever breaks a stream mid-way, a fresh attempt may not hit it
            return _Failure("unavailable", f"stream dropped: {detail}", detail)
        if isinstance(error, (openai.APIConnectionError, litellm.APIConnectionError)) or (
            detail.lower().startswith("connection error")  # litellm reports a dead port as a 500
        ):
            return _Failure("unavailable", f"connection failed: {detail}", detail)
        if isinstance(status, int) and (status >= 500 or status == 408):
            return _Failure(
                "unavailable", f"provider error {status}: {detail}", detail, _retry_after(error)
            )
        if isinstance(error, openai.APIError) and status is None:
            return _Failure("unavailable", f"provider error: {detail}", detail)
        raise ModelError("bad_request", f"{model} rejected the request: {detail}") from error

    def _exhausted_message(self, failure: _Failure, attempts: int) -> str:
        tries = f"{attempts} attempt{'s' if attempts > 1 else ''}"
        if failure.kind == "rate_limited":
            return f"{self.model} is still rate-limited after {tries} ({failure.detail})."
        if failure.kind == "timeout":
            return f"{self.model} did not answer within {self.timeout:g} s ({tries})."
        return f"{self.model} is unavailable after {tries}: {failure.detail}"


@dataclass
class _ReplyBuilder:
    """Assembles streamed chunks: text pieces, tool calls by index, finish reason, usage."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    finish_reason: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def yielded_text(self) -> bool:
        return any(self.text)

    def add(self, chunk: Any) -> str:
        """Take one chunk in; return its text (empty when it carried none)."""
        if usage := getattr(chunk, "usage", None):
            self.prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
            self.completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        piece = ""
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0) not in (0, None):
                continue
            self.finish_reason = getattr(choice, "finish_reason", None) or self.finish_reason
            delta = getattr(choice, "delta", None)
            piece += read_field(delta, "content") or ""
            for call in read_field(delta, "tool_calls") or []:
                self._add_call(call)
        self.text.append(piece)
        return piece

    def add_response(self, response: Any) -> bool:
        """Take a whole (not streamed) response in; False when it held no choice."""
        choices = [c for c in getattr(response, "choices", None) or [] if c.index in (0, None)]
        if not choices:
            return False
        self.add(_as_chunk(response, choices[0]))
        return True

    def _add_call(self, call: Any) -> None:
        index, call_id = read_field(call, "index"), read_field(call, "id")
        if index is None:  # some providers omit the index: match by id, else continue the last
            by_id = {c["id"]: i for i, c in self.calls.items() if c["id"]}
            last = max(self.calls, default=0)
            index = by_id.get(call_id, len(self.calls) if call_id and self.calls else last)
        entry = self.calls.setdefault(index, {"id": "", "name": "", "arguments": []})
        function = read_field(call, "function")
        if call_id:
            entry["id"] = call_id
        if name := read_field(function, "name"):
            entry["name"] = name
        if arguments := read_field(function, "arguments"):
            entry["arguments"].append(arguments)

    def build(self) -> ModelReply:
        tool_calls = [
            ToolCallRequest(
                id=c["id"] or f"call_{n}", name=c["name"], arguments="".join(c["arguments"])
            )
            for n, (_, c) in enumerate(sorted(self.calls.items()), start=1)
            if c["name"] or c["arguments"]
        ]
        finish = self.finish_reason or ("tool_calls" if tool_calls else "stop")
        return ModelReply(
            text="".join(self.text),
            tool_calls=tool_calls,
            finish_reason=finish,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
        )


def _as_chunk(response: Any, choice: Any) -> Any:
    """A whole response's choice in the shape of one streamed chunk (its message as the delta;
    tool calls get their list index, which whole responses leave out)."""
    message = getattr(choice, "message", None)
    calls = [
        {"index": i, "id": read_field(c, "id"), "function": read_field(c, "function")}
        for i, c in enumerate(read_field(message, "tool_calls") or [])
    ]
    delta = {"content": read_field(message, "content"), "tool_calls": calls}
    finished = SimpleNamespace(index=0, finish_reason=choice.finish_reason, delta=delta)
    return SimpleNamespace(usage=getattr(response, "usage", None), choices=[finished])


def _unfinished(response: Any) -> bool:
    """Whether a stream that ended without an error never said it was finished.

    litellm's stream wrapper makes up a "stop" for such a stream, so the reply cannot tell;
    the wrapper's `received_finish_reason` (None) still does.
    """
    return getattr(response, "received_finish_reason", "unknown") is None


async def _close(response: Any) -> None:
    close = getattr(response, "aclose", None)
    if close is None:
        return
    try:
        await close()
    except Exception:
        pass  # the attempt is over either way; a failed close must not mask its outcome


def _detail(error: BaseException) -> str:
    """The provider's own words, without litellm's class-name prefixes, on one line."""
    text = str(getattr(error, "message", None) or error)
    text = text.split(" Original exception:")[0].split(" LiteLLM Retried:")[0].strip()
    text = _PREFIX.sub("", text).strip()
    line = text.splitlines()[0].strip() if text else ""
    line = line or type(error).__name__
    return shorten(line, 300)


def _retry_after(error: BaseException) -> float | None:
    """Seconds the provider asked us to wait (Retry-After / retry-after-ms), if it said."""
    headers = getattr(error, "litellm_response_headers", None) or {}
    try:
        if (millis := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(millis) / 1000)
        if (value := headers.get("retry-after")) is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:  # an HTTP date
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None
