"""``OpenSearchVector``: the ``MastraVector`` contract over OpenSearch k-NN (docs/spec.md §3).

The base class validates input and translates filters before any I/O; this class implements its hooks
with opensearch-py's ``AsyncOpenSearch``:

* **Indexes**: one OpenSearch index per index (``<index_prefix><name>``), ``index.knn: true``, the fixed
  ``dynamic: strict`` mapping of :func:`~mastra_memory_opensearch.layout.index_mapping`: a
  ``knn_vector`` on the **Lucene** engine (always; ``space_type`` ``cosinesimil``/``l2``/``innerproduct``,
  HNSW ``m``/``ef_construction`` from ``index_config``), the metadata as JSON text, and the derived filter
  fields. ``index_config.type="flat"`` keeps the graph but answers every query exactly. The metric and
  parameters are kept in the mapping's ``_meta``.
* **Ids** (docs/spec.md §3.5): ``_id`` is the id itself, or ``uuid5(MASTRA_ID_NAMESPACE, id)`` when it is
  longer than OpenSearch's 512 bytes or has that form itself (so two ids never share a document); the
  original is kept in ``record_id`` and every result carries it.
* **Writes** (docs/spec.md §3.8): bulk requests of at most 500 actions and ``max_bulk_bytes``; the last
  request of a call refreshes the index (``refresh=true``), so a write is visible to the next query.
  Updates and deletes by filter are ``_update_by_query`` / ``_delete_by_query`` with ``refresh=true``,
  repeated while they report version conflicts (a concurrent write), so they never stop half-way.
* **Queries**: the filter goes inside the ``knn`` clause (Lucene's efficient filtering, not a
  post-filter), with ``method_parameters.ef_search``. When a k-NN query returns fewer hits than asked
  while more documents match, it is rerun exactly (``script_score`` with the ``knn_score`` script over the
  filter), so a query never returns fewer than ``top_k`` records when that many match. ``exact=True`` (or a
  ``flat`` index) runs the exact query directly.
* **Scores** (docs/spec.md §3.4): recomputed in float64 from the stored vector (``_source`` keeps it as
  written) and the query — cosine similarity, inner product, ``1 / (1 + L2)``. Hits without a stored
  vector fall back to inverting the Lucene score: cosinesimil ``(1 + cos) / 2``, l2 ``1 / (1 + d²)``,
  innerproduct ``ip + 1`` for ``ip >= 0`` else ``1 / (1 - ip)``.
* **Errors**: a missing index is ``IndexNotFoundError``; connection failures, rejected requests and bulk
  item failures are ``VectorStoreError`` with OpenSearch's reason. Requests that fail on a transient error
  (connection, timeout, 429/502/503/504) are retried by the client up to ``max_retries`` times — every
  request sent here is idempotent.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import numpy as np
import numpy.typing as npt
from mastra_memory.capabilities import AdapterCapabilities, Metric
from mastra_memory.errors import MastraMemoryError, ValidationError, VectorStoreError
from mastra_memory.filters.numbers import integer_out_of_range
from mastra_memory.vector import DEFAULT_EF_CONSTRUCTION, DEFAULT_M
from mastra_memory.vector.base import MastraVector, Matrix, Metadata, QueryRequest, Vector
from mastra_memory.vector.records import IndexConfig, IndexStats, QueryResult, default_ef, native_record_id
from mastra_memory.vector.ties import past_ties
from opensearchpy import AsyncOpenSearch
from opensearchpy.exceptions import ConnectionError as OSConnectionError
from opensearchpy.exceptions import NotFoundError, TransportError

from .capabilities import BULK_ACTIONS, MAX_K, OPENSEARCH_CAPABILITIES
from .layout import (
    METADATA_FIELD,
    RECORD_ID_FIELD,
    VECTOR_FIELD,
    count_elements,
    index_mapping,
    metadata_fields,
    metadata_of,
)
from .lexical import OpenSearchLexicalIndex
from .settings import OpenSearchSettings
from .translate import MATCH_ALL, MATCH_NONE, Clause, OpenSearchFilterTranslator

__all__ = ["META_KEY", "SPACE_TYPES", "OpenSearchVector", "document_id"]

#: The mapping ``_meta`` key that marks an index of this adapter and holds its parameters.
META_KEY: Final = "mastra_memory"
SPACE_TYPES: Final[dict[Metric, str]] = {
    "cosine": "cosinesimil",
    "euclidean": "l2",
    "dotproduct": "innerproduct",
}
_MAX_ID_BYTES: Final = 512
#: Nested documents (array elements) one record may make; the index setting is raised to it.
NESTED_LIMIT: Final = 50_000
_QUERY_OPTIONS: Final = frozenset({"ef", "exact"})
#: Attempts of an update/delete by query that reports version conflicts (concurrent writes).
_CONFLICT_ATTEMPTS: Final = 5
_SOURCE: Final = [VECTOR_FIELD, RECORD_ID_FIELD, METADATA_FIELD]
_UPDATE_SCRIPT: Final = "for (e in params.fields.entrySet()) { ctx._source[e.getKey()] = e.getValue(); }"


def _fits_id(record_id: str) -> bool:
    """Whether OpenSearch takes ``record_id`` as an ``_id`` (at most 512 UTF-8 bytes)."""
    return len(record_id.encode("utf-8")) <= _MAX_ID_BYTES


def document_id(record_id: str) -> str:
    """The OpenSearch ``_id`` of a record id (docs/spec.md §3.5): the id, or its uuid5 when longer than
    512 UTF-8 bytes or itself a canonical version-5 UUID (the ``_id`` another id may map to)."""
    return native_record_id(record_id, _fits_id)


@dataclass(frozen=True, slots=True)
class IndexInfo:
    """What the mapping of an index says."""

    dimension: int
    metric: Metric
    m: int
    flat: bool
    ef_search: int | None


def _reason(exc: TransportError) -> str:
    info = exc.info
    if isinstance(info, dict):
        error = info.get("error")
        if isinstance(error, dict):
            root = error.get("root_cause") or [error]
            first = root[0] if isinstance(root, list) and root else error
            if isinstance(first, dict):
                return f"{first.get('type', 'error')}: {first.get('reason', '')}"
        if isinstance(error, str):
            return error
    return str(exc.error)


def _is_index_missing(exc: TransportError) -> bool:
    return isinstance(exc, NotFoundError) and "index_not_found_exception" in json.dumps(exc.info, default=str)


class OpenSearchVector(MastraVector):
    """OpenSearch k-NN vector store (see the module docstring). Build it with
    ``create_vector("opensearch", url=...)`` or ``OpenSearchVector(OpenSearchSettings(...))``."""

    capabilities: ClassVar[AdapterCapabilities] = OPENSEARCH_CAPABILITIES
    translator = OpenSearchFilterTranslator
    query_options = _QUERY_OPTIONS

    def __init__(
        self, settings: OpenSearchSettings | None = None, client: AsyncOpenSearch | None = None
    ) -> None:
        super().__init__()
        self.settings = settings if settings is not None else OpenSearchSettings()
        self._client = client
        self._infos: dict[str, IndexInfo] = {}
        self._lexical: OpenSearchLexicalIndex | None = None

    # --- the client ---------------------------------------------------------------------------

    @property
    def client(self) -> AsyncOpenSearch:
        """The ``AsyncOpenSearch`` client (created on first use)."""
        if self._client is None:
            s = self.settings
            kwargs: dict[str, Any] = {
                "hosts": s.host_urls,
                "timeout": s.timeout,
                "max_retries": s.max_retries,
                "retry_on_timeout": True,
                "retry_on_status": (429, 502, 503, 504),
                "verify_certs": s.verify_certs,
                "ssl_show_warn": s.verify_certs,
            }
            if s.ca_certs:
                kwargs["ca_certs"] = s.ca_certs
            if s.username is not None:
                password = s.password.get_secret_value() if s.password is not None else ""
                kwargs["http_auth"] = (s.username, password)
            if s.api_key is not None:
                kwargs["headers"] = {"Authorization": f"ApiKey {s.api_key.get_secret_value()}"}
            self._client = AsyncOpenSearch(**kwargs)
        return self._client

    def _index(self, name: str) -> str:
        return self.settings.index_prefix + name

    async def _send(self, operation: str, name: str | None, request: Any) -> Any:
        """Await one request, turning OpenSearch's exceptions into typed errors."""
        try:
            return await request
        except TransportError as exc:
            raise self._typed(operation, name, exc) from exc

    def _typed(self, operation: str, name: str | None, exc: TransportError) -> MastraMemoryError:
        """The typed error of a failed request: a missing index, an unreachable cluster, a refusal."""
        if name is not None and _is_index_missing(exc):
            return self._not_found(operation, name)
        if isinstance(exc, OSConnectionError):
            return self._error(
                VectorStoreError,
                operation,
                "CONNECTION_FAILED",
                f"cannot reach OpenSearch at {', '.join(self.settings.host_urls)} "
                f"({exc.__class__.__name__}: {exc.error}); check the url and that the cluster is up",
                index=name,
            )
        return self._error(
            VectorStoreError,
            operation,
            "FAILED",
            f"OpenSearch refused the {operation.lower()} request (HTTP {exc.status_code}, {_reason(exc)})",
            index=name,
        )

    async def _info(self, operation: str, name: str) -> IndexInfo:
        info = self._infos.get(name)
        if info is None:
            info = await self._read_info(operation, name)
            self._infos[name] = info
        return info

    async def _read_info(self, operation: str, name: str) -> IndexInfo:
        index = self._index(name)
        reply = await self._send(operation, name, self.client.indices.get_mapping(index=index))
        mappings = reply.get(index, {}).get("mappings", {})
        field = mappings.get("properties", {}).get(VECTOR_FIELD)
        meta = (mappings.get("_meta") or {}).get(META_KEY)
        if not isinstance(field, dict) or field.get("type") != "knn_vector" or not isinstance(meta, dict):
            raise self._error(
                ValidationError,
                operation,
                "NOT_A_VECTOR_INDEX",
                f"the OpenSearch index {index!r} was not created by mastra-memory (no {VECTOR_FIELD!r} "
                f"knn_vector field or _meta.{META_KEY}); use another index name",
                index=name,
            )
        metric: Metric = meta.get("metric", "cosine")
        return IndexInfo(
            dimension=int(field["dimension"]),
            metric=metric,
            m=int(meta.get("m", DEFAULT_M)),
            flat=meta.get("type") == "flat",
            ef_search=meta.get("ef_search"),
        )

    # --- hooks: indexes ---------------------------------------------------------------------------

    async def _create_index(
        self,
        name: str,
        dimension: int,
        metric: Metric,
        config: IndexConfig,
        metadata_indexes: list[str],
        options: dict[str, Any],
    ) -> None:
        # metadata_indexes needs nothing: every metadata path is indexed by the derived filter fields.
        m = config.m or DEFAULT_M
        ef_construction = config.ef_construction or DEFAULT_EF_CONSTRUCTION
        meta = {
            META_KEY: {
                "metric": metric,
                "type": config.type or "hnsw",
                "m": m,
                "ef_construction": ef_construction,
                **({"ef_search": config.ef} if config.ef is not None else {}),
            }
        }
        settings: dict[str, Any] = {
            "knn": True,
            "number_of_shards": self.settings.shards,
            "mapping.nested_objects.limit": NESTED_LIMIT,
        }
        if self.settings.replicas is not None:
            settings["number_of_replicas"] = self.settings.replicas
        body = {
            "settings": {"index": settings},
            "mappings": index_mapping(dimension, SPACE_TYPES[metric], m, ef_construction, meta),
        }
        index = self._index(name)
        try:
            await self.client.indices.create(index=index, body=body)
            self._infos.pop(name, None)
            return
        except TransportError as exc:
            if "resource_already_exists_exception" not in json.dumps(exc.info, default=str):
                raise self._typed("CREATE_INDEX", name, exc) from exc
        existing = await self._read_info("CREATE_INDEX", name)
        self._infos[name] = existing
        self._keep_existing(index, existing.dimension, existing.metric, dimension, metric)

    async def _list_indexes(self) -> list[str]:
        prefix = self.settings.index_prefix
        reply = await self._send(
            "LIST_INDEXES", None, self.client.indices.get_mapping(index=f"{prefix}*", allow_no_indices=True)
        )
        names = []
        for index, body in reply.items():
            meta = (body.get("mappings", {}).get("_meta") or {}).get(META_KEY)
            if isinstance(meta, dict) and index.startswith(prefix):
                names.append(index[len(prefix) :])
        return sorted(names)

    async def _describe_index(self, name: str) -> IndexStats:
        info = await self._read_info("DESCRIBE_INDEX", name)
        self._infos[name] = info
        reply = await self._send("DESCRIBE_INDEX", name, self.client.count(index=self._index(name)))
        return IndexStats(dimension=info.dimension, count=int(reply["count"]), metric=info.metric)

    def lexical_index(self) -> OpenSearchLexicalIndex:
        """The BM25 index beside this store's indexes, for hybrid recall (:mod:`.lexical`); one per store."""
        self._lexical = self._lexical or OpenSearchLexicalIndex(self)
        return self._lexical

    async def _delete_index(self, name: str) -> None:
        self._infos.pop(name, None)
        await self.lexical_index().drop(name)  # its texts' sibling index goes with it
        try:
            await self.client.indices.delete(index=self._index(name))
        except NotFoundError:
            return
        except TransportError as exc:
            raise self._typed("DELETE_INDEX", name, exc) from exc

    # --- hooks: writes ------------------------------------------------------------------------------

    def _metadata_problem(self, metadata: dict[str, Any], record_id: str | None = None) -> str | None:
        """Why OpenSearch cannot hold ``metadata`` (the ``int64-range`` deviation, the nested-document
        limit), or None. Runs in the shared validation, before any I/O (docs/spec.md §3.3, §3.6), so a
        refused record costs no request and ``Memory`` refuses it before it stores a message."""
        bad = integer_out_of_range(metadata)
        if bad is not None:
            return (
                f"the integer at {bad} is outside the signed 64-bit range, which the OpenSearch adapter "
                "cannot filter exactly (declared deviation int64-range); store it as a string or a float"
            )
        nested = count_elements(metadata_fields(metadata))
        if nested > NESTED_LIMIT:
            return (
                f"the metadata holds {nested} objects inside arrays; OpenSearch indexes each as a nested "
                f"document and this adapter allows {NESTED_LIMIT} per record; store fewer"
            )
        return None

    def _bulk_bodies(self, lines: list[tuple[str, str | None]]) -> Iterator[str]:
        """NDJSON bodies of at most 500 actions and ``max_bulk_bytes`` (one action always fits alone)."""
        limit = self.settings.max_bulk_bytes
        chunk: list[str] = []
        size = 0
        actions = 0
        for action, source in lines:
            text = action + "\n" + (source + "\n" if source is not None else "")
            if chunk and (actions >= BULK_ACTIONS or size + len(text) > limit):
                yield "".join(chunk)
                chunk, size, actions = [], 0, 0
            chunk.append(text)
            size += len(text)
            actions += 1
        if chunk:
            yield "".join(chunk)

    async def _bulk(self, operation: str, name: str, lines: list[tuple[str, str | None]]) -> None:
        bodies = list(self._bulk_bodies(lines))
        for i, body in enumerate(bodies):
            refresh = "true" if i == len(bodies) - 1 else "false"
            reply = await self._send(operation, name, self.client.bulk(body=body, refresh=refresh))
            if reply.get("errors"):
                for item in reply.get("items", []):
                    result = next(iter(item.values()))
                    error = result.get("error")
                    if error is None or (result.get("status") == 404 and operation != "UPSERT"):
                        continue
                    if isinstance(error, dict) and error.get("type") == "index_not_found_exception":
                        raise self._not_found(operation, name)
                    reason = (
                        f"{error.get('type')}: {error.get('reason')}" if isinstance(error, dict) else error
                    )
                    raise self._error(
                        VectorStoreError,
                        operation,
                        "FAILED",
                        f"OpenSearch rejected record {result.get('_id')!r} ({reason}); records of earlier "
                        "batches of this call were written",
                        index=name,
                    )

    async def _upsert(self, name: str, ids: list[str], vectors: Matrix, metadata: list[Metadata]) -> None:
        index = self._index(name)
        lines: list[tuple[str, str | None]] = []
        for i, rid in enumerate(ids):
            fields = metadata_fields(metadata[i])
            source = {VECTOR_FIELD: vectors[i].tolist(), RECORD_ID_FIELD: rid, **fields}
            action = json.dumps({"index": {"_index": index, "_id": document_id(rid)}}, ensure_ascii=False)
            lines.append((action, json.dumps(source, ensure_ascii=False, allow_nan=False)))
        await self._bulk("UPSERT", name, lines)

    async def _update_by_id(
        self, name: str, id: str, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        doc: dict[str, Any] = {}
        if metadata is not None:
            doc.update(metadata_fields(metadata))
        if vector is not None:
            doc[VECTOR_FIELD] = vector.tolist()
        try:
            await self.client.update(
                index=self._index(name),
                id=document_id(id),
                body={"doc": doc},
                refresh="true",
                retry_on_conflict=5,
            )
        except NotFoundError as exc:
            if _is_index_missing(exc):
                raise self._not_found("UPDATE_VECTOR", name) from exc
            return  # document_missing_exception: a missing id is a no-op
        except TransportError as exc:
            raise self._typed("UPDATE_VECTOR", name, exc) from exc

    async def _by_query(self, operation: str, name: str, method: Any, body: dict[str, Any]) -> None:
        """Run an update/delete by query to the end: again while it reports version conflicts."""
        for attempt in range(_CONFLICT_ATTEMPTS):
            reply = await self._send(
                operation,
                name,
                method(index=self._index(name), body=body, refresh=True, conflicts="proceed"),
            )
            failures = reply.get("failures") or []
            if failures:
                raise self._error(
                    VectorStoreError,
                    operation,
                    "FAILED",
                    f"OpenSearch failed part of the {operation.lower()} by filter: {failures[0]}",
                    index=name,
                )
            if not reply.get("version_conflicts"):
                return
            await asyncio.sleep(0.05 * (attempt + 1))
        raise self._error(
            VectorStoreError,
            operation,
            "CONFLICT",
            f"records kept changing during the {operation.lower()} by filter "
            f"({_CONFLICT_ATTEMPTS} attempts); retry when concurrent writes to the index have stopped",
            index=name,
        )

    async def _update_by_filter(
        self, name: str, native_filter: Any, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        query: Clause = native_filter
        if query == MATCH_NONE:
            return
        fields: dict[str, Any] = {}
        if metadata is not None:
            fields.update(metadata_fields(metadata))
        if vector is not None:
            fields[VECTOR_FIELD] = vector.tolist()
        body = {
            "query": query,
            "script": {"lang": "painless", "source": _UPDATE_SCRIPT, "params": {"fields": fields}},
        }
        await self._by_query("UPDATE_VECTOR", name, self.client.update_by_query, body)

    async def _delete_by_ids(self, name: str, ids: list[str]) -> None:
        index = self._index(name)
        lines: list[tuple[str, str | None]] = [
            (json.dumps({"delete": {"_index": index, "_id": document_id(i)}}, ensure_ascii=False), None)
            for i in dict.fromkeys(ids)
        ]
        await self._bulk("DELETE_VECTORS", name, lines)

    async def _delete_by_filter(self, name: str, native_filter: Any) -> None:
        query: Clause = native_filter
        if query == MATCH_NONE:
            return
        await self._by_query("DELETE_VECTORS", name, self.client.delete_by_query, {"query": query})

    # --- hooks: queries -----------------------------------------------------------------------------

    def _ef(self, info: IndexInfo, top_k: int, options: Mapping[str, Any]) -> int:
        ef = options.get("ef", info.ef_search)
        if ef is None:
            ef = default_ef(top_k, info.m)
        return self._count_option("ef", ef)

    async def _search(self, name: str, body: dict[str, Any]) -> list[dict[str, Any]]:
        reply = await self._send("QUERY", name, self.client.search(index=self._index(name), body=body))
        hits: list[dict[str, Any]] = reply["hits"]["hits"]
        return hits

    async def _knn(
        self, name: str, query: list[float], k: int, ef: int, flt: Clause | None
    ) -> list[dict[str, Any]]:
        knn: dict[str, Any] = {"vector": query, "k": k, "method_parameters": {"ef_search": max(ef, k)}}
        if flt is not None:
            knn["filter"] = flt
        body = {"size": k, "_source": _SOURCE, "query": {"knn": {VECTOR_FIELD: knn}}}
        return await self._search(name, body)

    async def _exact(
        self, name: str, info: IndexInfo, query: list[float], k: int, flt: Clause | None
    ) -> list[dict[str, Any]]:
        body = {
            "size": k,
            "_source": _SOURCE,
            "query": {
                "script_score": {
                    "query": {"bool": {"filter": [flt]}} if flt is not None else MATCH_ALL,
                    "script": {
                        "lang": "knn",
                        "source": "knn_score",
                        "params": {
                            "field": VECTOR_FIELD,
                            "query_value": query,
                            "space_type": SPACE_TYPES[info.metric],
                        },
                    },
                }
            },
        }
        return await self._search(name, body)

    async def _count(self, name: str, flt: Clause | None) -> int:
        body = {"query": flt} if flt is not None else None
        reply = await self._send("QUERY", name, self.client.count(index=self._index(name), body=body))
        return int(reply["count"])

    async def _query(self, request: QueryRequest) -> list[QueryResult]:
        info = await self._info("QUERY", request.name)
        ef = self._ef(info, request.top_k, request.options)
        flt: Clause | None = request.native_filter
        if flt == MATCH_NONE:
            return []
        if flt == MATCH_ALL:
            flt = None
        if request.vector is None:
            return await self._listing(request.name, request.top_k, flt, request.include_vector)
        exact = bool(request.options.get("exact", False)) or info.flat
        query = request.vector.tolist()

        async def search(k: int) -> list[dict[str, Any]]:
            nonlocal exact
            if not exact:
                hits = await self._knn(request.name, query, k, ef, flt)
                # Fewer than asked while more match (a filtered HNSW search can run out of candidates):
                # rerun exactly, so the answer never has fewer than top_k records when that many match.
                if len(hits) >= k or await self._count(request.name, flt) <= len(hits):
                    return hits
                exact = True
            return await self._exact(request.name, info, query, k, flt)

        # Ties at the cut-off are broken by id (docs/spec.md §3.1): past_ties asks for more while they tie.
        hits = await past_ties(search, request.top_k, lambda hit: hit["_score"], MAX_K)
        return [self._result(hit, request.vector, info.metric, request.include_vector) for hit in hits]

    async def _listing(
        self, name: str, top_k: int, flt: Clause | None, include_vector: bool
    ) -> list[QueryResult]:
        """The metadata-only query (§3.1): the first matches by ``record_id`` (UTF-8 order: code points)."""
        query = {"bool": {"filter": [flt]}} if flt is not None else MATCH_ALL
        body = {"size": top_k, "_source": _SOURCE, "query": query, "sort": [{RECORD_ID_FIELD: "asc"}]}
        return [self._result(hit, None, "cosine", include_vector) for hit in await self._search(name, body)]

    def _result(
        self, hit: dict[str, Any], query: npt.NDArray[np.float64] | None, metric: Metric, include_vector: bool
    ) -> QueryResult:
        source = hit.get("_source") or {}
        stored = source.get(VECTOR_FIELD)
        if query is None:  # a metadata-only query
            score = 0.0
        else:
            score = (
                _score(metric, query, stored) if isinstance(stored, list) else _invert(metric, hit["_score"])
            )
        return QueryResult(
            id=str(source.get(RECORD_ID_FIELD, hit["_id"])),
            score=score,
            metadata=metadata_of(source),
            vector=[float(x) for x in stored] if include_vector and isinstance(stored, list) else None,
        )

    # --- extras -----------------------------------------------------------------------------------

    async def close(self) -> None:
        """Close the client's connections."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()


def _score(metric: Metric, query: npt.NDArray[np.float64], stored: list[Any]) -> float:
    """The portable score of docs/spec.md §3.4, in float64 from the stored vector."""
    v = np.asarray(stored, dtype=np.float64)
    if metric == "cosine":
        denominator = float(np.linalg.norm(query) * np.linalg.norm(v))
        return float(np.dot(query, v)) / denominator if denominator > 0 else 0.0
    if metric == "dotproduct":
        return float(np.dot(query, v))
    return 1.0 / (1.0 + float(np.linalg.norm(query - v)))


def _invert(metric: Metric, native: float) -> float:
    """The portable score from a Lucene engine score (docs/spec.md §3.4)."""
    if metric == "cosine":
        return 2.0 * native - 1.0
    if metric == "dotproduct":
        return native - 1.0 if native >= 1.0 else 1.0 - 1.0 / native
    if native <= 0:
        return 0.0
    return 1.0 / (1.0 + math.sqrt(max(1.0 / native - 1.0, 0.0)))
