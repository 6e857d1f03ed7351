"""A local chat-completions server on 127.0.0.1 for the model tests and the Mastra comparison.

`ChatServer` answers OpenAI-format ``POST .../chat/completions`` (plain JSON, or server-sent events when the
request says ``"stream": true``, as the AI SDK asks), records every request, and replays scripted responses
(429, 500, slow or malformed bodies) before answering with ``reply(request_body)``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Scripted:
    """A response to send instead of the normal one (after ``delay`` seconds)."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def completion(text: str, prompt_tokens: int = 7, completion_tokens: int = 3) -> dict[str, Any]:
    """A chat-completions response body carrying ``text``."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1,
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class ChatServer:
    """The server; ``url`` is its API root, e.g. ``http://127.0.0.1:PORT/v1``."""

    def __init__(self, reply: Callable[[dict[str, Any]], str] = lambda body: "A test title") -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.script: list[Scripted] = []
        self.reply = reply
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                body = json.loads(raw)
                with server._lock:
                    server.requests.append(body)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    scripted = server.script.pop(0) if server.script else None
                if scripted is not None:
                    time.sleep(scripted.delay)
                    self._send(scripted.status, scripted.body, scripted.headers)
                elif body.get("stream"):
                    self._stream(server.reply(body))
                else:
                    self._send(200, json.dumps(completion(server.reply(body))).encode(), {})

            def _send(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
                try:
                    self.send_response(status)
                    for name, value in {"Content-Type": "application/json", **headers}.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def _stream(self, text: str) -> None:
                base = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1}
                chunks = [
                    {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]},
                    {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                    {
                        **base,
                        "choices": [],
                        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
                    },
                ]
                payload = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
                self._send(200, payload.encode(), {"Content-Type": "text/event-stream"})

            def log_message(self, format: str, *args: Any) -> None:
                """Keep test output quiet."""

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close(self) -> None:
        """Stop serving (bounded: the handler threads are daemons)."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
