"""``LibSQLVector``: the vector store of docs/spec.md §3 on Mastra's own per-index tables in its LibSQL file.

Layout. Exactly what ``@mastra/libsql`` 1.23.1's ``LibSQLVector.createIndex`` creates (read from
``sqlite_master`` of a file it wrote; tests/interop/test_libsql_vector.py compares them): one table per
index, named as the index, ``(id SERIAL PRIMARY KEY, vector_id TEXT UNIQUE NOT NULL, embedding
F32_BLOB(<dimension>), metadata TEXT DEFAULT '{}')``, and a ``<index>_vector_idx`` index over
``libsql_vector_idx(embedding)``. A table is an index when its SQL holds ``F32_BLOB`` (Mastra's own test);
its dimension is the ``F32_BLOB(n)`` of that SQL. There is no registry and no metric: Mastra scores every
index by cosine, so this store offers cosine only. Records are ``vector_id`` (Mastra's random uuids or
this project's ``<message_id>#n``, both read), the float32 ``embedding`` and the JSON text ``metadata``;
``id`` is never written (``SERIAL`` is no rowid alias, Mastra leaves it NULL). Nothing else is created:
no expression indexes for ``metadata_indexes``, so the file keeps Mastra's schema (§4.7).

Search is exact (docs/spec.md §3.4): the rows the filter selects are read and scored by cosine in
float32, as the embedded store scores them, best by (score, id). Mastra's own query goes through
``vector_top_k`` (the approximate index) and may miss records an exact search finds ([Δ] §4.7); the
index is kept up to date by the engine on every write here, so Mastra's queries see what this store
wrote.

Filters are the embedded store's SQL translator over the ``metadata`` text (``translate.py``), so a
filter is exact or refused before any I/O, never weakened (§2.6). Every call runs on the connection's
single worker thread; every write is one ``BEGIN IMMEDIATE`` transaction, every read one read
transaction.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

import numpy as np

from ...capabilities import Metric
from ...errors import ValidationError
from ...filters.ast import Node
from ...scores import best
from ...vector.base import Matrix, Metadata, QueryRequest, Vector, _parsed
from ...vector.metadata import first_problem
from ...vector.records import PORTABLE_INDEX_NAME, IndexConfig, IndexStats, QueryResult
from ..sqlite.layout import check_layout
from ..sqlite.store import SQLFileVector, _metadata_json, _storable_problem
from ..sqlite.translate import SqlFragment, translate_cached
from .capabilities import LIBSQL_CAPABILITIES
from .connection import MEMORY, LibSQLConnection, require_libsql
from .settings import DEFAULT_URL, LibSQLSettings
from .translate import LibSQLFilterTranslator, fragment_sql

__all__ = ["LIBSQL_CAPABILITIES", "LibSQLVector"]

logger = logging.getLogger("mastra_memory.stores.libsql.store")

T = TypeVar("T")

STORE: Final = "LIBSQL"
_FLOAT32: Final = np.dtype("<f4")
_DIMENSION: Final = re.compile(r"F32_BLOB\((\d+)\)", re.IGNORECASE)


def _table_ddl(name: str, dimension: int) -> tuple[str, str]:
    """Mastra's two statements for an index, spelled as ``LibSQLVector.createIndex`` spells them (so
    ``sqlite_master`` holds the same text whichever side created the index)."""
    table = (
        f"CREATE TABLE IF NOT EXISTS {name} (\n"
        "            id SERIAL PRIMARY KEY,\n"
        "            vector_id TEXT UNIQUE NOT NULL,\n"
        f"            embedding F32_BLOB({dimension}),\n"
        "            metadata TEXT DEFAULT '{}'\n"
        "          )"
    )
    index = (
        f"CREATE INDEX IF NOT EXISTS {name}_vector_idx\n"
        f"          ON {name} (libsql_vector_idx(embedding))\n"
        "        "
    )
    return table, index


def _checked(name: str) -> str:
    if not PORTABLE_INDEX_NAME.fullmatch(name):  # the base validated it; never build SQL from anything else
        raise ValidationError(f"invalid index name {name!r}")
    return name


def _dimension_of(conn: Any, name: str) -> int | None:
    """The dimension of index ``name``: None when no table has that name; -1 when the table is no vector
    index (Mastra's memory tables, say)."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone()
    if row is None:
        return None
    found = _DIMENSION.search(row[0] or "")
    return int(found.group(1)) if found else -1


def _vectors(blobs: Sequence[bytes], dimension: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    matrix = np.empty((len(blobs), dimension), dtype=_FLOAT32)
    for i, blob in enumerate(blobs):
        matrix[i] = np.frombuffer(blob, dtype=_FLOAT32, count=dimension)
    return matrix


def _id(rid: str) -> str | bytes:
    """An id as bound under ``CAST(? AS TEXT)``: the driver cuts text at U+0000, so such an id travels as its
    UTF-8 bytes, which the cast turns into the same text, NUL included (docs/spec.md §3.5)."""
    return rid.encode() if "\x00" in rid else rid


#: An id as read: the driver cuts text at U+0000 on the way out too, so ids are read as their bytes.
_ID_COLUMN: Final = "CAST(vector_id AS BLOB)"


def _metadata(text: str | None) -> dict[str, Any]:
    value = json.loads(text) if text else {}
    return value if isinstance(value, dict) else {}


class LibSQLVector(SQLFileVector):
    """Vectors in Mastra's LibSQL file (``libsql:///path``, ``file:./local.db``), in its per-index tables.

    Args:
        url: ``libsql:///path``, Mastra's ``file:./local.db``, a plain path, ``:memory:`` or
            :class:`LibSQLSettings`. The memory storage (:class:`LibSQLStorage`) may use the same file.

    Exact cosine search; every filter operator but ``$regex``. A Mastra process may use the same file at
    the same time (both sides use WAL and wait for each other's locks).
    """

    capabilities = LIBSQL_CAPABILITIES
    translator = LibSQLFilterTranslator

    def __init__(self, url: str | LibSQLSettings = DEFAULT_URL) -> None:
        super().__init__()
        require_libsql("VECTOR", "F32_BLOB vectors")
        self.settings = url if isinstance(url, LibSQLSettings) else LibSQLSettings(url=url)
        self._conn = LibSQLConnection(self.settings.path)
        self._layout_checked = False

    @property
    def url(self) -> str:
        """``libsql:///<path>``: the scheme of this store (never taken for an embedded SQLite file)."""
        return f"libsql:///{self._conn.path}"

    async def close(self) -> None:
        """Close the connection. A closed store reopens on next use (``:memory:`` starts empty)."""
        await self._conn.close()
        self._layout_checked = False

    # --- plumbing ------------------------------------------------------------------------------

    async def _check_layout(self) -> None:
        if not self._layout_checked and self._conn.path != MEMORY:
            # Read-only, before the connection opens: a file in this project's embedded layout is refused
            # unchanged (docs/spec.md §4.7).
            await asyncio.to_thread(check_layout, self._conn.path, "mastra", STORE)
        self._layout_checked = True

    async def _write(self, fn: Callable[[Any], T]) -> T:
        await self._check_layout()
        return await self._conn.transaction(fn)

    async def _read(self, fn: Callable[[Any], T]) -> T:
        """``fn`` in one read transaction, so every statement sees the same state of the file."""
        await self._check_layout()

        def snapshot(conn: Any) -> T:
            conn.execute("BEGIN")
            try:
                return fn(conn)
            finally:
                conn.execute("COMMIT")

        return await self._conn.run(snapshot)

    def _index(self, conn: Any, operation: str, name: str) -> int:
        """The dimension of the index, or IndexNotFoundError (a table that is no vector index is none)."""
        dimension = _dimension_of(conn, _checked(name))
        if dimension is None or dimension < 0:
            raise self._not_found(operation, name)
        return dimension

    def _metadata_problem(self, metadata: dict[str, Any], record_id: str | None = None) -> str | None:
        """What libSQL cannot store and filter exactly (U+0000, integers beyond int64), as for the
        embedded store (docs/spec.md §3.6)."""
        return first_problem(metadata, _storable_problem)

    def translate_filter(self, flt: Any) -> Any:
        """As :meth:`MastraVector.translate_filter`, through the SQLite translator's bounded cache."""
        node: Node | None = _parsed(flt)
        if node is None:
            return None
        return translate_cached(node, LibSQLFilterTranslator)

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
        table, index = _table_ddl(_checked(name), dimension)

        def create(conn: Any) -> None:
            existing = _dimension_of(conn, name)
            if existing is not None and existing < 0:
                raise self._error(
                    ValidationError,
                    "CREATE_INDEX",
                    "INVALID_ARGS",
                    f"a table named {name!r} exists in {self._conn.path} and is no vector index; "
                    "choose another index name",
                )
            if existing is not None:
                self._keep_existing(name, existing, "cosine", dimension, metric)
            conn.execute(table)
            conn.execute(index)

        await self._write(create)
        if metadata_indexes:
            # Mastra's layout has no metadata indexes; adding some would change its schema (§4.7).
            logger.debug(
                "index %r: metadata_indexes %s not created (Mastra's layout)", name, metadata_indexes
            )

    async def _list_indexes(self) -> list[str]:
        def names(conn: Any) -> list[str]:
            sql = (
                "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%F32_BLOB%' ORDER BY name"
            )
            return [r[0] for r in conn.execute(sql).fetchall()]

        return await self._read(names)

    async def _describe_index(self, name: str) -> IndexStats:
        def describe(conn: Any) -> IndexStats:
            dimension = self._index(conn, "DESCRIBE_INDEX", name)
            (count,) = conn.execute(f"SELECT count(*) FROM {name}").fetchone()
            return IndexStats(dimension=dimension, count=int(count), metric="cosine")

        return await self._read(describe)

    async def _delete_index(self, name: str) -> None:
        def delete(conn: Any) -> None:
            existing = _dimension_of(conn, _checked(name))
            if existing is not None and existing >= 0:  # never a table that is no vector index
                conn.execute(f"DROP TABLE {name}")

        await self._write(delete)

    # --- hooks: writes -------------------------------------------------------------------------

    async def _write_rows(
        self,
        name: str,
        replaced: SqlFragment | None,
        ids: list[str],
        vectors: Matrix,
        metadata: list[Metadata],
    ) -> None:
        as_float32 = vectors.astype(_FLOAT32)
        rows = [
            (_id(rid), as_float32[i].tobytes(), _metadata_json(meta))
            for i, (rid, meta) in enumerate(zip(ids, metadata, strict=True))
        ]
        where, values = fragment_sql(replaced)
        # Mastra's statement: the vector index is maintained by the engine on every row written.
        sql = (
            f"INSERT INTO {name} (vector_id, embedding, metadata) VALUES (CAST(? AS TEXT), vector32(?), ?) "
            "ON CONFLICT (vector_id) DO UPDATE SET embedding = excluded.embedding, "
            "metadata = excluded.metadata"
        )

        def upsert(conn: Any) -> None:
            dimension = self._index(conn, "UPSERT", name)
            self._check_dimension("UPSERT", name, dimension, vectors.shape[1])
            if replaced is not None:
                conn.execute(f"DELETE FROM {name} {where}", values)
            for row in rows:
                conn.execute(sql, row)

        await self._write(upsert)

    async def _update_by_id(
        self, name: str, id: str, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        await self._update(name, "WHERE vector_id = CAST(? AS TEXT)", [_id(id)], vector, metadata)

    async def _update_by_filter(
        self, name: str, native_filter: Any, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        where, values = fragment_sql(self._fragment(native_filter))
        await self._update(name, where, values, vector, metadata)

    async def _update(
        self, name: str, where: str, values: list[Any], vector: Vector | None, metadata: Metadata | None
    ) -> None:
        assignments: list[str] = []
        params: list[Any] = []
        if vector is not None:
            assignments.append("embedding = vector32(?)")
            params.append(np.ascontiguousarray(vector, dtype=_FLOAT32).tobytes())
        if metadata is not None:
            assignments.append("metadata = ?")
            params.append(_metadata_json(metadata))
        sql = f"UPDATE {name} SET {', '.join(assignments)} {where}"

        def update(conn: Any) -> None:
            dimension = self._index(conn, "UPDATE_VECTOR", name)
            if vector is not None:
                self._check_dimension("UPDATE_VECTOR", name, dimension, vector.shape[0])
            conn.execute(sql, [*params, *values])

        await self._write(update)

    async def _delete_by_ids(self, name: str, ids: list[str]) -> None:
        def delete(conn: Any) -> None:
            self._index(conn, "DELETE_VECTORS", name)
            for rid in ids:
                conn.execute(f"DELETE FROM {name} WHERE vector_id = CAST(? AS TEXT)", (_id(rid),))

        await self._write(delete)

    async def _delete_by_filter(self, name: str, native_filter: Any) -> None:
        where, values = fragment_sql(self._fragment(native_filter))

        def delete(conn: Any) -> None:
            self._index(conn, "DELETE_VECTORS", name)
            conn.execute(f"DELETE FROM {name} {where}", values)

        await self._write(delete)

    # --- hooks: query --------------------------------------------------------------------------

    async def _query(self, request: QueryRequest) -> list[QueryResult]:
        native_filter = request.native_filter
        where, values = fragment_sql(self._fragment(native_filter) if native_filter is not None else None)
        vector = request.vector
        if vector is None:
            return await self._read(
                lambda conn: self._list(
                    conn, request.name, request.top_k, where, values, request.include_vector
                )
            )
        return await self._read(
            lambda conn: self._search(
                conn, request.name, vector, request.top_k, where, values, request.include_vector
            )
        )

    def _list(
        self, conn: Any, name: str, top_k: int, where: str, values: list[Any], include_vector: bool
    ) -> list[QueryResult]:
        """Metadata-only query: the first ``top_k`` matches in id order (code points: BINARY), score 0.0."""
        dimension = self._index(conn, "QUERY", name)
        sql = f"SELECT {_ID_COLUMN}, metadata, embedding FROM {name} {where} ORDER BY vector_id LIMIT ?"
        return [
            QueryResult(
                id=rid.decode(),
                score=0.0,
                metadata=_metadata(meta),
                vector=(
                    [float(x) for x in np.frombuffer(blob, dtype=_FLOAT32, count=dimension)]
                    if include_vector and blob is not None
                    else None
                ),
            )
            for rid, meta, blob in conn.execute(sql, [*values, top_k]).fetchall()
        ]

    def _search(
        self,
        conn: Any,
        name: str,
        vector: Vector,
        top_k: int,
        where: str,
        values: list[Any],
        include_vector: bool,
    ) -> list[QueryResult]:
        """Exact cosine search over the rows ``where`` selects (docs/spec.md §3.4)."""
        dimension = self._index(conn, "QUERY", name)
        self._check_dimension("QUERY", name, dimension, vector.shape[0])
        condition = f"{where} AND embedding IS NOT NULL" if where else "WHERE embedding IS NOT NULL"
        rows = [
            (rowid, rid.decode(), blob)
            for rowid, rid, blob in conn.execute(
                f"SELECT rowid, {_ID_COLUMN}, embedding FROM {name} {condition}", values
            ).fetchall()
        ]
        if not rows:
            return []
        matrix = _vectors([r[2] for r in rows], dimension)
        query = vector.astype(_FLOAT32)
        # Scored as the embedded store scores (stores/sqlite/search.py): float32, a zero-norm row scores 0.
        denom = np.linalg.norm(matrix, axis=1) * np.float32(np.linalg.norm(query))
        cosine = np.zeros(len(rows), dtype=_FLOAT32)
        np.divide(matrix @ query, denom, out=cosine, where=denom > 0)
        np.clip(cosine, -1, 1, out=cosine)
        scores = cosine.astype(np.float64)
        chosen = best(scores, top_k, lambda i: rows[i][1])
        wanted = json.dumps([rows[i][0] for i in chosen])
        metadata = {
            int(rowid): _metadata(meta)
            for rowid, meta in conn.execute(
                f"SELECT rowid, metadata FROM {name} WHERE rowid IN (SELECT value FROM json_each(?))",
                (wanted,),
            ).fetchall()
        }
        return [
            QueryResult(
                id=rows[i][1],
                score=float(scores[i]),
                metadata=metadata.get(int(rows[i][0]), {}),
                vector=[float(x) for x in matrix[i]] if include_vector else None,
            )
            for i in chosen
        ]
