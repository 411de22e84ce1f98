"""What the fake OpenAI server (`tests.fakes.openai_server`) is scripted with (stdlib only).

A `Reply` is one successful completion, a `Fault` one failed request (an HTTP error, a stream cut
off mid-way, or a slow answer); `overflow` gives the faults each kind of server sends when a prompt
exceeds its context window, and `error_body` an OpenAI-shaped error body.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DROPPED_TEXT = "This answer is cut off before it ends, mid-sentence and mid-thought."
"""What a `Fault(drop_after_chunks=N)` streams (in 4-character pieces) before the socket closes."""

_DEFAULT_ERRORS: dict[int, tuple[str, str, str | None]] = {
    400: ("Invalid request.", "invalid_request_error", None),
    401: ("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"),
    403: ("You are not allowed to use this model.", "invalid_request_error", None),
    404: ("The model does not exist.", "invalid_request_error", "model_not_found"),
    429: ("Rate limit reached, please retry later.", "requests", "rate_limit_exceeded"),
    500: ("The server had an error while processing your request.", "server_error", None),
    503: ("The engine is currently overloaded.", "server_error", None),
}


@dataclass
class Reply:
    """One successful completion."""

    text: str = ""
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)
    """(id, name, arguments JSON text); the arguments are sent verbatim, valid or not."""
    prompt_tokens: int = 42
    completion_tokens: int = 9
    split: int = 4
    """Characters per streamed piece of text or tool arguments."""
    finish_reason: str | None = None
    """Overrides the natural finish reason ("tool_calls" or "stop"), e.g. "length"."""
    streamed_usage: bool = True
    """Whether a stream ends with the usage chunk `include_usage` asks for; llama.cpp's server
    sends none (a whole response carries usage either way)."""


@dataclass
class Fault:
    """One failed request: an HTTP error, a dropped stream, or a slow answer."""

    status: int | None = None
    body: dict[str, Any] | None = None
    """The JSON error body; a realistic OpenAI error body for `status` when None."""
    retry_after: float | None = None
    """Sent as a Retry-After header (seconds)."""
    drop_after_chunks: int | None = None
    """Stream this many SSE chunks of `DROPPED_TEXT`, then close the socket without [DONE]."""
    end_after_chunks: int | None = None
    """Stream this many SSE chunks of `DROPPED_TEXT`, then end the body cleanly with neither a
    finish reason nor [DONE]: a server that gave up mid-answer (0 chunks: an empty stream)."""
    error_after_chunks: int | None = None
    """Stream this many SSE chunks of `DROPPED_TEXT`, then an SSE event `{"error": …}` (the
    `body`'s error, or a 500's) and the end of the body: an error that happens mid-stream."""
    garbage_after_chunks: int | None = None
    """Stream this many SSE chunks of `DROPPED_TEXT`, then a chunk that is not JSON, then end."""
    delay_s: float = 0.0
    """Sleep this long before answering (for client timeouts); then answer "ok"."""


def overflow(dialect: str, window: int = 2048, requested: int = 2121) -> list[Fault]:
    """What each server sends when a prompt exceeds its context window (`OVERFLOW_DIALECTS`).

    llama-cpp-python streams nothing after its 200 and closes the stream; only the same request
    without streaming gets the error, so its dialect is two faults.
    """
    openai = (
        f"This model's maximum context length is {window} tokens. However, you requested "
        f"{requested} tokens ({requested} in the messages, None in the completion). Please "
        "reduce the length of the messages or completion."
    )
    messages = {
        "openai": error_body(400, openai, code="context_length_exceeded"),
        "anthropic": {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": f"prompt is too long: {requested} tokens > {window} maximum",
            },
        },
        "llama.cpp": {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": requested,
                "n_ctx": window,
            }
        },
        "vllm": error_body(
            400,
            f"The decoder prompt (length {requested}) is longer than the maximum model length "
            f"of {window}. Make sure that `max_model_len` is no smaller than the number of text "
            "tokens.",
        ),
        "ollama": error_body(400, "input length exceeds maximum context length"),
    }
    if dialect == "llama-cpp-python":
        return [Fault(end_after_chunks=0), Fault(status=400, body=messages["openai"])]
    return [Fault(status=400, body=messages[dialect])]


OVERFLOW_DIALECTS = ("openai", "anthropic", "llama.cpp", "llama-cpp-python", "vllm", "ollama")


def error_body(status: int, message: str | None = None, code: str | None = None) -> dict[str, Any]:
    """An OpenAI-shaped error body, e.g. `error_body(400, "maximum context length is 8192")`."""
    default_message, kind, default_code = _DEFAULT_ERRORS.get(
        status, ("Request failed.", "error", None)
    )
    return {
        "error": {
            "message": message or default_message,
            "type": kind,
            "param": None,
            "code": code or default_code,
        }
    }
