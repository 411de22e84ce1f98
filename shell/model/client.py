"""The only litellm caller: streaming, retries, and the window and abilities of a model.

`LLM.stream` yields `TextDelta` pieces as they arrive, a `ModelRetry` before each retry, and a
`ModelReply` last (`reply.py`). Failures that retrying cannot fix raise `ModelError` with a
stable `kind` and one line for the user (`errors.py`). litellm is loaded by `loader.py` (it
takes seconds).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any, Literal

from shell.config import DEMO_CONTEXT_WINDOW, DEMO_MODEL
from shell.events import Loading, ModelRetry, TextDelta
from shell.model.errors import (
    EMPTY,
    UNFINISHED,
    Failure,
    ModelError,
    classify,
    exhausted_message,
    refused_prompt_tokens,
)
from shell.model.loader import loaded_litellm, preload_litellm, prepare_litellm
from shell.model.reply import ModelReply, ReplyBuilder, provider_counted, unfinished

DEMO_PROVIDER = DEMO_MODEL.split("/", 1)[0]
LOCAL_DUMMY_KEY = "sk-cairn-local"
"""litellm's openai provider insists on a key, even for a local server that ignores it."""

_MAX_RETRY_AFTER = 60.0


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
        ask_count: bool = False,
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
        self.ask_count = ask_count
        """After a stream that reported no usage, ask the server for the prompt's count: the
        same request whole, for one token (a local server's prompt cache makes it cheap)."""
        self.counts_before = False
        """Whether the server has had to be asked (its stream sent no usage): then `count`
        asks before a call, in time for the decisions about it, instead of after."""
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
        counted: bool = False,
    ) -> AsyncIterator[Loading | TextDelta | ModelRetry | ModelReply]:
        """Call the model, streaming; retry what is worth retrying.

        `response_format` asks for structured output; callers check what comes back, and
        `supports_response_schema` says which form to ask for. `max_tokens` bounds the
        answer; `attempts` replaces `max_attempts` for this call; `counted`: the server
        counted this prompt before it (`count`), so it is not asked again after.

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
            reply = ReplyBuilder()
            failure: Failure | None = None
            if streaming:
                async for piece in self._stream_once(litellm, request, reply):
                    if isinstance(piece, Failure):
                        failure = piece
                    else:
                        yield TextDelta(text=piece)
            else:
                failure = await self._complete_once(litellm, request, reply)
                if failure is None and reply.yielded_text:
                    yield TextDelta(text="".join(reply.text))
            if failure is None:
                built = reply.build()
                if streaming and self.ask_count and not counted and not built.prompt_tokens:
                    built = replace(built, prompt_tokens=await self._count(litellm, request))
                    self.counts_before = True
                yield built
                return
            probe = failure is EMPTY and streaming  # the same attempt, asked without streaming
            if not probe and (attempt >= limit or failure is EMPTY):
                message = exhausted_message(failure, limit, model=self.model, timeout=self.timeout)
                raise ModelError(failure.kind, message)
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
        self, litellm: Any, request: dict[str, Any], reply: ReplyBuilder
    ) -> AsyncIterator[str | Failure]:
        """One streamed attempt: each text piece, then a `Failure` if it failed."""
        response: Any = None
        try:
            try:
                response = await litellm.acompletion(**request)
                chunks = aiter(response)
            except Exception as error:
                yield classify(
                    error, litellm, model=self.model, timeout=self.timeout, streaming=False
                )
                return
            while True:
                try:
                    chunk = await anext(chunks)
                except StopAsyncIteration:
                    break
                except Exception as error:
                    yield classify(
                        error, litellm, model=self.model, timeout=self.timeout, streaming=True
                    )
                    return
                if piece := reply.add(chunk):
                    yield piece
            if not provider_counted(response):
                reply.forget_usage()
            if unfinished(response):  # a server that gave up mid-answer ends cleanly too
                yield UNFINISHED if reply.yielded_text or reply.calls else EMPTY
        finally:
            await _close(response)

    async def _complete_once(
        self, litellm: Any, request: dict[str, Any], reply: ReplyBuilder
    ) -> Failure | None:
        """One attempt without streaming (after an empty stream), into `reply`."""
        plain = {**request, "stream": False, "stream_options": None}
        try:
            response = await litellm.acompletion(**plain)
        except Exception as error:
            return classify(error, litellm, model=self.model, timeout=self.timeout, streaming=False)
        if not reply.add_response(response):
            return EMPTY
        return None

    async def count(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> int:
        """The server's own count of a prompt about to be sent, when it is one that must be
        asked (`counts_before`); else 0, and no request. The call that follows reuses the
        prompt the server has just read (its prompt cache), so the question costs one token."""
        litellm = loaded_litellm()
        if not self.counts_before or litellm is None:
            return 0
        return await self._count(litellm, self._request(messages, tools))

    async def _count(self, litellm: Any, request: dict[str, Any]) -> int:
        """The server's count of `request`'s prompt, from a whole response of one token or
        the size its refusal names (an overflow); 0 when it will not say (the reply then
        calibrates nothing)."""
        probe = {**request, "stream": False, "stream_options": None, "max_tokens": 1}
        try:
            response = await litellm.acompletion(**probe)
            return int(getattr(response.usage, "prompt_tokens", 0) or 0)
        except Exception as error:
            return refused_prompt_tokens(error)

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


async def _close(response: Any) -> None:
    close = getattr(response, "aclose", None)
    if close is None:
        return
    try:
        await close()
    except Exception:
        pass  # the attempt is over either way; a failed close must not mask its outcome
