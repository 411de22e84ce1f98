"""A loopback HTTP server that serves a JSON schema at any path and counts the requests: what
a `$ref` to a URL would fetch, so a test can say nothing was."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class _Handler(http.server.BaseHTTPRequestHandler):
    hits: list[str]

    def do_GET(self) -> None:
        self.hits.append(self.path)
        body = b'{"type": "string"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def schema_host() -> Iterator[tuple[str, list[str]]]:
    """(the server's URL, the paths asked of it so far)."""
    hits: list[str] = []
    handler = type("Handler", (_Handler,), {"hits": hits})
    listener = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=listener.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.server_port}", hits
    finally:
        listener.shutdown()
        listener.server_close()
