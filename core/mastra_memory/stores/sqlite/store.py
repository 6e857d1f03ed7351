"""The embedded SQLite vector store: exact search with numpy (an approximate index above a size
threshold, ``ann.py``), metadata filters translated to SQL.

Why this module is long: the snapshot cache, the scope snapshots (``scopes.py``), the
approximate index's change hook and their invalidation stay in this module, because their invariant (the
generation token read in the same transaction as the rows, every cached copy patched or dropped by the
write that changes it) is easiest to check in one place. Reading rows is ``vector_rows.py``, the exact
scorer ``search.py``.

Layout. A registry table ``mastra_vector_indexes`` (name, dimension, metric, config, generation) and one
table per index, ``mastra_vectors__<index>`` (seq, id, vector as little-endian float32 BLOB, metadata as
JSON text). One table per index rather than one shared table keyed by index name: an index is then a
unit of its own — deleting it is a DROP TABLE, an exact scan reads only its rows, and its expression
indexes cover only its rows (names: ``vector_rows.py``).

Search. Each index's vectors are held in memory as one float32 matrix (a snapshot, ``snapshot.py``)
tagged with the registry's ``generation``, a fresh token written by every change to the index in the same
transaction. A query compares tokens inside one read transaction and reloads the snapshot when they
differ, so a write through any other connection or process invalidates it. A write through this store
reads the token inside its write transaction: when it still equals the snapshot's, the delta is only
ours, and the write patches the snapshot (append, replace, tombstone) and tags it with the token it
wrote, instead of dropping it. Should the transaction roll back, the database keeps the old token, which
no longer equals the snapshot's, so the patched snapshot is never trusted.

Filters. A filtered query first tries :func:`~.snapshot.evaluate_filter` over columnar copies of the
filter's top-level keys (exact while no row holds a list or an object at such a key); otherwise it selects
the matching rows with the translated SQL. Either way only those rows of the snapshot are scored: all of
them, or, once they number ``ann_threshold`` or more, the candidates of an HNSW graph plus the rows it
does not hold (``ann.py``), re-ranked exactly. All database work runs on the connection's single worker
thread, which serialises concurrent tasks and owns the snapshots.

Manifest. ``SQLITE_CAPABILITIES`` is declared in ``capabilities.py`` (docs/spec.md §2.9) and re-exported
here.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import uuid
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

import numpy as np
import numpy.typing as npt

from ...capabilities import Metric
from ...filters.ast import Comparison, Node
from ...filters.numbers import in_int64
from ...vector.base import MastraVector, Matrix, Metadata, QueryRequest, Vector, _parsed
from ...vector.metadata import first_problem
from ...vector.records import IndexConfig, IndexStats, QueryResult
from ...vector.sql_translate import IDENTIFIER
from .ann import AnnRoute
from .ann_direct import Answer, DirectQuery
from .capabilities import SQLITE_CAPABILITIES
from .connection import MEMORY, SQLiteConnection
from .scopes import (
    DEFAULT_SCOPE_ROWS,
    Scope,
    ScopeCache,
    nonscalar_index_name,
    nonscalar_index_sql,
    scopes_of,
    value_sql,
)
from .search import exact_scores, top_k_rows
from .settings import DEFAULT_URL, SQLiteSettings
from .snapshot import Snapshot, decoded, matching_slots
from .translate import (
    SqlFragment,
    SQLiteFilterTranslator,
    register_sql_functions,
    translate_cached,
)
from .vector_rows import (
    REGISTRY,
    TABLE_PREFIX,
    column_rows,
    load_snapshot,
    scalar_index,
)

if TYPE_CHECKING:
    from .lexical import SQLiteLexicalIndex
from .vector_rows import blob as _blob
from .vector_rows import from_blob as _from_blob
from .vector_rows import metadata_index_name as _metadata_index_name
from .vector_rows import table as _table

__all__ = ["SQLITE_CAPABILITIES", "TABLE_PREFIX", "SQLFileVector", "SQLiteVector"]

logger = logging.getLogger("mastra_memory.stores.sqlite.store")

T = TypeVar("T")

_FLOAT32: Final = np.dtype("<f4")
# Scopes from this size (below the approximate threshold) are scored from a persisted graph's vectors
# rather than read from the file (ann_direct.scope_search): reading 20,000 rows took 0.2-0.5 s at 1M rows,
# while a small scope reads in milliseconds and spares a process faiss and the graph (0.2-0.3 s to open).
_GRAPH_SCOPE_ROWS: Final = 5_000
# Query options of ANN indexes; exact search already returns the exact answer, so they change nothing.
_ANN_QUERY_OPTIONS: Final = frozenset({"ef", "probes"})

_SCHEMA: Final = f"""
CREATE TABLE IF NOT EXISTS {REGISTRY} (
    name TEXT PRIMARY KEY,
    dimension INTEGER NOT NULL,
    metric TEXT NOT NULL,
    config TEXT NOT NULL,
    generation TEXT NOT NULL
)
"""


@dataclass(frozen=True, slots=True)
class _IndexRow:
    dimension: int
    metric: Metric
    generation: str


def _storable_problem(value: Any, path: str) -> str | None:
    """Why SQLite could not store and filter the scalar or key ``value`` exactly (None if it can); ``path``
    names it.

    The one definition of the store's metadata rules (declared deviations nul-character-rejected and
    int64-range), run over every key and scalar by the shared validation through
    :meth:`SQLiteVector._metadata_problem`."""
    if isinstance(value, str) and "\x00" in value:  # text that is not Unicode never gets here (§3.6)
        return f"{path}: strings containing U+0000 cannot be filtered in SQLite"
    if isinstance(value, int) and not isinstance(value, bool) and not in_int64(value):
        return f"{path}: integer {value} is outside the signed 64-bit range SQLite stores exactly"
    return None


def _metadata_json(metadata: Mapping[str, Any]) -> str:
    """Metadata as stored: unescaped UTF-8 keeps every key spelled as is, which the translator's JSON
    paths rely on (what SQLite cannot hold was refused by the shared validation)."""
    return json.dumps(metadata, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class SQLFileVector(MastraVector):
    """What the vector stores of a SQLite-family file (this one and the ``libsql`` store's ``LibSQLVector``)
    share: native filters are :class:`SqlFragment`, and both upserts are one ``_write_rows``."""

    def _fragment(self, native_filter: Any) -> SqlFragment:
        return self._native(native_filter, SqlFragment)

    async def _upsert(self, name: str, ids: list[str], vectors: Matrix, metadata: list[Metadata]) -> None:
        await self._write_rows(name, None, ids, vectors, metadata)

    async def _upsert_replacing(
        self, name: str, native_filter: Any, ids: list[str], vectors: Matrix, metadata: list[Metadata]
    ) -> None:
        # One transaction (docs/spec.md §3.1, upsert_delete_filter "atomic"): no reader sees the matches
        # deleted and the new rows missing, and a failure leaves the old rows.
        await self._write_rows(name, self._fragment(native_filter), ids, vectors, metadata)

    @abstractmethod
    async def _write_rows(
        self,
        name: str,
        replaced: SqlFragment | None,
        ids: list[str],
        vectors: Matrix,
        metadata: list[Metadata],
    ) -> None:
        """Insert or replace the rows, after deleting those ``replaced`` matches, in one transaction."""


class SQLiteVector(SQLFileVector):
    """The embedded vector store: one SQLite file (or ``:memory:``), exact search, every filter operator.

    Args:
        url: a path (``./memory.db``), ``file:``/``sqlite:///`` URL, ``:memory:``, or :class:`SQLiteSettings`.
            The memory storage may use the same file through its own connection.

    ``create_index(metadata_indexes=[...])`` builds an expression index per key made of identifier
    characters (``thread_id``); equality and ``$in`` filters on such a top-level key can use it, and a
    query requiring one string at such a key (a scoped recall) reads only that scope's rows while the
    whole index is not in memory (``scopes.py``). ``scope_rows`` bounds the rows kept in such scope
    snapshots (0: always load the whole index). A search matching ``ann_threshold`` rows or more goes
    through an approximate index with exact re-ranking when the ``ann`` extra is installed (``ann.py``,
    :meth:`build_ann_index`).
    """

    capabilities = SQLITE_CAPABILITIES
    translator = SQLiteFilterTranslator
    query_options = _ANN_QUERY_OPTIONS

    def __init__(
        self, url: str | Path | SQLiteSettings = DEFAULT_URL, *, scope_rows: int = DEFAULT_SCOPE_ROWS
    ) -> None:
        super().__init__()
        self.settings = url if isinstance(url, SQLiteSettings) else SQLiteSettings(url=str(url))
        self._db = SQLiteConnection(self.settings.url)
        self._prepared: sqlite3.Connection | None = None
        self._snapshots: dict[str, Snapshot] = {}
        self._scope_rows = scope_rows
        self._scopes: dict[str, ScopeCache] = {}
        self._ann = AnnRoute(self._db.path, self.settings.ann_threshold, self.settings.ann_background)
        # A persisted approximate index opens in the background now, not on the first search (ann.py).
        self._ann.warm()
        self._lexical: SQLiteLexicalIndex | None = None

    def lexical_index(self) -> SQLiteLexicalIndex:
        """The FTS5 side of hybrid recall beside this store's indexes (:mod:`.lexical`), one per store: it
        keeps a connection of its own, which :meth:`close` closes with the store's."""
        if self._lexical is None:
            from .lexical import SQLiteLexicalIndex  # imported late: lexical.py reads this module's names

            self._lexical = SQLiteLexicalIndex(self.settings.url)
        return self._lexical

    @property
    def lexical_holds_every_write(self) -> bool:
        """Whether the lexical index sees every vector this store holds: not for ``:memory:``, whose
        database is private to its connection, so the lexical index's connection has another, which misses
        what was written before the first hybrid recall. Mode ``"auto"`` stays on vectors there."""
        return self._db.path != MEMORY

    async def close(self) -> None:
        """Close the database connections (the lexical index's too) and drop the in-memory snapshots."""
        await self._db.close()
        self._ann.close()
        if self._lexical is not None:
            self._lexical.close()
        self._prepared = None
        self._snapshots.clear()
        self._scopes.clear()

    # --- worker-thread plumbing ------------------------------------------------------------------

    def _prepare(self, conn: sqlite3.Connection) -> sqlite3.Connection:
        if self._prepared is not conn:
            register_sql_functions(conn)
            conn.execute(_SCHEMA)
            self._prepared = conn
        return conn

    async def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one write transaction (everything or nothing)."""

        def prepared(conn: sqlite3.Connection) -> T:
            self._prepare(conn)
            return fn(conn)

        return await self._db.transaction(prepared)

    async def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one read transaction, so every statement sees the same state of the file."""

        def snapshot(conn: sqlite3.Connection) -> T:
            self._prepare(conn)
            conn.execute("BEGIN")
            try:
                return fn(conn)
            finally:
                conn.execute("COMMIT")

        return await self._db.run(snapshot)

    def _index_row(self, conn: sqlite3.Connection, operation: str, name: str) -> _IndexRow:
        row = conn.execute(
            f"SELECT dimension, metric, generation FROM {REGISTRY} WHERE name = ?", (name,)
        ).fetchone()
        if row is None:
            self._snapshots.pop(name, None)
            self._scopes.pop(name, None)
            raise self._not_found(operation, name)
        return _IndexRow(int(row[0]), row[1], str(row[2]))

    def _ours(self, name: str, index: _IndexRow) -> Snapshot | None:
        """The snapshot a write may patch: only if nothing else changed the index since it was loaded
        (``index`` is read inside the write transaction). Any other snapshot is dropped."""
        current = self._snapshots.get(name)
        if current is not None and current.generation == index.generation:
            return current
        self._snapshots.pop(name, None)
        return None

    def _changed(
        self,
        conn: sqlite3.Connection,
        name: str,
        index: _IndexRow,
        snapshot: Snapshot | None,
        patch: Callable[[Snapshot], bool],
        scope_patch: Callable[[Scope, Snapshot], bool],
        touched: npt.NDArray[np.int64],
    ) -> None:
        """Record a change to the index (same transaction as the change) and patch or drop its snapshot
        and its scope snapshots (``index`` is the registry row read in this transaction).

        A snapshot takes the new token before it is patched: if the patch or the commit fails, the
        token in the database stays the old one and the snapshot is reloaded by the next query.
        """
        token = uuid.uuid4().hex
        conn.execute(f"UPDATE {REGISTRY} SET generation = ? WHERE name = ?", (token, name))
        scopes = self._scopes.get(name)
        if scopes is not None:
            scopes.changed(index.generation, token, scope_patch)
        # Rows the approximate index may no longer hold as they are; the generation step for its direct route.
        self._ann.touched(name, touched, index.generation, token)
        if snapshot is None:
            return
        snapshot.generation = token
        if not patch(snapshot):
            self._snapshots.pop(name, None)

    def _snapshot(self, conn: sqlite3.Connection, name: str, index: _IndexRow) -> Snapshot:
        current = self._snapshots.get(name)
        if current is not None and current.generation == index.generation:
            return current
        current = None
        self._snapshots.pop(name, None)  # release the old matrix before the new one is read
        self._scopes.pop(name, None)  # the whole index answers every scope now
        snapshot = load_snapshot(conn, name, index.dimension, index.generation, "", ())
        self._snapshots[name] = snapshot
        return snapshot

    def _graph_scope(
        self,
        conn: sqlite3.Connection,
        name: str,
        index: _IndexRow,
        fragment: SqlFragment,
        vector: npt.NDArray[np.float64],
        top_k: int,
    ) -> Answer | None:
        """A filter that is one scope (a thread, a user) below the approximate threshold, while the index is
        not loaded and its scope snapshot not cached: exact, scored from the persisted graph's vectors
        (``ann_direct.scope_search``) rather than by reading every row of the scope from the file."""
        node = fragment.node
        if self._scope_rows <= 0 or name in self._snapshots or node is None:
            return None
        # Exactly one string equality on a key (what Memory sends per scope); anything more is evaluated
        # over a scope snapshot.
        scope = next(iter(scopes_of(node)), None) if isinstance(node, Comparison) else None
        if scope is None:
            return None
        cache = self._scopes.setdefault(name, ScopeCache(self._scope_rows))
        if cache.get(scope, index.generation) is not None or not self._ann.has_graph(name):
            return None
        if not scalar_index(conn, name, scope.key):
            return None
        rows = self._scope_count(conn, name, index, scope, cache)
        if rows >= self._large_count() or rows < _GRAPH_SCOPE_ROWS:
            return None  # the approximate route's, or a scope read from the file in a few milliseconds
        return self._ann.direct_scope(
            name,
            self._direct_query(conn, name, index, fragment, vector, top_k),
            (value_sql(scope.key), scope.value),
        )

    @staticmethod
    def _direct_query(
        conn: sqlite3.Connection,
        name: str,
        index: _IndexRow,
        fragment: SqlFragment | None,
        vector: npt.NDArray[np.float64],
        top_k: int,
    ) -> DirectQuery:
        """A search as the approximate index's direct routes take it (``ann_direct.py``)."""
        where, params = (fragment.sql, dict(fragment.params)) if fragment is not None else ("", {})
        return DirectQuery(
            conn,
            _table(name),
            REGISTRY,
            index.generation,
            index.dimension,
            index.metric,
            vector,
            top_k,
            where,
            params,
        )

    def _large_count(self) -> int:
        """Rows from which a scope is not read into a scope snapshot."""
        large = self._scope_rows // 2 + 1
        if self._ann.installed():
            large = min(large, self._ann.threshold)  # the approximate index covers the whole index
        return large

    def _scope_count(
        self, conn: sqlite3.Connection, name: str, index: _IndexRow, scope: Scope, cache: ScopeCache
    ) -> int:
        """The rows of ``scope``, counted only up to :meth:`_large_count` (a million-row scope is not counted
        to the end), remembered for the generation."""
        known = cache.counted(scope, index.generation)
        if known is not None:
            return known
        large = self._large_count()
        where = f"WHERE {value_sql(scope.key)} = ?"
        counted = f"SELECT count(*) FROM (SELECT 1 FROM {_table(name)} {where} LIMIT {int(large)})"
        (count,) = conn.execute(counted, (scope.value,)).fetchone()
        cache.count(scope, index.generation, int(count))
        return int(count)

    def _scope_snapshot(
        self, conn: sqlite3.Connection, name: str, index: _IndexRow, node: Node
    ) -> tuple[Scope, Snapshot] | None:
        """A snapshot of the scope ``node`` requires, when the whole index is not loaded: from the cache,
        or read through the key's expression index (scopes.py says when that is exact)."""
        if self._scope_rows <= 0 or name in self._snapshots:
            return None
        wanted = list(dict.fromkeys(scopes_of(node)))
        if not wanted:
            return None
        cache = self._scopes.setdefault(name, ScopeCache(self._scope_rows))
        for scope in wanted:
            hit = cache.get(scope, index.generation)
            if hit is not None:
                return scope, hit
        for scope in wanted:
            known = cache.counted(scope, index.generation)
            if known is not None and known >= self._large_count():
                return None
            if not scalar_index(conn, name, scope.key):
                continue
            where = f"WHERE {value_sql(scope.key)} = ?"
            if self._scope_count(conn, name, index, scope, cache) >= self._large_count():
                return None  # a scope this large would evict the others: the whole index serves it
            snapshot = load_snapshot(conn, name, index.dimension, index.generation, where, (scope.value,))
            cache.put(scope, snapshot)
            return scope, snapshot
        return None

    # --- validation specific to SQLite ---------------------------------------------------------

    @staticmethod
    def _rows(
        ids: Sequence[str], vectors: Matrix, metadata: Sequence[Mapping[str, Any]]
    ) -> list[tuple[str, bytes, str]]:
        """(id, float32 blob, JSON text) per record. The shared validation refused what SQLite cannot hold:
        ids that are not Unicode text, values beyond float32, metadata of :func:`_storable_problem`."""
        as_float32 = vectors.astype(_FLOAT32)
        return [
            (rid, as_float32[i].tobytes(), _metadata_json(meta))
            for i, (rid, meta) in enumerate(zip(ids, metadata, strict=True))
        ]

    def _metadata_problem(self, metadata: dict[str, Any], record_id: str | None = None) -> str | None:
        """What SQLite cannot store and filter exactly (U+0000, integers beyond int64), judged by the shared
        validation before any I/O, so ``Memory`` refuses such a message before storing it (docs/spec.md
        §3.6, §5.4)."""
        return first_problem(metadata, _storable_problem)

    # --- hooks: indexes ------------------------------------------------------------------------

    async def _create_index(
        self,
        name: str,
        dimension: int,
        metric: Metric,
        config: IndexConfig,
        metadata_indexes: list[str],
        options: dict[str, Any],
    ) -> None:
        tuning = config.model_dump(exclude_none=True, exclude={"type", "metric"})
        table = _table(name)

        def create(conn: sqlite3.Connection) -> None:
            row = conn.execute(f"SELECT dimension, metric FROM {REGISTRY} WHERE name = ?", (name,)).fetchone()
            if row is not None:
                self._keep_existing(name, int(row[0]), row[1], dimension, metric)
            else:
                # A table without a registry row is a leftover; the registry is the source of truth.
                self._snapshots.pop(name, None)
                self._scopes.pop(name, None)
                conn.execute(f"DROP TABLE IF EXISTS {table}")
                conn.execute(
                    f"CREATE TABLE {table} (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, "
                    "vector BLOB NOT NULL, metadata TEXT NOT NULL)"
                )
                conn.execute(
                    f"INSERT INTO {REGISTRY} (name, dimension, metric, config, generation) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (name, dimension, metric, config.model_dump_json(exclude_none=True), uuid.uuid4().hex),
                )
                if tuning:
                    logger.warning(
                        "index %r: %s ignored; the sqlite store searches exactly (index type 'flat')",
                        name, ", ".join(sorted(tuning)),
                    )  # fmt: skip
            for key in metadata_indexes:
                # Only identifier-like keys: the translator spells exactly those paths inline, which is
                # what lets SQLite match a query to the expression index.
                if not IDENTIFIER.fullmatch(key):
                    logger.info("index %r: no metadata index for key %r (not an identifier)", name, key)
                    continue
                path = f"'$.\"{key}\"'"
                conn.execute(
                    f"CREATE INDEX IF NOT EXISTS {_metadata_index_name(name, key)} "
                    f"ON {table} (json_extract(metadata, {path}))"
                )
                conn.execute(nonscalar_index_sql(table, nonscalar_index_name(name, key), key))

        await self._write(create)

    async def _list_indexes(self) -> list[str]:
        def names(conn: sqlite3.Connection) -> list[str]:
            return [r[0] for r in conn.execute(f"SELECT name FROM {REGISTRY} ORDER BY name")]

        return await self._read(names)

    async def _shape(self, operation: str, index: str) -> tuple[int, Metric]:
        # The base reads the shape through describe_index, which counts every row (a scan of an index:
        # ~0.1 s at 1M rows, on the first query of a process); the registry row suffices.
        if index not in self._dimensions or index not in self._metrics:
            shape = self._read(lambda conn: self._index_row(conn, operation, index))
            row = await self._call(operation, shape, index)
            self._dimensions[index] = row.dimension
            self._metrics[index] = row.metric
        return self._dimensions[index], self._metrics[index]

    async def _describe_index(self, name: str) -> IndexStats:
        def describe(conn: sqlite3.Connection) -> IndexStats:
            index = self._index_row(conn, "DESCRIBE_INDEX", name)
            (count,) = conn.execute(f"SELECT count(*) FROM {_table(name)}").fetchone()
            return IndexStats(dimension=index.dimension, count=int(count), metric=index.metric)

        return await self._read(describe)

    async def _delete_index(self, name: str) -> None:
        table = _table(name)

        def delete(conn: sqlite3.Connection) -> None:
            conn.execute(f"DELETE FROM {REGISTRY} WHERE name = ?", (name,))
            conn.execute(f"DROP TABLE IF EXISTS {table}")
            self._snapshots.pop(name, None)
            self._scopes.pop(name, None)
            self._ann.forget(name)

        await self._write(delete)

    # --- hooks: writes -------------------------------------------------------------------------
    # Each write reads the generation inside its own transaction (_ours) and hands _changed a patch of
    # the snapshot with exactly the rows it touched (their seqs from RETURNING), so the next query
    # reuses the matrix instead of reloading it.

    async def _write_rows(
        self,
        name: str,
        replaced: SqlFragment | None,
        ids: list[str],
        vectors: Matrix,
        metadata: list[Metadata],
    ) -> None:
        rows = self._rows(ids, vectors, metadata)
        table = _table(name)
        # An upsert keeps a row's seq (its slot in the snapshot): INSERT OR REPLACE would delete the row
        # and give it a new one.
        sql = (
            f"INSERT INTO {table} (id, vector, metadata) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
            "vector = excluded.vector, metadata = excluded.metadata RETURNING seq"
        )

        def upsert(conn: sqlite3.Connection) -> None:
            index = self._index_row(conn, "UPSERT", name)
            self._check_dimension("UPSERT", name, index.dimension, vectors.shape[1])
            ours = self._ours(name, index)
            gone = np.empty(0, dtype=np.int64)
            if replaced is not None:
                deleted = conn.execute(
                    f"DELETE FROM {table} WHERE {replaced.sql} RETURNING seq", replaced.params
                )
                gone = np.sort(np.asarray([s for (s,) in deleted], dtype=np.int64))
            seqs = np.asarray([conn.execute(sql, row).fetchone()[0] for row in rows], dtype=np.int64)

            matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=_FLOAT32).reshape(len(rows), -1)
            ids_ = [r[0] for r in rows]
            decoded_: list[Mapping[str, Any]] = []

            def metas() -> list[Mapping[str, Any]]:
                # What the database gives back (the stored JSON), not the caller's objects; decoded once.
                if not decoded_:
                    decoded_.extend(decoded(r[2]) for r in rows)
                return decoded_

            def patch(snapshot: Snapshot) -> bool:
                # A deleted last row's seq may come back for a new row: apply_upsert drops dead tail slots.
                if gone.size and not snapshot.apply_delete(gone):
                    return False
                metadata_ = metas() if snapshot.columns else [{}] * len(rows)
                return snapshot.apply_upsert(seqs, ids_, matrix, metadata_)

            def scope_patch(scope: Scope, snapshot: Snapshot) -> bool:
                return ScopeCache.upsert(scope, snapshot, gone, seqs, ids_, matrix, metas())

            self._changed(conn, name, index, ours, patch, scope_patch, np.concatenate([gone, seqs]))

        await self._write(upsert)

    async def _update_by_id(
        self, name: str, id: str, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        await self._update(name, SqlFragment("id = :m_id", {"m_id": id}), vector, metadata)

    async def _update_by_filter(
        self, name: str, native_filter: Any, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        await self._update(name, self._fragment(native_filter), vector, metadata)

    async def _update(
        self, name: str, where: SqlFragment, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        """Set the new vector and/or metadata of the rows ``where`` selects, and patch the snapshot."""
        op = "UPDATE_VECTOR"
        columns: dict[str, Any] = {}  # column -> its new value, bound as :m_<column>
        if vector is not None:
            columns["vector"] = _blob(vector)
        if metadata is not None:
            columns["metadata"] = _metadata_json(metadata)
        values = {**where.params, **{f"m_{column}": value for column, value in columns.items()}}
        assignments = ", ".join(f"{column} = :m_{column}" for column in columns)
        table = _table(name)
        new_vector = None if vector is None else np.frombuffer(columns["vector"], dtype=_FLOAT32)
        new_metadata = None if metadata is None else decoded(columns["metadata"])

        def update(conn: sqlite3.Connection) -> None:
            index = self._index_row(conn, op, name)
            if vector is not None:
                self._check_dimension(op, name, index.dimension, vector.shape[0])
            ours = self._ours(name, index)
            sql = f"UPDATE {table} SET {assignments} WHERE {where.sql} RETURNING seq"
            seqs = np.sort(np.asarray([s for (s,) in conn.execute(sql, values)], dtype=np.int64))
            if seqs.size:
                self._changed(
                    conn,
                    name,
                    index,
                    ours,
                    lambda snapshot: snapshot.apply_update(seqs, new_vector, new_metadata),
                    lambda scope, snapshot: ScopeCache.update(
                        scope, snapshot, seqs, new_vector, new_metadata
                    ),
                    seqs,
                )

        await self._write(update)

    async def _delete_by_ids(self, name: str, ids: list[str]) -> None:
        table = _table(name)

        def delete(conn: sqlite3.Connection) -> None:
            index = self._index_row(conn, "DELETE_VECTORS", name)
            ours = self._ours(name, index)
            sql = f"DELETE FROM {table} WHERE id = ? RETURNING seq"
            gone = [row[0] for i in ids for row in conn.execute(sql, (i,)).fetchall()]
            if gone:
                seqs = np.sort(np.asarray(gone, dtype=np.int64))
                self._deleted(conn, name, index, ours, seqs)

        await self._write(delete)

    async def _delete_by_filter(self, name: str, native_filter: Any) -> None:
        fragment = self._fragment(native_filter)
        table = _table(name)

        def delete(conn: sqlite3.Connection) -> None:
            index = self._index_row(conn, "DELETE_VECTORS", name)
            ours = self._ours(name, index)
            sql = f"DELETE FROM {table} WHERE {fragment.sql} RETURNING seq"
            seqs = np.sort(np.asarray([s for (s,) in conn.execute(sql, fragment.params)], dtype=np.int64))
            if seqs.size:
                self._deleted(conn, name, index, ours, seqs)

        await self._write(delete)

    def _deleted(
        self,
        conn: sqlite3.Connection,
        name: str,
        index: _IndexRow,
        ours: Snapshot | None,
        seqs: npt.NDArray[np.int64],
    ) -> None:
        self._changed(
            conn,
            name,
            index,
            ours,
            lambda snapshot: snapshot.apply_delete(seqs),
            lambda scope, snapshot: ScopeCache.delete(scope, snapshot, seqs),
            seqs,
        )

    # --- hooks: query --------------------------------------------------------------------------

    async def _query(self, request: QueryRequest) -> list[QueryResult]:
        fragment = self._fragment(request.native_filter) if request.native_filter is not None else None
        vector = request.vector
        if vector is None:
            return await self._read(
                lambda conn: self._list_records(
                    conn, request.name, request.top_k, fragment, request.include_vector
                )
            )
        return await self._read(
            lambda conn: self._search(
                conn, request.name, vector, request.top_k, fragment, request.include_vector
            )
        )

    def _list_records(
        self,
        conn: sqlite3.Connection,
        name: str,
        top_k: int,
        fragment: SqlFragment | None,
        include_vector: bool,
    ) -> list[QueryResult]:
        """Metadata-only query: the first ``top_k`` matches in id order, score 0.0."""
        self._index_row(conn, "QUERY", name)
        where = f"WHERE {fragment.sql}" if fragment else ""
        params: dict[str, Any] = {**(fragment.params if fragment else {}), "m_limit": top_k}
        sql = f"SELECT id, metadata, vector FROM {_table(name)} {where} ORDER BY id LIMIT :m_limit"
        return [
            QueryResult(
                id=rid,
                score=0.0,
                metadata=json.loads(meta),
                vector=_from_blob(blob) if include_vector else None,
            )
            for rid, meta, blob in conn.execute(sql, params)
        ]

    def _search(
        self,
        conn: sqlite3.Connection,
        name: str,
        vector: npt.NDArray[np.float64],
        top_k: int,
        fragment: SqlFragment | None,
        include_vector: bool,
    ) -> list[QueryResult]:
        index = self._index_row(conn, "QUERY", name)
        self._check_dimension("QUERY", name, index.dimension, vector.shape[0])
        rows: npt.NDArray[np.int64] | None = None
        scoped = None
        if fragment is not None and fragment.node is not None:
            direct = self._graph_scope(conn, name, index, fragment, vector, top_k)
            if direct is not None:
                return self._results(conn, name, *direct, include_vector)
            scoped = self._scope_snapshot(conn, name, index, fragment.node)
        if scoped is not None:
            scope, snapshot = scoped
            rows = self._matching_slots(conn, name, snapshot, fragment, scope)
        if rows is None and name not in self._snapshots:
            # A large search before the index is loaded: the persisted graph and the candidates' rows from
            # the file, without reading the whole matrix (ann_direct.py).
            direct = self._ann.direct(name, self._direct_query(conn, name, index, fragment, vector, top_k))
            if direct is not None:
                return self._results(conn, name, *direct, include_vector)
        if rows is None:  # no scope, or one that cannot answer: the whole index
            snapshot = self._snapshot(conn, name, index)
            rows = self._matching_slots(conn, name, snapshot, fragment, None)
        if rows is None or rows.size == 0:
            return []
        approximate = None
        if scoped is None or snapshot is self._snapshots.get(name):
            approximate = self._ann.search(
                name, _table(name), REGISTRY, snapshot, rows, vector, top_k, index.metric
            )
        if approximate is not None:
            chosen, chosen_scores = approximate
        else:
            scores = exact_scores(snapshot, rows, vector, index.metric)
            chosen, chosen_scores = top_k_rows(rows, scores, snapshot.ids, top_k)
        return self._results(conn, name, snapshot, chosen, chosen_scores, include_vector)

    def _results(
        self,
        conn: sqlite3.Connection,
        name: str,
        snapshot: Snapshot,
        chosen: npt.NDArray[np.int64],
        chosen_scores: npt.NDArray[np.float64],
        include_vector: bool,
    ) -> list[QueryResult]:
        """The chosen slots of ``snapshot`` as results, with their metadata read now."""
        metadata = self._metadata_of(conn, name, snapshot.seqs[chosen])
        return [
            QueryResult(
                id=snapshot.ids[row],
                score=float(score),
                metadata=metadata[int(snapshot.seqs[row])],
                vector=[float(x) for x in snapshot.matrix[row]] if include_vector else None,
            )
            for row, score in zip(chosen.tolist(), chosen_scores.tolist(), strict=True)
        ]

    def _matching_slots(
        self,
        conn: sqlite3.Connection,
        name: str,
        snapshot: Snapshot,
        fragment: SqlFragment | None,
        scope: Scope | None,
    ) -> npt.NDArray[np.int64] | None:
        """Ascending snapshot slots of the live rows matching ``fragment`` (all live rows for None); for
        a ``scope`` snapshot, None if a match lies outside it (never expected: the filter requires it)."""
        if fragment is None:
            return snapshot.live_slots()
        if fragment.node is not None:
            # A scoped recall (resource_id or thread_id equal to a string) reads only that scope's slots.
            slots = matching_slots(fragment.node, snapshot, partial(column_rows, conn, name, scope))
            if slots is not None:
                return slots
        sql = f"SELECT seq FROM {_table(name)} WHERE {fragment.sql}"
        seqs = np.sort(np.fromiter((s for (s,) in conn.execute(sql, fragment.params)), dtype=np.int64))
        if scope is None:
            return snapshot.slots_of(seqs)
        found = snapshot.find(seqs)
        return None if bool(np.any(found < 0)) else found

    @staticmethod
    def _metadata_of(conn: sqlite3.Connection, name: str, seqs: npt.NDArray[np.int64]) -> dict[int, Any]:
        wanted = json.dumps([int(s) for s in seqs])
        sql = f"SELECT seq, metadata FROM {_table(name)} WHERE seq IN (SELECT value FROM json_each(?))"
        return {int(seq): json.loads(meta) for seq, meta in conn.execute(sql, (wanted,))}

    async def build_ann_index(self, name: str) -> None:
        """Build (or extend with the rows it lacks) the approximate index of ``name`` now and wait for it
        (``ann.py``); a no-op without the ``ann`` extra. Searches use it once their matching rows reach
        ``ann_threshold``."""
        if not self._ann.usable():
            return

        def start(conn: sqlite3.Connection) -> Any:
            index = self._index_row(conn, "QUERY", name)
            snapshot = self._snapshot(conn, name, index)
            return self._ann.build(name, _table(name), REGISTRY, snapshot, index.metric)

        future = await self._read(start)
        if future is not None:
            await asyncio.wrap_future(future)

    def translate_filter(self, flt: Any) -> Any:
        """As :meth:`MastraVector.translate_filter`, through a bounded cache of translations (docs/spec.md
        §2.7): the same filter is translated once, however many queries and chunks use it."""
        node: Node | None = _parsed(flt)
        if node is None:
            return None
        translator = self.translator
        if not (isinstance(translator, type) and issubclass(translator, SQLiteFilterTranslator)):
            return super().translate_filter(node)
        return translate_cached(node, translator)
