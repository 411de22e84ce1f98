"""A scripted OpenAI-compatible server on 127.0.0.1 for tests (stdlib only).

It speaks just enough of the OpenAI wire format for litellm's `openai/...` provider:
`POST /v1/chat/completions` (streaming SSE and plain JSON) and `GET /v1/models`. Each request
consumes the next scripted item: a `Reply` (text and/or tool calls) or a `Fault` (an HTTP error,
a stream cut off mid-way, or a slow answer), both from `tests.fakes.openai_script`. With nothing
scripted it answers "ok".

    with fake_openai_server() as server:
        server.enqueue(Fault(status=429, retry_after=0.01), Reply(text="hello"))
        llm = LLM("openai/fake", api_base=server.base_url)
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes.openai_script import DROPPED_TEXT, Fault, Reply, error_body


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


class FakeOpenAI:
    """A loopback OpenAI-compatible server driven by a queue of `Reply` / `Fault` items."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        """JSON bodies of chat completion requests, in arrival order."""
        self.headers: list[dict[str, str]] = []
        """Request headers (lower-case names), parallel to `requests`."""
        self._script: deque[Reply | Fault] = deque()
        self._lock = threading.Condition()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    def start(self) -> FakeOpenAI:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        server.daemon_threads = True
        server.fake = self  # type: ignore[attr-defined]
        self._server = server
        self.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=server.serve_forever, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def enqueue(self, *items: Reply | Fault) -> None:
        """Script the next responses, consumed one per chat completion request, in order."""
        with self._lock:
            self._script.extend(items)

    def reset(self) -> None:
        """Forget the script and the requests seen (for a server shared across tests)."""
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.headers.clear()

    @property
    def pending(self) -> int:
        """Scripted items not consumed yet."""
        with self._lock:
            return len(self._script)

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> bool:
        """Block until `count` requests arrived (False on timeout); use via asyncio.to_thread."""
        with self._lock:
            return self._lock.wait_for(lambda: len(self.requests) >= count, timeout)

    def _record(self, body: dict[str, Any], headers: dict[str, str]) -> Reply | Fault:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self._lock.notify_all()
            return self._script.popleft() if self._script else Reply(text="ok")

    def _sleep(self, seconds: float) -> bool:
        """Sleep unless the server stops first; True when it stopped."""
        return self._stopping.wait(seconds)


@contextmanager
def fake_openai_server() -> Iterator[FakeOpenAI]:
    """Run a `FakeOpenAI` for the duration of a `with` block."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # keep stderr clean
        pass

    @property
    def fake(self) -> FakeOpenAI:
        return self.server.fake  # type: ignore[attr-defined, no-any-return]

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": [
                        {"id": "fake", "object": "model", "created": 0, "owned_by": "cairn-tests"}
                    ],
                },
            )
        else:
            self._send_json(404, error_body(404, f"no route {self.path}"))

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, error_body(404, f"no route {self.path}"))
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send_json(400, error_body(400, "request body is not JSON"))
            return
        item = self.fake._record(body, {k.lower(): v for k, v in self.headers.items()})
        try:
            self._answer(body, item)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout or cancellation): nothing left to say

    def _answer(self, body: dict[str, Any], item: Reply | Fault) -> None:
        if isinstance(item, Fault):
            if item.delay_s and self.fake._sleep(item.delay_s):
                return
            if item.status is not None:
                headers = {}
                if item.retry_after is not None:
                    headers["Retry-After"] = f"{item.retry_after:g}"
                self._send_json(item.status, item.body or error_body(item.status), headers)
                return
            if item.drop_after_chunks is not None:
                self._stream_dropped(body, item.drop_after_chunks)
                return
            if item.end_after_chunks is not None:
                self._stream_unfinished(body, item.end_after_chunks)
                return
            if item.error_after_chunks is not None or item.garbage_after_chunks is not None:
                chunks = item.error_after_chunks or item.garbage_after_chunks or 0
                self._stream_partial(body, chunks)
                if item.error_after_chunks is not None:
                    self._event(json.dumps(item.body or error_body(500)))
                else:
                    self._event('{"id": "chatcmpl-broken", "choices": [{"delta": {"content": "x')
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
                return
            item = Reply(text="ok")
        if body.get("stream"):
            self._stream(body, item)
        else:
            self._send_json(200, self._completion(body, item))

    # --- plain JSON ------------------------------------------------------------------------

    def _send_json(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
                for call_id, name, args in reply.tool_calls
            ]
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": _finish(reply)}],
            "usage": _usage(reply),
        }

    # --- streaming -------------------------------------------------------------------------

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        # Say the connection closes after the stream: without it the client pools the connection
        # and may send the next request on it as the server closes it ("Connection error").
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _event(self, data: str) -> None:
        payload = f"data: {data}\n\n".encode()
        self.wfile.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
        self.wfile.flush()

    def _chunk(
        self,
        body: dict[str, Any],
        stream_id: str,
        choices: list[dict[str, Any]],
        usage: dict[str, int] | None = None,
    ) -> None:
        chunk: dict[str, Any] = {
            "id": stream_id,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": choices,
        }
        if usage is not None:
            chunk["usage"] = usage
        self._event(json.dumps(chunk))

    def _stream(self, body: dict[str, Any], reply: Reply) -> None:
        stream_id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        self._start_stream()

        def delta(content: dict[str, Any], finish: str | None = None) -> None:
            self._chunk(body, stream_id, [{"index": 0, "delta": content, "finish_reason": finish}])

        delta({"role": "assistant", "content": ""})
        for piece in _pieces(reply.text, reply.split):
            delta({"content": piece})
        for index, (call_id, name, args) in enumerate(reply.tool_calls):
            delta(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                }
            )
            for piece in _pieces(args, reply.split):
                delta({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        delta({}, _finish(reply))
        if reply.streamed_usage and (body.get("stream_options") or {}).get("include_usage"):
            self._chunk(body, stream_id, [], usage=_usage(reply))
        self._event("[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _stream_partial(self, body: dict[str, Any], chunks: int) -> None:
        """`chunks` pieces of `DROPPED_TEXT`, none with a finish reason."""
        stream_id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        self._start_stream()
        for index, piece in enumerate(_pieces(DROPPED_TEXT, 4)[:chunks]):
            content = {"role": "assistant", "content": piece} if index == 0 else {"content": piece}
            self._chunk(body, stream_id, [{"index": 0, "delta": content, "finish_reason": None}])

    def _stream_unfinished(self, body: dict[str, Any], chunks: int) -> None:
        self._stream_partial(body, chunks)
        self.wfile.write(b"0\r\n\r\n")  # a well-formed end of the body
        self.wfile.flush()

    def _stream_dropped(self, body: dict[str, Any], chunks: int) -> None:
        self._stream_partial(body, chunks)
        # No [DONE], no terminating chunk: the peer sees an incomplete chunked body.
        self.connection.shutdown(socket.SHUT_RDWR)


def _finish(reply: Reply) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def _usage(reply: Reply) -> dict[str, int]:
    return {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
    }
