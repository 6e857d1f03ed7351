"""The LanceDB vector store: one Lance table per index, metadata kept verbatim and as JSONB.

Table layout: a row per record, the metadata as JSON text (what reads return) and as JSONB (what filters
read), index columns for ``metadata_indexes`` keys; the schema metadata describes the table to every
process that opens it (:mod:`.layout`).

Writes are ``merge_insert`` on ``id`` (insert or replace whole rows, never a table overwrite), split into
batches of ``max_upsert_batch`` rows and serialised per table inside one store. A delete that matches
nothing is only a count (Lance would commit a version for it). Every
``optimize_every`` write calls the table is optimised (fragments compacted, indexes updated), and once
it holds ``index_min_rows`` rows the configured ANN index is trained (:mod:`.ann`).

Queries (see ``translate.py`` for the bounds): an exact filter is a Lance prefilter of the vector
search. Otherwise the rows SQL cannot decide — ``upper AND NOT lower`` — are read and judged by the
reference evaluator, and the search runs over ``lower OR id IN (matches)``; when that list would be
long the query becomes an exact scan of ``upper`` scored in numpy. With an ANN index the search probes
as many partitions as needed (``maximum_nprobes(0)``), re-ranks quantised candidates with full
vectors, and is repeated as an exact scan in the rare case that it still returns fewer than ``top_k``
rows while more match. Scores follow docs/spec.md §3.4: cosine ``1 - d``, euclidean ``1 / (1 + sqrt(d))``
(Lance
reports squared L2), dot product ``1 - d``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any, Final

import lancedb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
from lancedb.index import BTree, LabelList
from mastra_memory.capabilities import Metric
from mastra_memory.errors import IndexNotFoundError, ValidationError
from mastra_memory.filters import matches
from mastra_memory.vector.base import MastraVector, Matrix, Metadata, QueryRequest, Vector
from mastra_memory.vector.records import IndexConfig, IndexStats, QueryResult, default_ef

from . import layout
from .ann import DISTANCE_TYPES, drop_unselective_indexes, train
from .capabilities import LANCEDB_CAPABILITIES
from .layout import FLOAT32, INDEX_PREFIX, TableInfo
from .lexical import LanceDBLexicalIndex, is_lexical_table
from .settings import LanceDBSettings
from .translate import (
    FALSE,
    TRUE,
    LanceDBTranslator,
    LanceFilter,
    sql_string,
)

__all__ = ["LANCEDB_CAPABILITIES", "LanceDBVector"]

logger = logging.getLogger("mastra_memory_lancedb")

_QUANTISATIONS: Final = ("sq", "pq", "none")
# Rows returned beyond top_k so that records tied at the cut-off are ordered by id (docs/spec.md §3.1).
_TIE_MARGIN: Final = 8
# Longest ``id IN (...)`` list spliced into a query; beyond it a query scans exactly instead.
_IN_LIST_LIMIT: Final = 2000
# Ids per ``DELETE ... WHERE id IN (...)`` statement.
_DELETE_CHUNK: Final = 1000


def _score(metric: Metric, distance: float) -> float:
    """Lance's ``_distance`` -> the portable score of docs/spec.md §3.4."""
    if math.isnan(distance):
        # Cosine against a zero vector. The core refuses zero vectors on cosine indexes (docs/spec.md §3.3),
        # so only a row written before that rule gets here (Lance itself leaves such rows out of searches).
        return 0.0
    if metric == "euclidean":
        return 1.0 / (1.0 + math.sqrt(max(distance, 0.0)))
    return 1.0 - distance


def _in_ids(ids: Iterable[str]) -> str:
    return f"id IN ({', '.join(sql_string(i) for i in ids)})"


def _or(*parts: str) -> str:
    kept = [p for p in parts if p != FALSE]
    if TRUE in kept:
        return TRUE
    if not kept:
        return FALSE
    return kept[0] if len(kept) == 1 else "(" + " OR ".join(f"({p})" for p in kept) + ")"


