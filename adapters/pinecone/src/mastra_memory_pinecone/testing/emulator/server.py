"""A loopback HTTP stand-in for Pinecone serverless: the control plane and one index's data plane.

It answers the REST calls of the official ``pinecone`` SDK (API version ``2026-07``, the version the SDK
pins in ``pinecone._internal.constants``), with the request and response JSON of the SDK's models:

==========================================  =========================================================
call                                        endpoint
==========================================  =========================================================
create / describe / list / delete index     ``POST /indexes``, ``GET /indexes/{name}``, ``GET /indexes``,
                                            ``DELETE /indexes/{name}``
upsert, query, fetch                        ``POST {host}/vectors/upsert``, ``POST {host}/query``,
                                            ``GET {host}/vectors/fetch?ids=…``
update, delete, describe_index_stats        ``POST {host}/vectors/update``, ``POST {host}/vectors/delete``,
                                            ``POST {host}/describe_index_stats``
==========================================  =========================================================

Every index's ``host`` is ``http://127.0.0.1:<port>/_index/<name>`` on the same server. What it enforces
is Pinecone's documentation (the limits page, "Understanding metadata", "Filter by metadata"):

* metadata values are strings, numbers (stored as 64-bit floats, returned as floats), booleans or lists
  of strings; ``null``, nested objects and other lists are rejected; at most 40 KB of metadata per record;
* at most 1,000 vectors and 2 MB per upsert request, 1,000 ids per fetch or delete, ``topK`` 1–10,000
  (at most 1,000 when values or metadata are returned);
  ids are 1–512 ASCII characters; dense vectors have the index's dimension and at least one non-zero
  value; index names are lowercase alphanumerics and ``-`` (not first or last), at most 45 characters;
* filters through :mod:`.filters` (its own evaluator); an invalid filter is HTTP 400;
* scores: cosine similarity and dot product as they are, euclidean as the *squared* distance (lower is
  better); vectors are stored as float32;
* eventual consistency: a write is acknowledged at once and becomes visible to queries, fetches and
  stats ``visibility_delay`` seconds later, in order; ``update`` with ``setMetadata`` merges keys.

Errors have Pinecone's shape: ``{"error": {"code": "INVALID_ARGUMENT", "message": "…"}, "status": 400}``.

The state and the checks that need no HTTP (records, indexes, ids, metadata, the limits) are in
:mod:`.rules`; this module holds the service and its routes.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import numpy as np

from .filters import FilterRejected, check_filter, matches
from .rules import (
    _METRICS,
    _NAME,
    API_VERSION,
    DEFAULT_API_KEY,
    MAX_DIMENSION,
    MAX_IDS,
    MAX_REQUEST_BYTES,
    MAX_TOP_K,
    MAX_TOP_K_WITH_DATA,
    MAX_UPSERT_VECTORS,
    ApiFailure,
    _check_id,
    _Index,
    _invalid,
    _is_number,
    _Record,
    _stored_metadata,
)

__all__ = [
    "API_VERSION",
    "DEFAULT_API_KEY",
    "PineconeEmulator",
    "running_emulator",
]


class PineconeEmulator:
    """The emulator; use :func:`running_emulator` (or :meth:`start` / :meth:`stop`)."""

    def __init__(
        self,
        *,
        api_key: str = DEFAULT_API_KEY,
        visibility_delay: float = 0.05,
        negation_matches_missing: bool = False,
    ) -> None:
        self.api_key = api_key
        self.visibility_delay = visibility_delay
        self.negation_matches_missing = negation_matches_missing
        self._indexes: dict[str, _Index] = {}
        self._lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        #: (method, path) of every request served, for tests.
        self.requests: list[tuple[str, str]] = []

    # --- lifecycle ----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The control-plane URL (``http://127.0.0.1:<port>``)."""
        if self._server is None:
            raise RuntimeError("the Pinecone emulator is not running")
        return f"http://127.0.0.1:{self._server.server_port}"

    def start(self, deadline: float = 10.0) -> PineconeEmulator:
        """Bind a free loopback port and serve in a daemon thread (ready within ``deadline`` seconds)."""
        emulator = self

        class Handler(_Handler):
            owner = emulator

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self._server = server
        ready = threading.Event()

        def serve() -> None:
            ready.set()
            server.serve_forever(poll_interval=0.05)

        self._thread = threading.Thread(target=serve, name="pinecone-emulator", daemon=True)
        self._thread.start()
        if not ready.wait(deadline):  # pragma: no cover - a thread that never starts
            self.stop()
            raise RuntimeError(f"the Pinecone emulator did not start within {deadline} s")
        return self

    def stop(self, deadline: float = 10.0) -> None:
        """Stop serving and close the socket."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if thread is not None:
            thread.join(deadline)

    # --- state --------------------------------------------------------------------------------

    def _host(self, name: str) -> str:
        return f"{self.url}/_index/{name}"

    def _model(self, index: _Index) -> dict[str, Any]:
        return {
            "name": index.name,
            "status": {"ready": True, "state": "Ready"},
            "schema": {
                "fields": {
                    "_values": {"type": "dense_vector", "dimension": index.dimension, "metric": index.metric}
                }
            },
            "deployment": {"deployment_type": "managed", "cloud": index.cloud, "region": index.region},
            "deletion_protection": "disabled",
            "host": self._host(index.name),
            "read_capacity": {"mode": "OnDemand", "status": {"state": "Ready"}},
        }

    def _index(self, name: str) -> _Index:
        index = self._indexes.get(name)
        if index is None:
            raise ApiFailure(404, "NOT_FOUND", f"Resource {name} not found")
        now = time.monotonic()
        while index.pending and index.pending[0][0] <= now:
            _, apply = index.pending.pop(0)
            apply()
        return index

    def _later(self, index: _Index, apply: Callable[[], None]) -> None:
        if self.visibility_delay <= 0:
            apply()
        else:
            index.pending.append((time.monotonic() + self.visibility_delay, apply))

    def pending_writes(self, name: str) -> int:
        """Writes acknowledged on ``name`` but not yet visible (for tests)."""
        with self._lock:
            index = self._indexes.get(name)
            return 0 if index is None else len(index.pending)

    # --- control plane ------------------------------------------------------------------------

    def create_index(self, body: Any) -> tuple[int, Any]:
        if not isinstance(body, dict):
            raise _invalid("the request body must be a JSON object")
        name = body.get("name")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise _invalid(
                f"invalid index name {name!r}: use 1-45 lowercase alphanumeric characters or '-', "
                "starting and ending with an alphanumeric character"
            )
        fields = (body.get("schema") or {}).get("fields") if isinstance(body.get("schema"), dict) else None
        dense = fields.get("_values") if isinstance(fields, dict) else None
        if not isinstance(dense, dict) or dense.get("type") != "dense_vector":
            raise _invalid(
                "the emulator serves dense vector indexes: schema.fields._values of type dense_vector"
            )
        dimension, metric = dense.get("dimension"), dense.get("metric", "cosine")
        if (
            isinstance(dimension, bool)
            or not isinstance(dimension, int)
            or not 1 <= dimension <= MAX_DIMENSION
        ):
            raise _invalid(f"dimension must be an integer from 1 to {MAX_DIMENSION}, got {dimension!r}")
        if metric not in _METRICS:
            raise _invalid(f"metric must be one of cosine, euclidean, dotproduct, got {metric!r}")
        deployment = body.get("deployment") or {}
        if not isinstance(deployment, dict) or deployment.get("deployment_type", "managed") != "managed":
            raise _invalid("the emulator serves managed (serverless) deployments only")
        if name in self._indexes:
            raise ApiFailure(409, "ALREADY_EXISTS", f"Resource {name} already exists")
        index = _Index(
            name,
            dimension,
            metric,
            str(deployment.get("cloud", "aws")),
            str(deployment.get("region", "us-east-1")),
        )
        self._indexes[name] = index
        return 201, self._model(index)

    # --- data plane ---------------------------------------------------------------------------

    def _vector(self, index: _Index, values: Any, where: str) -> np.ndarray[Any, np.dtype[np.float32]]:
        if not isinstance(values, list) or not all(_is_number(v) for v in values):
            raise _invalid(f"{where}: values must be an array of numbers")
        if len(values) != index.dimension:
            raise _invalid(
                f"{where}: Vector dimension {len(values)} does not match the dimension of the index "
                f"{index.dimension}"
            )
        array = np.asarray(values, dtype=np.float64)
        if not np.all(np.isfinite(array)):
            raise _invalid(f"{where}: values must be finite")
        stored = array.astype(np.float32)
        if not np.any(stored != 0):
            raise _invalid(f"{where}: Dense vectors must contain at least one non-zero value")
        return stored

    def upsert(self, index: _Index, body: Any, size: int) -> dict[str, Any]:
        if size > MAX_REQUEST_BYTES:
            raise _invalid(
                f"Request size {size} bytes exceeds the maximum supported size of {MAX_REQUEST_BYTES}"
            )
        vectors = body.get("vectors")
        if not isinstance(vectors, list) or not vectors:
            raise _invalid("vectors must be a non-empty array")
        if len(vectors) > MAX_UPSERT_VECTORS:
            raise _invalid(
                f"Upsert of {len(vectors)} vectors exceeds the limit of {MAX_UPSERT_VECTORS} per request"
            )
        records: list[tuple[str, _Record]] = []
        for i, item in enumerate(vectors):
            where = f"vectors[{i}]"
            if not isinstance(item, dict):
                raise _invalid(f"{where}: must be an object")
            rid = _check_id(item.get("id"), where)
            values = self._vector(index, item.get("values"), where)
            metadata = _stored_metadata(item.get("metadata") or {}, where)
            records.append((rid, _Record(values, metadata)))
        space = index.namespace(self._ns(body))

        def apply() -> None:
            for rid, record in records:
                space[rid] = record

        self._later(index, apply)
        return {"upsertedCount": len(records)}

    @staticmethod
    def _ns(body: dict[str, Any]) -> str:
        namespace = body.get("namespace", "")
        if not isinstance(namespace, str):
            raise _invalid("namespace must be a string")
        return namespace

    def _filter(self, flt: Any) -> dict[str, Any] | None:
        if flt is None:
            return None
        try:
            check_filter(flt)
        except FilterRejected as exc:
            raise _invalid(f"Invalid filter: {exc}") from exc
        assert isinstance(flt, dict)
        return flt

    def _matching(self, space: dict[str, _Record], flt: dict[str, Any] | None) -> list[tuple[str, _Record]]:
        return [
            (rid, record)
            for rid, record in space.items()
            if flt is None
            or matches(flt, record.metadata, negation_matches_missing=self.negation_matches_missing)
        ]

    def _score(self, index: _Index, query: np.ndarray[Any, Any], stored: np.ndarray[Any, Any]) -> float:
        q, v = query.astype(np.float64), stored.astype(np.float64)
        if index.metric == "dotproduct":
            return float(q @ v)
        if index.metric == "euclidean":
            return float(np.sum((q - v) ** 2))  # squared distance, lower is better
        return float(q @ v / (np.linalg.norm(q) * np.linalg.norm(v)))

    def query(self, index: _Index, body: dict[str, Any]) -> dict[str, Any]:
        top_k = body.get("topK")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
            raise _invalid(f"topK must be an integer from 1 to {MAX_TOP_K}, got {top_k!r}")
        if (body.get("includeValues") or body.get("includeMetadata")) and top_k > MAX_TOP_K_WITH_DATA:
            raise _invalid(
                f"topK must be at most {MAX_TOP_K_WITH_DATA} when includeValues or includeMetadata is true"
            )
        flt = self._filter(body.get("filter"))
        space = index.namespace(self._ns(body))
        if "vector" in body:
            query = self._vector(index, body.get("vector"), "vector")
        elif isinstance(body.get("id"), str):
            found = space.get(body["id"])
            if found is None:
                raise _invalid(f"query by id: no vector with id {body['id']!r}")
            query = found.values
        else:
            raise _invalid("a query needs a vector or an id")
        scored = [(self._score(index, query, r.values), rid, r) for rid, r in self._matching(space, flt)]
        ascending = index.metric == "euclidean"
        scored.sort(key=lambda s: (s[0] if ascending else -s[0], s[1]))
        matches_out = []
        for score, rid, record in scored[:top_k]:
            match: dict[str, Any] = {"id": rid, "score": score}
            if body.get("includeValues"):
                match["values"] = [float(x) for x in record.values]
            if body.get("includeMetadata"):
                match["metadata"] = dict(record.metadata)
            matches_out.append(match)
        return {"matches": matches_out, "namespace": self._ns(body), "usage": {"readUnits": 1}}

    def fetch(self, index: _Index, query: dict[str, list[str]]) -> dict[str, Any]:
        ids = query.get("ids", [])
        if not ids:
            raise _invalid("fetch needs at least one id")
        if len(ids) > MAX_IDS:
            raise _invalid(f"fetch of {len(ids)} ids exceeds the limit of {MAX_IDS}")
        namespace = (query.get("namespace") or [""])[0]
        space = index.namespace(namespace)
        vectors = {}
        for rid in ids:
            _check_id(rid, "ids")
            record = space.get(rid)
            if record is not None:
                vectors[rid] = {
                    "id": rid,
                    "values": [float(x) for x in record.values],
                    "metadata": dict(record.metadata),
                }
        return {"vectors": vectors, "namespace": namespace, "usage": {"readUnits": 1}}

    def update(self, index: _Index, body: dict[str, Any]) -> dict[str, Any]:
        space = index.namespace(self._ns(body))
        set_metadata = body.get("setMetadata")
        patch = _stored_metadata(set_metadata, "setMetadata") if set_metadata is not None else None
        if "id" in body:
            if "filter" in body:
                raise _invalid("update takes an id or a filter, not both")
            rid = _check_id(body["id"], "id")
            values = self._vector(index, body["values"], "values") if body.get("values") is not None else None

            def apply_one() -> None:
                record = space.get(rid)
                if record is None:
                    return
                if values is not None:
                    record.values = values
                if patch is not None:
                    record.metadata = {**record.metadata, **patch}

            self._later(index, apply_one)
            return {"matchedRecords": 1 if rid in space else 0}
        flt = self._filter(body.get("filter"))
        if flt is None or not flt:
            raise _invalid("update needs an id or a non-empty filter")
        if body.get("values") is not None or body.get("sparseValues") is not None:
            raise _invalid("an update by filter changes metadata only")
        if patch is None:
            raise _invalid("an update by filter needs setMetadata")
        matched = len(self._matching(space, flt))
        if not body.get("dryRun"):

            def apply_many() -> None:
                for _, record in self._matching(space, flt):
                    record.metadata = {**record.metadata, **patch}

            self._later(index, apply_many)
        return {"matchedRecords": matched}

    def delete(self, index: _Index, body: dict[str, Any]) -> dict[str, Any]:
        space = index.namespace(self._ns(body))
        selectors = [k for k in ("ids", "deleteAll", "filter") if body.get(k) not in (None, False)]
        if len(selectors) != 1:
            raise _invalid("delete takes exactly one of ids, deleteAll or filter")
        if "ids" in selectors:
            ids = body["ids"]
            if not isinstance(ids, list) or not ids:
                raise _invalid("ids must be a non-empty array")
            if len(ids) > MAX_IDS:
                raise _invalid(f"delete of {len(ids)} ids exceeds the limit of {MAX_IDS}")
            wanted = [_check_id(rid, "ids") for rid in ids]

            def apply_ids() -> None:
                for rid in wanted:
                    space.pop(rid, None)

            self._later(index, apply_ids)
        elif "deleteAll" in selectors:
            self._later(index, space.clear)
        else:
            flt = self._filter(body["filter"])
            if not flt:
                raise _invalid("delete by filter needs a non-empty filter")

            def apply_filter() -> None:
                for rid, _ in self._matching(space, flt):
                    del space[rid]

            self._later(index, apply_filter)
        return {}

    def stats(self, index: _Index, body: dict[str, Any]) -> dict[str, Any]:
        if body.get("filter") is not None:
            raise _invalid("describe_index_stats does not take a filter on serverless indexes")
        spaces = {ns: {"vectorCount": len(records)} for ns, records in index.visible.items() if records}
        return {
            "namespaces": spaces,
            "dimension": index.dimension,
            "indexFullness": 0.0,
            "totalVectorCount": sum(s["vectorCount"] for s in spaces.values()),
            "metric": index.metric,
            "vectorType": "dense",
        }

    # --- routing ------------------------------------------------------------------------------

    def handle(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> tuple[int, Any]:
        """Answer one request: (status, JSON body or None)."""
        self.requests.append((method, target))
        if headers.get("api-key") != self.api_key:
            raise ApiFailure(401, "UNAUTHENTICATED", "Invalid API Key")
        version = headers.get("x-pinecone-api-version")
        if version != API_VERSION:
            raise _invalid(f"unsupported API version {version!r}; the emulator speaks {API_VERSION}")
        url = urlsplit(target)
        parts = [unquote(p) for p in url.path.split("/") if p]
        body: Any = {}
        if raw:
            try:
                body = json.loads(raw)
            except ValueError as exc:
                raise _invalid(f"the request body is not JSON: {exc}") from exc
        with self._lock:
            if parts == ["indexes"]:
                if method == "GET":
                    return 200, {"indexes": [self._model(i) for i in self._indexes.values()]}
                if method == "POST":
                    return self.create_index(body)
            if len(parts) == 2 and parts[0] == "indexes":
                if method == "GET":
                    return 200, self._model(self._index(parts[1]))
                if method == "DELETE":
                    self._index(parts[1])
                    del self._indexes[parts[1]]
                    return 202, None
            if len(parts) >= 3 and parts[0] == "_index":
                index = self._index(parts[1])
                route = "/" + "/".join(parts[2:])
                if not isinstance(body, dict):
                    raise _invalid("the request body must be a JSON object")
                if method == "POST" and route == "/vectors/upsert":
                    return 200, self.upsert(index, body, len(raw))
                if method == "POST" and route == "/query":
                    return 200, self.query(index, body)
                if method == "GET" and route == "/vectors/fetch":
                    return 200, self.fetch(index, parse_qs(url.query))
                if method == "POST" and route == "/vectors/update":
                    return 200, self.update(index, body)
                if method == "POST" and route == "/vectors/delete":
                    return 200, self.delete(index, body)
                if method == "POST" and route == "/describe_index_stats":
                    return 200, self.stats(index, body)
        raise ApiFailure(404, "NOT_FOUND", f"the emulator has no endpoint {method} {url.path}")


class _Handler(BaseHTTPRequestHandler):
    owner: PineconeEmulator
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            status, payload = self.owner.handle(method, self.path, headers, raw)
        except ApiFailure as exc:
            status = exc.status
            payload = {"error": {"code": exc.code, "message": exc.message}, "status": exc.status}
        except Exception as exc:  # pragma: no cover - a bug in the emulator is a 500, never a hang
            status = 500
            payload = {"error": {"code": "INTERNAL", "message": f"emulator error: {exc!r}"}, "status": 500}
        data = b"" if payload is None else json.dumps(payload).encode("utf-8")
        self.send_response(status, HTTPStatus(status).phrase)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_DELETE(self) -> None:
        self._serve("DELETE")


@contextmanager
def running_emulator(**options: Any) -> Iterator[PineconeEmulator]:
    """A started emulator, stopped on exit (``options`` as for :class:`PineconeEmulator`)."""
    emulator = PineconeEmulator(**options).start()
    try:
        yield emulator
    finally:
        emulator.stop()
