"""How a failed model call is read: the provider's words on one line, whether retrying can help,
and the context-overflow dialects of the providers Cairn has met.

`classify` turns an exception from litellm into a retryable `Failure` or raises the final
`ModelError`; `is_overflow` recognises an overflow by its status and words alone.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, Literal

from shell.events import ErrorKind
from shell.text import shorten

OVERFLOW = re.compile(
    # OpenAI, vLLM (old), llama-cpp-python and Ollama: "maximum context length is N tokens";
    # Anthropic: "prompt is too long", "input length and `max_tokens` exceed context limit";
    # llama.cpp's llama-server: "the request exceeds the available context size";
    # vLLM: "the decoder prompt (length N) is longer than the maximum model length of M".
    r"context length|context_length_exceeded|maximum context|context window|too many tokens"
    r"|prompt is too long|input is too long|request_too_large|context limit"
    r"|exceeds? the available context size|exceed_context_size|maximum model length",
    re.IGNORECASE,
)
REFUSED_PROMPT = re.compile(
    # the provider's count of the prompt it refused: OpenAI, vLLM (old) and llama-cpp-python
    # "(N in the messages", OpenAI "your messages resulted in N tokens", Anthropic "prompt is
    # too long: N tokens", vLLM "prompt (length N)" (llama.cpp puts it in `n_prompt_tokens`,
    # which litellm drops; Ollama says none)
    r"\((\d+) in the messages|messages resulted in (\d+) tokens|prompt is too long: (\d+) tokens"
    r"|prompt \(length (\d+)\)",
    re.IGNORECASE,
)
PREFIX = re.compile(r"^(?:litellm\.\w+:\s*|\w*(?:Error|Exception)\s*[-:]\s*)+")


class ModelError(Exception):
    """A model call failed for good.

    `kind` is one of auth, bad_request, context_overflow, not_found, unavailable, timeout,
    rate_limited; `message` is one line for the user, without a traceback.
    """

    def __init__(self, kind: ErrorKind, message: str, *, prompt_tokens: int = 0) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.prompt_tokens = prompt_tokens
        """A context overflow's prompt as the provider counted it, when its words said (0:
        they did not)."""


@dataclass(frozen=True)
class Failure:
    """A retryable failure: `kind` is rate_limited, timeout or unavailable."""

    kind: Literal["rate_limited", "timeout", "unavailable"]
    reason: str
    detail: str
    retry_after: float | None = None


UNFINISHED = Failure(
    "unavailable",
    "stream ended before the answer did (no finish reason)",
    "the stream ended before the answer did (no finish reason): the reply was incomplete",
)
EMPTY = Failure(
    "unavailable",
    "the stream ended empty; asking once without streaming to learn why",
    "the stream ended empty, and so did the request without streaming",
)
"""llama-cpp-python answers 200 and then closes an empty stream when the prompt overflows its
window; the same request without streaming gets its error (`context_length_exceeded`)."""


def is_overflow(status: int | None, detail: str) -> bool:
    """Whether a provider's error says the prompt is over the context window, in any of the
    dialects above (a 413 always does)."""
    return status == 413 or (status in (400, None) and bool(OVERFLOW.search(detail)))


def classify(
    error: Exception, litellm: Any, *, model: str, timeout: float, streaming: bool
) -> Failure:
    """Return the retryable failure, or raise the final `ModelError` from `error`.

    `streaming`: the error broke a stream mid-way (a fresh attempt may not hit it).
    """
    import openai

    status = getattr(error, "status_code", None)
    text = detail(error)
    if isinstance(error, litellm.ContextWindowExceededError) or is_overflow(status, text):
        raise ModelError(
            "context_overflow",
            f"The conversation is too long for {model}: {text}",
            prompt_tokens=refused_prompt_tokens(error),
        ) from error
    if (
        isinstance(error, openai.AuthenticationError)
        or status == 401
        or ("missing credentials" in text.lower())
    ):
        raise ModelError(
            "auth",
            f"{model} rejected the credentials ({text}): check your "
            "API key (OPENAI_API_KEY, ANTHROPIC_API_KEY, … or api_key in "
            "the config).",
        ) from error
    if isinstance(error, openai.PermissionDeniedError) or status == 403:
        raise ModelError("auth", f"This API key may not use {model}: {text}") from error
    if isinstance(error, openai.NotFoundError) or status == 404:
        raise ModelError(
            "not_found",
            f"Model {model!r} was not found: {text}. Check the model name and api_base.",
        ) from error
    if isinstance(error, openai.RateLimitError) or status == 429:
        return Failure("rate_limited", f"rate limited: {text}", text, retry_after(error))
    if isinstance(error, (openai.APITimeoutError, TimeoutError)):
        return Failure("timeout", f"no answer within {timeout:g} s", text)
    if streaming:  # whatever breaks a stream mid-way, a fresh attempt may not hit it
        return Failure("unavailable", f"stream dropped: {text}", text)
    if isinstance(error, (openai.APIConnectionError, litellm.APIConnectionError)) or (
        text.lower().startswith("connection error")  # litellm reports a dead port as a 500
    ):
        return Failure("unavailable", f"connection failed: {text}", text)
    if isinstance(status, int) and (status >= 500 or status == 408):
        return Failure("unavailable", f"provider error {status}: {text}", text, retry_after(error))
    if isinstance(error, openai.APIError) and status is None:
        return Failure("unavailable", f"provider error: {text}", text)
    raise ModelError("bad_request", f"{model} rejected the request: {text}") from error


def refused_prompt_tokens(error: BaseException) -> int:
    """The prompt's size in the provider's words of a context overflow; 0 when they hold none."""
    match = REFUSED_PROMPT.search(str(error))
    return int(next(group for group in match.groups() if group)) if match else 0


def exhausted_message(failure: Failure, attempts: int, *, model: str, timeout: float) -> str:
    """The one line for the user when every attempt failed."""
    tries = f"{attempts} attempt{'s' if attempts > 1 else ''}"
    if failure.kind == "rate_limited":
        return f"{model} is still rate-limited after {tries} ({failure.detail})."
    if failure.kind == "timeout":
        return f"{model} did not answer within {timeout:g} s ({tries})."
    return f"{model} is unavailable after {tries}: {failure.detail}"


def detail(error: BaseException) -> str:
    """The provider's own words, without litellm's class-name prefixes, on one line."""
    text = str(getattr(error, "message", None) or error)
    text = text.split(" Original exception:")[0].split(" LiteLLM Retried:")[0].strip()
    text = PREFIX.sub("", text).strip()
    line = text.splitlines()[0].strip() if text else ""
    line = line or type(error).__name__
    return shorten(line, 300)


def retry_after(error: BaseException) -> float | None:
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