class LanceDBVector(MastraVector):
    """A ``MastraVector`` over LanceDB: a local directory, an object store, or LanceDB Cloud.

    Args:
        settings: :class:`LanceDBSettings`, or a URL/path string (``"./lancedb"``, ``"s3://bucket/db"``).

    ``create_index`` takes one adapter option, ``quantization``: ``"sq"`` (default for ``hnsw``),
    ``"pq"`` (IVF-PQ / HNSW-PQ) or ``"none"`` (default for ``ivfflat``). ``query`` takes ``ef`` and
    ``probes``. :meth:`build_index` trains the ANN index at once instead of waiting for
    ``index_min_rows``.
    """

    capabilities = LANCEDB_CAPABILITIES
    translator = LanceDBTranslator
    query_options = frozenset({"ef", "probes"})
    create_options = frozenset({"quantization"})

    def __init__(self, settings: LanceDBSettings | str | None = None) -> None:
        super().__init__()
        self.settings = LanceDBSettings.given(settings)
        self._db: Any = None
        self._connect_lock = asyncio.Lock()
        self._tables: dict[str, TableInfo] = {}
        self._lexical: LanceDBLexicalIndex | None = None

    # --- connection and tables -------------------------------------------------------------------

    async def _connection(self) -> Any:
        if self._db is None:
            async with self._connect_lock:
                if self._db is None:
                    s = self.settings
                    interval = s.read_consistency_interval
                    self._db = await lancedb.connect_async(
                        s.url,
                        api_key=s.api_key.get_secret_value() if s.api_key else None,
                        region=s.region,
                        host_override=s.host_override,
                        read_consistency_interval=None if interval is None else timedelta(seconds=interval),
                        storage_options=dict(s.storage_options) or None,
                    )
        return self._db

    async def close(self) -> None:
        """Forget open tables and the connection (LanceDB holds no server connection to close)."""
        for info in self._tables.values():
            info.table.close()
        self._tables.clear()
        if self._lexical is not None:
            self._lexical.forget()
        self._db = None

    async def _open(self, operation: str, name: str) -> TableInfo:
        info = self._tables.get(name)
        if info is not None:
            return info
        db = await self._connection()
        try:
            table = await db.open_table(name)
        except ValueError as exc:
            if "not found" in str(exc) or "does not exist" in str(exc):
                raise self._not_found(operation, name) from exc
            raise
        info = await layout.describe_table(table)
        self._tables[name] = info
        return info

    def _forget(self, name: str) -> None:
        info = self._tables.pop(name, None)
        if info is not None:
            info.table.close()

    # --- hooks: indexes ----------------------------------------------------------------------------

    async def _create_index(
        self,
        name: str,
        dimension: int,
        metric: Metric,
        config: IndexConfig,
        metadata_indexes: list[str],
        options: dict[str, Any],
    ) -> None:
        op = "CREATE_INDEX"
        kind = config.type or "hnsw"
        quantization = options.get("quantization", "sq" if kind == "hnsw" else "none")
        if quantization not in _QUANTISATIONS:
            raise self._error(
                ValidationError, op, "INVALID_ARGS",
                f"quantization must be one of {list(_QUANTISATIONS)}, got {quantization!r}",
            )  # fmt: skip
        index = {
            "type": kind,
            "quantization": quantization,
            **config.model_dump(exclude_none=True, exclude={"type", "metric"}),
        }
        keys = list(dict.fromkeys(k for k in metadata_indexes if "." not in k))
        try:
            info = await self._open(op, name)
        except IndexNotFoundError:
            pass  # created below
        else:
            self._check_existing(info, name, dimension, metric, index, keys)
            return
        db = await self._connection()
        try:
            table = await db.create_table(name, schema=layout.schema(dimension, metric, index, keys))
        except ValueError as exc:
            if "already exists" not in str(exc):
                raise
            # Created concurrently by someone else: hold it to the same rules as an existing one.
            self._check_existing(await self._open(op, name), name, dimension, metric, index, keys)
            return
        await table.create_index("id", config=BTree())
        for i in range(len(keys)):
            await table.create_index(f"{INDEX_PREFIX}{i}", config=LabelList())
        self._tables[name] = await layout.describe_table(table)

    def _check_existing(
        self,
        info: TableInfo,
        name: str,
        dimension: int,
        metric: Metric,
        index: Mapping[str, Any],
        keys: Sequence[str],
    ) -> None:
        self._keep_existing(name, info.dimension, info.metric, dimension, metric)
        if dict(index) != info.index:
            logger.warning(
                "index %r already exists with ANN configuration %s; keeping it (asked for %s)",
                name, info.index, dict(index),
            )  # fmt: skip
        missing = [k for k in keys if k not in info.indexed]
        if missing:
            logger.info("index %r: no index column for keys %s (named after creation)", name, missing)

    async def _list_indexes(self) -> list[str]:
        db = await self._connection()
        names: list[str] = []
        token: str | None = None
        while True:
            page = await db.list_tables(page_token=token)
            names.extend(n for n in page.tables if not is_lexical_table(n))  # texts' siblings: no index
            token = page.page_token
            if not token:
                return sorted(names)

    async def _describe_index(self, name: str) -> IndexStats:
        info = await self._open("DESCRIBE_INDEX", name)
        count = await info.table.count_rows()
        return IndexStats(dimension=info.dimension, count=int(count), metric=info.metric)

    async def _delete_index(self, name: str) -> None:
        self._forget(name)
        db = await self._connection()
        await db.drop_table(name, ignore_missing=True)
        await self.lexical_index().drop(name)  # its texts' sibling table goes with it

    def lexical_index(self) -> LanceDBLexicalIndex:
        """The full-text index beside this store's tables, for hybrid recall (:mod:`.lexical`)."""
        self._lexical = self._lexical or LanceDBLexicalIndex(self)
        return self._lexical

    # --- hooks: writes -----------------------------------------------------------------------------

    async def _upsert(self, name: str, ids: list[str], vectors: Matrix, metadata: list[Metadata]) -> None:
        op = "UPSERT"
        texts = [layout.metadata_json(m) for m in metadata]
        info = await self._open(op, name)
        self._check_dimension(op, name, info.dimension, vectors.shape[1])
        batch = layout.rows(info, ids, vectors, texts)
        await self._merge(info, batch, insert=True)

    async def _merge(self, info: TableInfo, rows: pa.Table, *, insert: bool) -> None:
        """Merge ``rows`` on ``id`` in batches: replace matching rows, insert new ones if ``insert``."""
        size = self.capabilities.max_upsert_batch or rows.num_rows
        async with info.lock:
            for start in range(0, rows.num_rows, size):
                builder = info.table.merge_insert("id").when_matched_update_all()
                if insert:
                    builder = builder.when_not_matched_insert_all()
                result = await builder.execute(rows.slice(start, size))
                if info.rows is not None:
                    info.rows += result.num_inserted_rows
            await self._maintain(info)

    async def _maintain(self, info: TableInfo) -> None:
        """Optimise every ``optimize_every`` writes; train the ANN index once the table is big enough.

        Runs under the table's write lock. Maintenance never fails a write: problems are logged.
        """
        info.writes += 1
        try:
            optimize = info.writes % self.settings.optimize_every == 0
            wants_ann = not info.has_ann and info.index.get("type", "flat") != "flat"
            if wants_ann:
                # Counting every write checks out the latest table version; the estimate (this store's
                # inserts since the last count) is re-counted at each optimize and near the threshold, so
                # other writers' rows delay training by at most ``optimize_every`` writes.
                if optimize or info.rows is None or info.rows >= self.settings.index_min_rows:
                    info.rows = int(await info.table.count_rows())
                if info.rows >= self.settings.index_min_rows:
                    await train(info)
                    return
            if optimize:
                await drop_unselective_indexes(info)
                await info.table.optimize()
        except Exception:
            logger.warning("lancedb table maintenance failed; it is retried later", exc_info=True)

    async def build_index(self, index_name: str) -> None:
        """Train the configured ANN index now (normally it is trained at ``index_min_rows`` rows).

        A no-op for indexes configured as ``flat``. Lance needs at least a few hundred rows to train.
        """
        info = await self._open("CREATE_INDEX", self._native_name("CREATE_INDEX", index_name))
        if info.index.get("type", "flat") == "flat":
            return
        async with info.lock:
            await train(info)

    async def _update_by_id(
        self, name: str, id: str, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        info = await self._open("UPDATE_VECTOR", name)
        rows = await self._rows(info, f"id = {sql_string(id)}", ["id", "vector", "metadata"])
        await self._rewrite(info, rows, vector, metadata)

    async def _update_by_filter(
        self, name: str, native_filter: Any, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        info = await self._open("UPDATE_VECTOR", name)
        flt = self._render(info, native_filter)
        rows = await self._matching_rows(info, flt, ["id", "vector", "metadata"])
        await self._rewrite(info, rows, vector, metadata)

    async def _rewrite(
        self, info: TableInfo, rows: pa.Table, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        """Replace the vector and/or metadata of ``rows`` (only rows that still exist are written)."""
        if rows.num_rows == 0:
            return
        ids = rows["id"].to_pylist()
        matrix: npt.NDArray[np.floating[Any]]
        if vector is not None:
            matrix = np.tile(vector, (len(ids), 1))
        else:
            matrix = layout.matrix(rows["vector"], info.dimension)
        if metadata is not None:
            text = layout.metadata_json(metadata)
            texts = [text] * len(ids)
        else:
            texts = rows["metadata"].to_pylist()
        await self._merge(info, layout.rows(info, ids, matrix, texts), insert=False)

    async def _delete_by_ids(self, name: str, ids: list[str]) -> None:
        info = await self._open("DELETE_VECTORS", name)
        async with info.lock:
            for start in range(0, len(ids), _DELETE_CHUNK):
                await info.table.delete(_in_ids(ids[start : start + _DELETE_CHUNK]))
            await self._maintain(info)

    async def _delete_by_filter(self, name: str, native_filter: Any) -> None:
        info = await self._open("DELETE_VECTORS", name)
        flt = self._render(info, native_filter)
        if flt.exact:
            if flt.lower == FALSE:
                return
            # Lance commits a table version for every delete, even one that removes nothing (the stale-vector
            # delete of a save of new messages, docs/spec.md §5.4), and every version is a write towards
            # the next optimize. An indexed count first makes that case a read. With other writers this is
            # the same as a delete that ran at the moment of the count: rows written after it survive
            # either way.
            if not await info.table.count_rows(flt.lower):
                return
            async with info.lock:
                await info.table.delete(flt.lower)
                await self._maintain(info)
            return
        rows = await self._matching_rows(info, flt, ["id"])
        if rows.num_rows:
            await self._delete_by_ids(name, rows["id"].to_pylist())

    # --- filters ---------------------------------------------------------------------------------

    def _render(self, info: TableInfo, native_filter: Any) -> LanceFilter:
        """The filter with the table's index columns (translation is pure; this is no I/O)."""
        if not isinstance(native_filter, LanceFilter):
            raise TypeError(f"lancedb expected a translated LanceFilter, got {type(native_filter).__name__}")
        if not info.indexed:
            return native_filter
        return LanceDBTranslator(info.indexed).translate(native_filter.node)

    async def _rows(self, info: TableInfo, where: str, columns: list[str]) -> pa.Table:
        if where == FALSE:
            return pa.table({c: pa.array([], info.schema.field(c).type) for c in columns})
        query = info.table.query().select(columns)
        if where != TRUE:
            query = query.where(where)
        return await query.to_arrow()

    async def _decided(self, info: TableInfo, flt: LanceFilter) -> str:
        """A SQL condition selecting exactly the matching rows.

        The rows SQL cannot decide are judged here by the reference evaluator; their matches join
        ``lower`` as an id list. Returns ``""`` when that list would be too long to splice into SQL.
        """
        if flt.exact:
            return flt.lower
        uncertain = f"({flt.upper}) AND NOT ({flt.lower})" if flt.lower != FALSE else flt.upper
        matched: list[str] = []
        async for batch in self._batches(info, uncertain, ["id", "metadata"]):
            for rid, text in zip(batch["id"].to_pylist(), batch["metadata"].to_pylist(), strict=True):
                if matches(flt.node, json.loads(text)):
                    matched.append(rid)
                    if len(matched) > _IN_LIST_LIMIT:
                        return ""
        return _or(flt.lower, _in_ids(matched) if matched else FALSE)

    async def _matching_rows(self, info: TableInfo, flt: LanceFilter, columns: list[str]) -> pa.Table:
        """Every row matching ``flt`` (the columns asked for)."""
        where = await self._decided(info, flt)
        if where:
            return await self._rows(info, where, columns)
        wanted = list(dict.fromkeys([*columns, "metadata"]))
        kept: list[pa.RecordBatch] = []
        async for batch in self._batches(info, flt.upper, wanted):
            mask = [matches(flt.node, json.loads(t)) for t in batch["metadata"].to_pylist()]
            kept.append(batch.filter(pa.array(mask, pa.bool_())).select(columns))
        if not kept:
            return await self._rows(info, FALSE, columns)
        return pa.Table.from_batches(kept)

    async def _batches(
        self, info: TableInfo, where: str, columns: list[str]
    ) -> AsyncIterator[pa.RecordBatch]:
        if where == FALSE:
            return
        query = info.table.query().select(columns)
        if where != TRUE:
            query = query.where(where)
        reader = await query.to_batches()
        async for batch in reader:
            yield batch

    # --- hooks: query ----------------------------------------------------------------------------

    async def _query(self, request: QueryRequest) -> list[QueryResult]:
        for key, value in request.options.items():
            self._count_option(key, value)
        info = await self._open("QUERY", request.name)
        flt = self._render(info, request.native_filter) if request.native_filter is not None else None
        columns = ["id", "metadata", *(["vector"] if request.include_vector else [])]
        if request.vector is None:
            return await self._list(info, flt, request.top_k, columns)
        self._check_dimension("QUERY", request.name, info.dimension, request.vector.shape[0])
        where = TRUE if flt is None else await self._decided(info, flt)
        if where == FALSE:
            return []
        if not where:
            assert flt is not None
            return await self._scan(info, flt, request.vector, request.top_k, request.include_vector)
        return await self._search(info, where, request.vector, request.top_k, columns, request.options)

    async def _search(
        self,
        info: TableInfo,
        where: str,
        vector: npt.NDArray[np.float64],
        top_k: int,
        columns: list[str],
        options: Mapping[str, Any],
    ) -> list[QueryResult]:
        def build(exact: bool) -> Any:
            query = (
                info.table.vector_search(vector.astype(FLOAT32))
                .column("vector")
                .distance_type(DISTANCE_TYPES[info.metric])
                .select([*columns, "_distance"])
                .limit(top_k + _TIE_MARGIN)
            )
            if where != TRUE:
                query = query.where(where)
            if exact:
                return query.bypass_vector_index()
            return self._tune(info, query, top_k, options)

        rows = await build(exact=False).to_arrow()
        if info.has_ann and rows.num_rows < top_k:
            # An ANN search may miss matches of a narrow filter; count them and search exactly if so.
            matching = await info.table.count_rows(None if where == TRUE else where)
            if matching > rows.num_rows:
                rows = await build(exact=True).to_arrow()
        return self._results(info, rows, rows["_distance"].to_pylist())

    def _tune(self, info: TableInfo, query: Any, top_k: int, options: Mapping[str, Any]) -> Any:
        if not info.has_ann:
            return query
        index = info.index
        probes = options.get("probes", index.get("probes"))
        if probes is not None:
            query = query.minimum_nprobes(probes)
        query = query.maximum_nprobes(0)  # keep probing until the filter has found enough rows
        refine = self.settings.refine_factor if index.get("quantization", "none") != "none" else 1
        if refine > 1:
            query = query.refine_factor(refine)
        if index.get("type") == "hnsw":
            # docs/spec.md §3.9 default, raised to what Lance needs: a search list at least as long as the
            # candidates it returns (limit x refine factor).
            m = int(index.get("m", 16))
            ef = int(options.get("ef", index.get("ef", default_ef(top_k, m))))
            query = query.ef(max(ef, (top_k + _TIE_MARGIN) * refine))
        return query

    async def _scan(
        self,
        info: TableInfo,
        flt: LanceFilter,
        vector: npt.NDArray[np.float64],
        top_k: int,
        include_vector: bool,
    ) -> list[QueryResult]:
        """Exact search over the rows of ``flt.upper`` that the reference evaluator accepts."""
        best: list[tuple[float, str, str, list[float] | None]] = []
        query = vector.astype(np.float64)
        for_cosine = float(np.linalg.norm(query))
        async for batch in self._batches(info, flt.upper, ["id", "metadata", "vector"]):
            texts = batch["metadata"].to_pylist()
            keep = [i for i, t in enumerate(texts) if matches(flt.node, json.loads(t))]
            if not keep:
                continue
            ids = batch["id"].to_pylist()
            matrix = layout.matrix(batch["vector"], info.dimension)[keep].astype(np.float64)
            scores = _exact_scores(info.metric, matrix, query, for_cosine)
            for position, (row, score) in enumerate(zip(keep, scores.tolist(), strict=True)):
                vec = [float(x) for x in matrix[position]] if include_vector else None
                best.append((float(score), ids[row], texts[row], vec))
            best.sort(key=lambda r: (-r[0], r[1]))
            del best[top_k + _TIE_MARGIN :]
        return [
            QueryResult(id=rid, score=score, metadata=json.loads(text), vector=vec)
            for score, rid, text, vec in best
        ]

    async def _list(
        self, info: TableInfo, flt: LanceFilter | None, top_k: int, columns: list[str]
    ) -> list[QueryResult]:
        """Metadata-only query: the first ``top_k`` matches in id order, score 0.0."""
        rows = await self._matching_rows(info, flt, ["id"]) if flt else await self._rows(info, TRUE, ["id"])
        ids = rows["id"].to_pylist()
        chosen = sorted(ids)[:top_k]
        if not chosen:
            return []
        listed = await self._rows(info, _in_ids(chosen), columns)
        results = self._results(info, listed, [None] * listed.num_rows)
        return sorted(results, key=lambda r: r.id)

    def _results(
        self, info: TableInfo, rows: pa.Table, distances: Sequence[float | None]
    ) -> list[QueryResult]:
        ids = rows["id"].to_pylist()
        texts = rows["metadata"].to_pylist()
        vectors = rows["vector"].to_pylist() if "vector" in rows.column_names else [None] * len(ids)
        return [
            QueryResult(
                id=rid,
                score=0.0 if distance is None else _score(info.metric, float(distance)),
                metadata=json.loads(text),
                vector=[float(x) for x in vec] if vec is not None else None,
            )
            for rid, text, vec, distance in zip(ids, texts, vectors, distances, strict=True)
        ]


def _exact_scores(
    metric: Metric, matrix: npt.NDArray[np.float64], query: npt.NDArray[np.float64], query_norm: float
) -> npt.NDArray[np.float64]:
    """Portable scores of ``matrix`` rows against ``query`` (docs/spec.md §3.4), in float64."""
    if metric == "dotproduct":
        scores = matrix @ query
    elif metric == "euclidean":
        scores = 1.0 / (1.0 + np.linalg.norm(matrix - query, axis=1))
    else:
        norms = np.linalg.norm(matrix, axis=1) * query_norm
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = np.where(norms > 0, (matrix @ query) / np.where(norms > 0, norms, 1.0), 0.0)
    return np.asarray(scores, dtype=np.float64)
