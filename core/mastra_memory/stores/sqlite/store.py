"""The embedded SQLite vector store: exact search with numpy, metadata filters translated to SQL.

Layout. A registry table ``mastra_vector_indexes`` (name, dimension, metric, config, generation) and one
table per index, ``mastra_vectors__<index>`` (seq, id, vector as little-endian float32 BLOB, metadata as
JSON text). One table per index rather than one shared table keyed by index name: an index is then a
unit of its own — deleting it is a DROP TABLE, an exact scan reads only its rows, and its expression
indexes cover only its rows. Table names are built from index names that the base class validated
against ``^[a-z][a-z0-9_]{0,62}$`` (checked again here), so they never carry user text that needs quoting.

Search. Each index's vectors are held in memory as one float32 matrix (a snapshot) tagged with the
registry's ``generation``, a fresh token written by every change to the index in the same transaction.
A query compares tokens inside one read transaction and reloads the snapshot when they differ, so a
write through any connection or process invalidates it. A filtered query selects the matching rows in
SQL and scores only those rows of the snapshot. All database work runs on the connection's single worker
thread, which serialises concurrent tasks and owns the snapshots.

Manifest. ``SQLITE_CAPABILITIES`` is declared in ``capabilities.py`` (docs/spec.md §2.9) and re-exported
here.

Size. Over 500 lines: the snapshot cache, its invalidation and the exact scorer are one mechanism whose
invariants (generation token read in the same transaction as the rows) are easiest to check in one file.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path
from typing import Any, Final, TypeVar

import numpy as np
import numpy.typing as npt

from ...capabilities import Metric
from ...errors import MastraMemoryError, ValidationError
from ...vector import PORTABLE_INDEX_NAME, IndexConfig, IndexStats, MastraVector, QueryResult
from ...vector.sql_translate import IDENTIFIER
from .capabilities import SQLITE_CAPABILITIES
from .connection import SQLiteConnection
from .settings import DEFAULT_URL, SQLiteSettings
from .translate import INT64_MAX, INT64_MIN, SqlFragment, SQLiteFilterTranslator, register_sql_functions

__all__ = ["SQLITE_CAPABILITIES", "SQLiteVector"]

logger = logging.getLogger("mastra_memory.stores.sqlite.store")

T = TypeVar("T")

REGISTRY: Final = "mastra_vector_indexes"
TABLE_PREFIX: Final = "mastra_vectors__"
_FLOAT32: Final = np.dtype("<f4")
# Rows scored per numpy call: bounds the temporaries of one scoring step.
_SCORE_CHUNK: Final = 8192
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


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """One index's vectors in memory, valid while the registry's generation equals ``generation``."""

    generation: str
    seqs: npt.NDArray[np.int64]  # ascending row keys; row i of ``matrix`` belongs to seqs[i]
    ids: list[str]
    matrix: npt.NDArray[np.float32]
    id_rank: npt.NDArray[np.int64]  # position of ids[i] in code-point order, for tie-breaking
    norms: npt.NDArray[np.float32]  # L2 norm of each row, computed once per snapshot for cosine scores


def _table(name: str) -> str:
    if not PORTABLE_INDEX_NAME.fullmatch(name):  # the base validated it; never build SQL from anything else
        raise ValidationError(f"invalid index name {name!r}")
    return f'"{TABLE_PREFIX}{name}"'


def _metadata_index_name(index: str, key: str) -> str:
    digest = sha256(f"{index}\x00{key}".encode()).hexdigest()[:16]
    return f'"mastra_vidx_{digest}"'


def _blob(vector: npt.NDArray[np.floating]) -> bytes:
    return np.ascontiguousarray(vector, dtype=_FLOAT32).tobytes()


def _from_blob(blob: bytes) -> list[float]:
    return [float(x) for x in np.frombuffer(blob, dtype=_FLOAT32)]


def _not_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _storable_problem(value: Any, path: str) -> str | None:
    """Why SQLite could not store and filter ``value`` exactly (None if it can); ``path`` names the key."""
    if isinstance(value, str):
        if "\x00" in value:
            return f"{path}: strings containing U+0000 cannot be filtered in SQLite"
        if _not_utf8(value):
            return f"{path}: strings with unpaired surrogates cannot be stored"
        return None
    if isinstance(value, int) and not isinstance(value, bool) and not INT64_MIN <= value <= INT64_MAX:
        return f"{path}: integer {value} is outside the signed 64-bit range SQLite stores exactly"
    if isinstance(value, list):
        for i, item in enumerate(value):
            problem = _storable_problem(item, f"{path}[{i}]")
            if problem:
                return problem
    if isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}.{key}"
            problem = _storable_problem(key, f"{child} (key)") or _storable_problem(item, child)
            if problem:
                return problem
    return None


class SQLiteVector(MastraVector):
    """The embedded vector store: one SQLite file (or ``:memory:``), exact search, every filter operator.

    Args:
        url: a path (``./memory.db``), ``file:``/``sqlite:///`` URL, ``:memory:``, or :class:`SQLiteSettings`.
            The memory storage may use the same file through its own connection.

    ``create_index(metadata_indexes=[...])`` builds an expression index per key made of identifier
    characters (``thread_id``); equality and ``$in`` filters on such a top-level key can use it.
    """

    capabilities = SQLITE_CAPABILITIES
    translator = SQLiteFilterTranslator

    def __init__(self, url: str | Path | SQLiteSettings = DEFAULT_URL) -> None:
        super().__init__()
        self.settings = url if isinstance(url, SQLiteSettings) else SQLiteSettings(url=str(url))
        self._db = SQLiteConnection(self.settings.url)
        self._prepared: sqlite3.Connection | None = None
        self._snapshots: dict[str, _Snapshot] = {}

    async def close(self) -> None:
        """Close the database connection and drop the in-memory snapshots."""
        await self._db.close()
        self._prepared = None
        self._snapshots.clear()

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
            raise self._not_found(operation, name)
        return _IndexRow(int(row[0]), row[1], str(row[2]))

    def _changed(self, conn: sqlite3.Connection, name: str) -> None:
        """Record a change to the index (same transaction as the change) and drop its snapshot."""
        conn.execute(f"UPDATE {REGISTRY} SET generation = ? WHERE name = ?", (uuid.uuid4().hex, name))
        self._snapshots.pop(name, None)

    def _snapshot(self, conn: sqlite3.Connection, name: str, index: _IndexRow) -> _Snapshot:
        current = self._snapshots.get(name)
        if current is not None and current.generation == index.generation:
            return current
        seqs: list[int] = []
        ids: list[str] = []
        blobs: list[bytes] = []
        for seq, rid, blob in conn.execute(f"SELECT seq, id, vector FROM {_table(name)} ORDER BY seq"):
            seqs.append(seq)
            ids.append(rid)
            blobs.append(blob)
        matrix = np.frombuffer(b"".join(blobs), dtype=_FLOAT32).reshape(len(ids), index.dimension)
        rank = np.empty(len(ids), dtype=np.int64)
        rank[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids), dtype=np.int64)
        norms = np.linalg.norm(matrix, axis=1) if len(ids) else np.zeros(0, dtype=_FLOAT32)
        snapshot = _Snapshot(index.generation, np.asarray(seqs, dtype=np.int64), ids, matrix, rank, norms)
        self._snapshots[name] = snapshot
        return snapshot

    # --- validation specific to SQLite ---------------------------------------------------------

    def _rows(
        self,
        operation: str,
        ids: Sequence[str],
        vectors: npt.NDArray[np.float64],
        metadata: Sequence[Mapping[str, Any]],
    ) -> list[tuple[str, bytes, str]]:
        """(id, float32 blob, JSON text) per record, or the typed error for what SQLite cannot hold."""
        with np.errstate(over="ignore"):  # an overflow becomes inf, which is reported just below
            as_float32 = vectors.astype(_FLOAT32)
        bad = np.argwhere(~np.isfinite(as_float32))
        if bad.size:
            i, j = (int(x) for x in bad[0])
            raise self._error(
                ValidationError, operation, "INVALID_VECTOR",
                f"vector [{i}][{j}] = {vectors[i, j]!r} is outside the float32 range the store keeps",
            )  # fmt: skip
        rows = []
        for i, (rid, meta) in enumerate(zip(ids, metadata, strict=True)):
            if _not_utf8(rid):
                raise self._error(
                    ValidationError, operation, "INVALID_ID",
                    f"ids must be non-empty strings that encode as UTF-8 (ids[{i}] = {rid!r})",
                )  # fmt: skip
            rows.append(
                (rid, as_float32[i].tobytes(), self._metadata_json(operation, meta, f"metadata[{i}]"))
            )
        return rows

    def _metadata_json(self, operation: str, metadata: Mapping[str, Any], where: str) -> str:
        problem = _storable_problem(dict(metadata), where)
        if problem:
            raise self._error(ValidationError, operation, "INVALID_METADATA", problem)
        # Unescaped UTF-8 keeps every key spelled as is, which the translator's JSON paths rely on.
        return json.dumps(metadata, ensure_ascii=False, separators=(",", ":"), allow_nan=False)

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
        if options:
            raise self._error(
                ValidationError, "CREATE_INDEX", "INVALID_ARGS",
                f"unknown create_index options {sorted(options)} for sqlite (it takes none)",
            )  # fmt: skip
        tuning = config.model_dump(exclude_none=True, exclude={"type", "metric"})
        table = _table(name)

        def create(conn: sqlite3.Connection) -> None:
            row = conn.execute(f"SELECT dimension, metric FROM {REGISTRY} WHERE name = ?", (name,)).fetchone()
            if row is not None:
                self._check_dimension("CREATE_INDEX", name, int(row[0]), dimension)
                if row[1] != metric:
                    logger.warning(
                        "index %r already exists with metric %r; keeping it (asked for %r)",
                        name,
                        row[1],
                        metric,
                    )
            else:
                # A table without a registry row is a leftover; the registry is the source of truth.
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

        await self._write(create)

    async def _list_indexes(self) -> list[str]:
        def names(conn: sqlite3.Connection) -> list[str]:
            return [r[0] for r in conn.execute(f"SELECT name FROM {REGISTRY} ORDER BY name")]

        return await self._read(names)

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

        await self._write(delete)

    # --- hooks: writes -------------------------------------------------------------------------

    async def _upsert(
        self, name: str, ids: list[str], vectors: npt.NDArray[np.float64], metadata: list[dict[str, Any]]
    ) -> None:
        rows = self._rows("UPSERT", ids, vectors, metadata)
        table = _table(name)

        def upsert(conn: sqlite3.Connection) -> None:
            index = self._index_row(conn, "UPSERT", name)
            self._check_dimension("UPSERT", name, index.dimension, vectors.shape[1])
            conn.executemany(f"INSERT OR REPLACE INTO {table} (id, vector, metadata) VALUES (?, ?, ?)", rows)
            self._changed(conn, name)

        await self._write(upsert)

    async def _update_by_id(
        self, name: str, id: str, vector: npt.NDArray[np.float64] | None, metadata: dict[str, Any] | None
    ) -> None:
        await self._update(name, "id = :m_id", {"m_id": id}, vector, metadata)

    async def _update_by_filter(
        self,
        name: str,
        native_filter: Any,
        vector: npt.NDArray[np.float64] | None,
        metadata: dict[str, Any] | None,
    ) -> None:
        fragment = self._fragment(native_filter)
        await self._update(name, fragment.sql, dict(fragment.params), vector, metadata)

    async def _update(
        self,
        name: str,
        where: str,
        params: dict[str, Any],
        vector: npt.NDArray[np.float64] | None,
        metadata: dict[str, Any] | None,
    ) -> None:
        op = "UPDATE_VECTOR"
        assignments = []
        values = dict(params)
        if vector is not None:
            with np.errstate(over="ignore"):
                fits = bool(np.isfinite(vector.astype(_FLOAT32)).all())
            if not fits:
                raise self._error(
                    ValidationError,
                    op,
                    "INVALID_VECTOR",
                    "vector [0][j]: outside the float32 range the store keeps",
                )
            assignments.append("vector = :m_vector")
            values["m_vector"] = _blob(vector)
        if metadata is not None:
            assignments.append("metadata = :m_metadata")
            values["m_metadata"] = self._metadata_json(op, metadata, "metadata")
        table = _table(name)

        def update(conn: sqlite3.Connection) -> None:
            index = self._index_row(conn, op, name)
            if vector is not None:
                self._check_dimension(op, name, index.dimension, vector.shape[0])
            if conn.execute(f"UPDATE {table} SET {', '.join(assignments)} WHERE {where}", values).rowcount:
                self._changed(conn, name)

        await self._write(update)

    async def _delete_by_ids(self, name: str, ids: list[str]) -> None:
        table = _table(name)

        def delete(conn: sqlite3.Connection) -> None:
            self._index_row(conn, "DELETE_VECTORS", name)
            before = conn.total_changes
            conn.executemany(f"DELETE FROM {table} WHERE id = ?", ((i,) for i in ids))
            if conn.total_changes != before:
                self._changed(conn, name)

        await self._write(delete)

    async def _delete_by_filter(self, name: str, native_filter: Any) -> None:
        fragment = self._fragment(native_filter)
        table = _table(name)

        def delete(conn: sqlite3.Connection) -> None:
            self._index_row(conn, "DELETE_VECTORS", name)
            if conn.execute(f"DELETE FROM {table} WHERE {fragment.sql}", fragment.params).rowcount:
                self._changed(conn, name)

        await self._write(delete)

    # --- hooks: query --------------------------------------------------------------------------

    async def _query(
        self,
        name: str,
        vector: npt.NDArray[np.float64] | None,
        top_k: int,
        native_filter: Any,
        include_vector: bool,
        options: dict[str, Any],
    ) -> list[QueryResult]:
        unknown = set(options) - _ANN_QUERY_OPTIONS
        if unknown:
            raise self._error(
                ValidationError, "QUERY", "INVALID_ARGS",
                f"unknown query options {sorted(unknown)} for sqlite (accepted and ignored: ef, probes)",
            )  # fmt: skip
        fragment = self._fragment(native_filter) if native_filter is not None else None
        if vector is None:
            return await self._read(
                lambda conn: self._list_records(conn, name, top_k, fragment, include_vector)
            )
        return await self._read(
            lambda conn: self._search(conn, name, vector, top_k, fragment, include_vector)
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
        snapshot = self._snapshot(conn, name, index)
        if fragment is None:
            rows = np.arange(len(snapshot.ids), dtype=np.int64)
        else:
            sql = f"SELECT seq FROM {_table(name)} WHERE {fragment.sql}"
            seqs = np.fromiter((s for (s,) in conn.execute(sql, fragment.params)), dtype=np.int64)
            rows = np.searchsorted(snapshot.seqs, np.sort(seqs))
        if rows.size == 0:
            return []
        scores = self._scores(snapshot, rows, vector, index.metric)
        chosen, chosen_scores = _top_k(rows, scores, snapshot.id_rank, top_k)
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

    @staticmethod
    def _scores(
        snapshot: _Snapshot,
        rows: npt.NDArray[np.int64],
        vector: npt.NDArray[np.float64],
        metric: Metric,
    ) -> npt.NDArray[np.float64]:
        """Portable scores of ``rows``, computed in float32 against the float32 matrix.

        The stored vectors are float32 anyway; float32 arithmetic keeps scores within ~1e-6 of a float64
        recomputation while avoiding a float64 copy of the matrix on every query (about 30x faster).
        """
        every_row = rows.size == snapshot.matrix.shape[0]  # rows is sorted and unique: "all of them"
        query = vector.astype(_FLOAT32)
        parts = []
        for start in range(0, rows.size, _SCORE_CHUNK):
            picked = slice(start, start + _SCORE_CHUNK) if every_row else rows[start : start + _SCORE_CHUNK]
            block = snapshot.matrix[picked]
            if metric == "dotproduct":
                part = block @ query
            elif metric == "euclidean":
                part = 1.0 / (1.0 + np.linalg.norm(block - query, axis=1))
            else:
                denom = snapshot.norms[picked] * np.float32(np.linalg.norm(query))
                dots = block @ query
                with np.errstate(divide="ignore", invalid="ignore"):
                    part = np.clip(np.where(denom > 0, dots / np.where(denom > 0, denom, 1), 0), -1, 1)
            parts.append(np.asarray(part, dtype=np.float64))
        return np.concatenate(parts)

    @staticmethod
    def _metadata_of(conn: sqlite3.Connection, name: str, seqs: npt.NDArray[np.int64]) -> dict[int, Any]:
        wanted = json.dumps([int(s) for s in seqs])
        sql = f"SELECT seq, metadata FROM {_table(name)} WHERE seq IN (SELECT value FROM json_each(?))"
        return {int(seq): json.loads(meta) for seq, meta in conn.execute(sql, (wanted,))}

    def _fragment(self, native_filter: Any) -> SqlFragment:
        if not isinstance(native_filter, SqlFragment):
            raise MastraMemoryError(
                f"sqlite expected a translated SqlFragment, got {type(native_filter).__name__}"
            )
        return native_filter


def _top_k(
    rows: npt.NDArray[np.int64], scores: npt.NDArray[np.float64], id_rank: npt.NDArray[np.int64], k: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """The ``k`` best rows by (score descending, id ascending) and their scores.

    Every row scoring at least the k-th best score is a candidate, so records tied at the cut-off all
    compete on id and the selection equals a full sort's first ``k``.
    """
    n = scores.size
    if k < n:
        cutoff = np.partition(scores, n - k)[n - k]
        candidates = np.flatnonzero(scores >= cutoff)
    else:
        candidates = np.arange(n)
    order = np.lexsort((id_rank[rows[candidates]], -scores[candidates]))[:k]
    picked = candidates[order]
    return rows[picked], scores[picked]
