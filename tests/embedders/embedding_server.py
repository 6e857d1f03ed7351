"""A local stand-in for the embedding APIs, speaking their documented wire formats on 127.0.0.1.

`EmbeddingServer` answers OpenAI-format ``POST .../embeddings`` and Gemini ``POST
.../models/{model}:batchEmbedContents`` requests, records every request, and replays scripted responses
(429, 500, malformed bodies, ...) before answering normally. Vectors are derived from the text with
SHA-256 (`server_vector`), so tests can compute what a correct client must return.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

DEFAULT_DIM = 8
NO_WAIT = {"retry_base_delay": 0}


def server_vector(text: str, dim: int = DEFAULT_DIM) -> list[float]:
    """The vector the stand-in server returns for ``text``."""
    digest = hashlib.sha256(text.encode()).digest()
    return [(digest[i % 32] + i) / 256.0 for i in range(dim)]


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Scripted:
    """A response to send instead of computing one."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


class EmbeddingServer:
    """The stand-in server. ``url`` is its root, e.g. ``http://127.0.0.1:PORT``."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.script: list[Scripted] = []
        self.reverse_order = True  # OpenAI format: answer out of order, so clients must sort by index
        self.base64 = False
        self.report_usage = True
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode(errors="replace")
                recorded = Recorded("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                status, payload, headers = server.respond(recorded)
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                """Keep test output quiet."""

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def then(self, status: int, body: Any = None, headers: dict[str, str] | None = None) -> EmbeddingServer:
        """Queue a scripted response; ``body`` is JSON-encoded unless it is ``bytes``."""
        if body is None:
            body = {"error": {"message": f"scripted failure {status}"}}
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.script.append(Scripted(status, payload, headers or {}))
        return self

    def respond(self, request: Recorded) -> tuple[int, bytes, dict[str, str]]:
        with self._lock:
            self.requests.append(request)
            scripted = self.script.pop(0) if self.script else None
        if scripted is not None:
            return scripted.status, scripted.body, scripted.headers
        if request.path.endswith("/embeddings"):
            return 200, json.dumps(self._openai(request.body)).encode(), {}
        if request.path.endswith(":batchEmbedContents"):
            return 200, json.dumps(self._google(request.body)).encode(), {}
        return 404, json.dumps({"error": {"message": f"no route {request.path}"}}).encode(), {}

    def _openai(self, body: dict[str, Any]) -> dict[str, Any]:
        dim = body.get("dimensions", DEFAULT_DIM)
        items = []
        for index, text in enumerate(body["input"]):
            vector = server_vector(text, dim)
            if self.base64:
                encoded: Any = base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()
            else:
                encoded = vector
            items.append({"object": "embedding", "index": index, "embedding": encoded})
        if self.reverse_order:
            items.reverse()
        tokens = sum(len(text.split()) for text in body["input"])
        payload: dict[str, Any] = {"object": "list", "data": items, "model": body["model"]}
        if self.report_usage:
            payload["usage"] = {"prompt_tokens": tokens, "total_tokens": tokens}
        return payload

    def _google(self, body: dict[str, Any]) -> dict[str, Any]:
        embeddings = []
        for item in body["requests"]:
            text = item["content"]["parts"][0]["text"]
            embeddings.append({"values": server_vector(text, item.get("outputDimensionality", DEFAULT_DIM))})
        return {"embeddings": embeddings}

    def bodies(self) -> list[Any]:
        """Request bodies, in arrival order."""
        return [r.body for r in self.requests]
