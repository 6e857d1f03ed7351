"""``PgVector``: the ``MastraVector`` adapter on PostgreSQL + pgvector.

Layout. One table per index, named after the index in the configured schema: ``id text COLLATE "C"``
(primary key; code-point order), ``embedding vector(<dimension>)`` (float32) and ``metadata jsonb``. A
registry table ``mastra_vector_indexes`` records each index's dimension, metric and ANN configuration, so
``list_indexes`` shows only indexes (never unrelated tables) and every operation reads the metric it
needs in the same transaction as its data.

ANN indexes. ``hnsw`` (default) and ``ivfflat``, or ``flat`` for none: their configuration, DDL, rebuilds
and query-time parameters are :mod:`.ann`'s.

Queries never return fewer than ``min(top_k, matching)`` records: an ANN query runs with pgvector's
iterative index scans (``hnsw.iterative_scan = strict_order``, ``ivfflat.iterative_scan``), and when it
still returns fewer than ``top_k`` rows the same query runs again as an exact scan. Scores are computed
from pgvector's distances per docs/spec.md §3.4: cosine ``1 - d``, euclidean ``1 / (1 + d)``, dot product
``-d``.

Metadata indexes. ``create_index(metadata_indexes=["thread_id", ...])`` builds a GIN index
(``jsonb_path_ops``) on ``metadata -> 'thread_id'`` for every key made of identifier characters; the
translator writes equality and ``$in`` on such keys as containment over that same expression.

Ids. An id is stored as it is, except that U+0000, which PostgreSQL text cannot hold, is escaped by
:func:`mastra_memory.vector.escape_nul` (an escape that keeps ids distinct and in code-point order, so ties
and listings by id stay exact; docs/spec.md §3.5).

Writes. An upsert is one transaction: the rows travel in one binary ``COPY`` into a per-session staging
table, then move with ``INSERT ... SELECT ... ON CONFLICT (id) DO UPDATE`` statements of at most 16,383 rows
each, in id order so concurrent upserts lock rows in the same order. How rows and metadata are encoded
(floats as their exact decimal value) is :mod:`.layout`'s.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final

import psycopg
from mastra_memory.capabilities import Metric
from mastra_memory.errors import MastraMemoryError, ValidationError, VectorStoreError
from mastra_memory.vector.base import MastraVector, Matrix, Metadata, QueryRequest, Vector
from mastra_memory.vector.records import (
    IndexConfig,
    IndexStats,
    QueryResult,
    escape_nul,
    unescape_nul,
)

from .ann import (
    VECTOR_INDEX_MAX,
    IndexRow,
    build_ann,
    derived_name,
    index_config,
    rebuild,
    tune,
)
from .capabilities import MAX_ROWS_PER_STATEMENT, PGVECTOR_CAPABILITIES
from .connection import Connection, PgDatabase, is_transient, quote_ident
from .layout import FLOAT32, copy_payload, metadata_problem, metadata_text, parse_vector, vector_text
from .lexical import PgLexicalIndex, drop_lexical_rows
from .settings import PgVectorSettings
from .translate import PgFilterTranslator, SqlFilter, json_text

__all__ = ["PGVECTOR_CAPABILITIES", "PgVector"]

logger = logging.getLogger("mastra_memory_pgvector.store")

REGISTRY: Final = "mastra_vector_indexes"
_NATIVE_NAME: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPERATOR: Final[Mapping[Metric, str]] = {"cosine": "<=>", "euclidean": "<->", "dotproduct": "<#>"}
_QUERY_OPTIONS: Final = frozenset({"ef", "probes", "exact"})
# The per-session staging table of upserts, and the size of the pieces a COPY is sent in.
_STAGE: Final = "pg_temp.mastra_upsert_stage"
_COPY_CHUNK: Final = 4 << 20


def _score(metric: Metric, distance: float | None) -> float:
    if distance is None or math.isnan(distance):
        return 0.0  # a zero vector has no direction (cosine)
    if metric == "cosine":
        return max(-1.0, min(1.0, 1.0 - distance))
    if metric == "euclidean":
        return 1.0 / (1.0 + distance)
    return -distance


class PgVector(MastraVector):
    """The pgvector vector store: one table per index, exact or ANN (HNSW/IVFFlat) search, every filter
    operator.

    Args:
        settings: :class:`PgVectorSettings`, a DSN/URL string, or ``None`` to read everything from the
            environment (``MASTRA_MEMORY_PGVECTOR_URL``, ...).

    Query options: ``ef`` (HNSW search list, ``hnsw.ef_search``), ``probes`` (IVF lists probed) and
    ``exact=True`` (skip the ANN index).
    """

    capabilities = PGVECTOR_CAPABILITIES
    translator = PgFilterTranslator
    query_options = _QUERY_OPTIONS
    native_index_name_pattern = _NATIVE_NAME
    # The column of a record's id in the table that holds the rows (``vector_id`` in the Mastra layout).
    _ID_COLUMN: ClassVar[str] = "id"

    def __new__(cls, settings: PgVectorSettings | str | None = None) -> PgVector:
        # layout="mastra": @mastra/pg's own per-index tables, the subclass of .vector_tables (§4.7).
        if cls is PgVector and PgVectorSettings.given(settings).layout == "mastra":
            from .vector_tables import MastraTablesPgVector

            cls = MastraTablesPgVector
        return super().__new__(cls)

    def __init__(self, settings: PgVectorSettings | str | None = None) -> None:
        super().__init__()
        self.settings = PgVectorSettings.given(settings)
        self.schema = self.settings.schema_name
        self._db = PgDatabase(self.settings, self._setup)
        self._pgvector: tuple[int, ...] = (0,)

    # --- plumbing ----------------------------------------------------------------------------------

    def _real(self, name: str) -> str:
        """The table that holds the index's rows, which writes address."""
        if not _NATIVE_NAME.fullmatch(name):  # the base validated it; never build SQL from anything else
            raise ValidationError(f"invalid index name {name!r}")
        return f"{quote_ident(self.schema)}.{quote_ident(name)}"

    def _table(self, name: str) -> str:
        """What reads select ``id, embedding, metadata`` from: here the table itself."""
        return self._real(name)

    def _scoped(self, where: str) -> str:
        """The condition a write puts on the rows of ``_real``: all of them are the index's here."""
        return where

    def _insert_from_stage(self, table: str) -> str:
        """The INSERT moving the staged rows numbered in ``[%s, %s)`` into ``table`` (insert or replace)."""
        return (
            f"INSERT INTO {table} (id, embedding, metadata) "
            f"SELECT id, embedding, metadata FROM {_STAGE} "
            "WHERE n >= %s AND n < %s ORDER BY n "
            "ON CONFLICT (id) DO UPDATE SET embedding = EXCLUDED.embedding, "
            "metadata = EXCLUDED.metadata"
        )

    @property
    def _registry(self) -> str:
        return f"{quote_ident(self.schema)}.{REGISTRY}"

    async def _setup(self, conn: Connection) -> list[str]:
        """Extension, schema and registry, created idempotently under an advisory lock."""
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext('mastra_memory_pgvector:setup'))")
        row = await (
            await conn.execute(
                "SELECT e.extversion, n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = "
                "e.extnamespace "
                "WHERE e.extname = 'vector'"
            )
        ).fetchone()
        if row is None:
            if not self.settings.create_extension:
                raise VectorStoreError(
                    f"the pgvector extension is not installed in {self._db.where}; run CREATE EXTENSION "
                    "vector "
                    "(or set create_extension=True)",
                    id="MASTRA_VECTOR_PGVECTOR_SETUP_NO_EXTENSION",
                )
            try:
                async with conn.transaction():
                    await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except psycopg.Error as exc:
                raise VectorStoreError(
                    f"cannot create the pgvector extension in {self._db.where}: {exc}; install pgvector on "
                    "the "
                    "server and run CREATE EXTENSION vector as a superuser",
                    id="MASTRA_VECTOR_PGVECTOR_SETUP_NO_EXTENSION",
                ) from exc
            row = await (
                await conn.execute(
                    "SELECT e.extversion, n.nspname FROM pg_extension e "
                    "JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
                )
            ).fetchone()
            assert row is not None
        self._pgvector = tuple(int(p) for p in re.findall(r"\d+", str(row[0]))[:3]) or (0,)
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {quote_ident(self.schema)}")
        from .vector_tables import refuse_mastra_schema

        if self.settings.layout == "mastra":  # Mastra's tables need no registry (vector_tables.py)
            return [f"SET search_path TO {quote_ident(str(row[1]))}, public"]
        await refuse_mastra_schema(conn, self.schema, self._db.where)  # the layout guard, before the registry
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS {self._registry} ("
            'name text COLLATE "C" PRIMARY KEY, dimension integer NOT NULL, metric text NOT NULL, '
            "config jsonb NOT NULL, built boolean NOT NULL DEFAULT false, "
            "created_at timestamptz NOT NULL DEFAULT now())"
        )
        extension_schema = str(row[1])
        # Every pooled connection finds pgvector's types and operators wherever the extension lives.
        return [f"SET search_path TO {quote_ident(extension_schema)}, public"]

    async def _run(self, operation: str, fn: Any, *, idempotent: bool = True) -> Any:
        try:
            return await self._db.run(fn, idempotent=idempotent)
        except MastraMemoryError:
            raise
        except psycopg.Error as exc:
            if is_transient(exc):
                raise self._error(
                    VectorStoreError,
                    operation,
                    "CONNECTION_FAILED",
                    f"PostgreSQL at {self._db.where} is unreachable or closed the connection: {exc}; "
                    "check that the server is running and the DSN is right",
                ) from exc
            raise self._error(
                VectorStoreError, operation, "FAILED", f"pgvector {operation.lower()} failed: {exc}"
            ) from exc

    async def _index(self, conn: Connection, operation: str, name: str, *, lock: bool = False) -> IndexRow:
        row = await (
            await conn.execute(
                f"SELECT dimension, metric, config, built FROM {self._registry} WHERE name = %s"
                + (" FOR SHARE" if lock else ""),
                (name,),
            )
        ).fetchone()
        if row is None:
            raise self._not_found(operation, name)
        return IndexRow.of(name, int(row[0]), row[1], row[2], built=bool(row[3]))

    async def close(self) -> None:
        """Close the connection pool."""
        await self._db.close()

    # --- naming ------------------------------------------------------------------------------------

    def to_native_index_name(self, name: str) -> str:
        """Index names are SQL identifiers of at most 63 bytes: portable names are used as they are."""
        return name

    def lexical_index(self) -> PgLexicalIndex:
        """The full-text index beside this store's indexes, for hybrid recall (:mod:`.lexical`)."""
        return PgLexicalIndex(self)

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
        wanted = index_config(dimension, config, self._error)
        table = self._table(name)

        async def create(conn: Connection) -> None:
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"{self.schema}.{name}",))
            row = await (
                await conn.execute(
                    f"SELECT dimension, metric, config, built FROM {self._registry} WHERE name = %s", (name,)
                )
            ).fetchone()
            if row is not None:
                self._keep_existing(name, int(row[0]), row[1], dimension, metric)
                existing = IndexRow.of(name, int(row[0]), row[1], row[2], built=bool(row[3]))
                await rebuild(conn, self.schema, self._registry, table, existing, row[2], config, wanted)
            else:
                from .vector_tables import vector_table_layout, wrong_index_layout

                found, _ = await vector_table_layout(conn, table)
                if found == "mastra":  # the layout guard, before any write (docs/spec.md §4.7)
                    raise wrong_index_layout(self.schema, name, self._db.where, found, "mastra-memory")
                exists = await (await conn.execute("SELECT to_regclass(%s)", (table,))).fetchone()
                if exists is not None and exists[0] is not None:
                    raise self._error(
                        VectorStoreError, "CREATE_INDEX", "NAME_TAKEN",
                        f"a table named {name!r} already exists in schema {self.schema!r} and is not a "
                        "mastra-memory index; choose another index name or schema",
                    )  # fmt: skip
                pkey = quote_ident(derived_name(name, "pkey"))
                await conn.execute(
                    f'CREATE TABLE {table} (id text COLLATE "C" NOT NULL, embedding '
                    f"vector({int(dimension)}) NOT NULL, "
                    f"metadata jsonb NOT NULL DEFAULT '{{}}'::jsonb, CONSTRAINT {pkey} PRIMARY KEY (id))"
                )
                index = IndexRow.of(name, dimension, metric, wanted, built=False)
                built = await build_ann(conn, table, index, 0)
                await conn.execute(
                    f"INSERT INTO {self._registry} (name, dimension, metric, config, built) "
                    "VALUES (%s, %s, %s, %s::jsonb, %s)",
                    (name, dimension, metric, json_text(wanted), built),
                )
            for key in metadata_indexes:
                if not _IDENTIFIER.fullmatch(key):
                    logger.info("index %r: no metadata index for key %r (not an identifier)", name, key)
                    continue
                md = quote_ident(derived_name(name, f"{key}_idx"))
                await conn.execute(
                    f"CREATE INDEX IF NOT EXISTS {md} ON {table} USING gin ((metadata -> '{key}') "
                    "jsonb_path_ops)"
                )

        await self._run("CREATE_INDEX", create)

    async def _list_indexes(self) -> list[str]:
        async def names(conn: Connection) -> list[str]:
            rows = await (await conn.execute(f"SELECT name FROM {self._registry} ORDER BY name")).fetchall()
            return [str(r[0]) for r in rows]

        result: list[str] = await self._run("LIST_INDEXES", names)
        return result

    async def _describe_index(self, name: str) -> IndexStats:
        async def describe(conn: Connection) -> IndexStats:
            index = await self._index(conn, "DESCRIBE_INDEX", name)
            count = await (await conn.execute(f"SELECT count(*) FROM {self._table(name)}")).fetchone()
            return IndexStats(
                dimension=index.dimension, count=int(count[0]) if count else 0, metric=index.metric
            )

        stats: IndexStats = await self._run("DESCRIBE_INDEX", describe)
        return stats

    async def _delete_index(self, name: str) -> None:
        table = self._table(name)

        async def delete(conn: Connection) -> None:
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"{self.schema}.{name}",))
            deleted = await conn.execute(f"DELETE FROM {self._registry} WHERE name = %s", (name,))
            if deleted.rowcount:
                await conn.execute(f"DROP TABLE IF EXISTS {table}")
            await drop_lexical_rows(conn, self.schema, name)  # the index's texts go with it

        await self._run("DELETE_INDEX", delete)

    # --- validation specific to PostgreSQL ----------------------------------------------------------

    def _metadata_problem(self, metadata: dict[str, Any], record_id: str | None = None) -> str | None:
        """What PostgreSQL text cannot hold (U+0000: declared deviation nul-character-rejected), judged by
        the shared validation before any I/O, so ``Memory`` refuses such a message before storing it
        (docs/spec.md §3.6, §5.4)."""
        return metadata_problem(metadata)

    # --- hooks: writes ----------------------------------------------------------------------------

    async def _upsert(self, name: str, ids: list[str], vectors: Matrix, metadata: list[Metadata]) -> None:
        await self._write_rows(name, None, ids, vectors, metadata)

    async def _upsert_replacing(
        self, name: str, native_filter: Any, ids: list[str], vectors: Matrix, metadata: list[Metadata]
    ) -> None:
        # One transaction (docs/spec.md §3.1, upsert_delete_filter "atomic"): no reader sees the matches
        # deleted and the new rows missing, and a failure leaves the old rows.
        await self._write_rows(name, self._filter(native_filter), ids, vectors, metadata)

    async def _write_rows(
        self,
        name: str,
        replaced: SqlFilter | None,
        ids: list[str],
        vectors: Matrix,
        metadata: list[Metadata],
    ) -> None:
        """Insert or replace the rows, after deleting those ``replaced`` (a translated filter) matches,
        in the same transaction."""
        op = "UPSERT"
        as_float32 = vectors.astype(FLOAT32)  # every value fits: the shared validation refused others (§3.3)
        # U+0000, which text cannot hold, is escaped (docs/spec.md §3.5); surrogates never get here (§3.3).
        ids = [escape_nul(rid) for rid in ids]
        texts = [metadata_text(meta) for meta in metadata]
        order = sorted(range(len(ids)), key=ids.__getitem__)  # one lock order for concurrent upserts
        payload = copy_payload([ids[i] for i in order], as_float32[order], [texts[i] for i in order])
        table = self._real(name)
        rows = len(ids)

        async def upsert(conn: Connection) -> None:
            index = await self._index(conn, op, name, lock=True)
            self._check_dimension(op, name, index.dimension, vectors.shape[1])
            if replaced is not None:
                await conn.execute(
                    f"DELETE FROM {table} WHERE {self._scoped(replaced.sql)}", dict(replaced.params)
                )
            # Rows travel in one binary COPY into a per-session staging table, then move in INSERT
            # statements of at most 16,383 rows each (ON CONFLICT: insert or replace).
            # The stage is empty here: ``run`` always holds a transaction, ON COMMIT DELETE ROWS empties it
            # at every commit and a rollback takes its rows along. (A TRUNCATE per upsert, swapping the
            # table's file, cost about 1 ms of every save.) The sequence is not transactional, so it is
            # reset; both statements travel in one round trip.
            await conn.execute(
                f"CREATE TEMP TABLE IF NOT EXISTS {_STAGE} (n bigserial, id text, embedding vector, "
                "metadata jsonb) ON COMMIT DELETE ROWS; "
                f"SELECT setval(pg_get_serial_sequence('{_STAGE}', 'n'), 1, false)"
            )
            async with conn.cursor().copy(
                f"COPY {_STAGE} (id, embedding, metadata) FROM STDIN (FORMAT BINARY)"
            ) as copy:
                for start in range(0, len(payload), _COPY_CHUNK):
                    await copy.write(payload[start : start + _COPY_CHUNK])
            for first in range(1, rows + 1, MAX_ROWS_PER_STATEMENT):
                await conn.execute(self._insert_from_stage(table), (first, first + MAX_ROWS_PER_STATEMENT))
            if index.kind == "ivfflat" and not index.built:
                await self._train_ivf(conn, index)

        await self._run(op, upsert)

    async def _train_ivf(self, conn: Connection, index: IndexRow) -> None:
        count = await (await conn.execute(f"SELECT count(*) FROM {self._table(index.name)}")).fetchone()
        if await build_ann(conn, self._table(index.name), index, int(count[0]) if count else 0):
            await conn.execute(f"UPDATE {self._registry} SET built = true WHERE name = %s", (index.name,))

    async def _update_by_id(
        self, name: str, id: str, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        await self._update(name, f"{self._ID_COLUMN} = %(m_id)s", {"m_id": escape_nul(id)}, vector, metadata)

    async def _update_by_filter(
        self, name: str, native_filter: Any, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        flt = self._filter(native_filter)
        await self._update(name, flt.sql, dict(flt.params), vector, metadata)

    async def _update(
        self, name: str, where: str, params: dict[str, Any], vector: Vector | None, metadata: Metadata | None
    ) -> None:
        op = "UPDATE_VECTOR"
        assignments = []
        values = dict(params)
        if vector is not None:
            assignments.append("embedding = %(m_vector)s::vector")
            values["m_vector"] = vector_text(vector)
        if metadata is not None:
            assignments.append("metadata = %(m_metadata)s::jsonb")
            values["m_metadata"] = metadata_text(metadata)
        table = self._real(name)

        async def update(conn: Connection) -> None:
            index = await self._index(conn, op, name, lock=True)
            if vector is not None:
                self._check_dimension(op, name, index.dimension, vector.shape[0])
            await conn.execute(
                f"UPDATE {table} SET {', '.join(assignments)} WHERE {self._scoped(where)}", values
            )

        await self._run(op, update)

    async def _delete_by_ids(self, name: str, ids: list[str]) -> None:
        wanted = [escape_nul(i) for i in ids]
        await self._delete(name, f"{self._ID_COLUMN} = ANY(%(ids)s::text[])", {"ids": wanted}, bool(wanted))

    async def _delete_by_filter(self, name: str, native_filter: Any) -> None:
        flt = self._filter(native_filter)
        await self._delete(name, flt.sql, dict(flt.params), True)

    async def _delete(self, name: str, where: str, params: dict[str, Any], any_rows: bool) -> None:
        op = "DELETE_VECTORS"
        table = self._real(name)

        async def delete(conn: Connection) -> None:
            await self._index(conn, op, name, lock=True)
            if any_rows:
                await conn.execute(f"DELETE FROM {table} WHERE {self._scoped(where)}", params)

        await self._run(op, delete)

    # --- hooks: query -----------------------------------------------------------------------------

    async def _query(self, request: QueryRequest) -> list[QueryResult]:
        op = "QUERY"
        for key in ("ef", "probes"):
            value = request.options.get(key)
            if value is not None:
                self._count_option(key, value, 1000 if key == "ef" else 32_768)
        flt = self._filter(request.native_filter) if request.native_filter is not None else None
        query_text = None if request.vector is None else vector_text(request.vector)
        exact_only = bool(request.options.get("exact"))

        async def run(conn: Connection) -> list[QueryResult]:
            index = await self._index(conn, op, request.name)
            if query_text is None:
                return await self._list_records(conn, index, request.top_k, flt, request.include_vector)
            self._check_dimension(
                op, request.name, index.dimension, len(request.vector) if request.vector is not None else 0
            )
            if index.built and not exact_only:
                hits = await self._search(conn, index, query_text, flt, request, ann=True)
                if len(hits) >= request.top_k:
                    return hits
            return await self._search(conn, index, query_text, flt, request, ann=False)

        results: list[QueryResult] = await self._run(op, run)
        return results

    async def _list_records(
        self, conn: Connection, index: IndexRow, top_k: int, flt: SqlFilter | None, include_vector: bool
    ) -> list[QueryResult]:
        """Metadata-only query: the first ``top_k`` matches in id order, score 0.0."""
        where = f"WHERE {flt.sql}" if flt else ""
        columns = "id, metadata" + (", embedding::text" if include_vector else "")
        params: dict[str, Any] = {**(flt.params if flt else {}), "m_limit": top_k}
        rows = await (
            await conn.execute(
                f"SELECT {columns} FROM {self._table(index.name)} {where} ORDER BY id LIMIT %(m_limit)s",
                params,
            )
        ).fetchall()
        return [
            QueryResult(
                id=unescape_nul(row[0]),
                score=0.0,
                metadata=row[1],
                vector=parse_vector(row[2]) if include_vector else None,
            )
            for row in rows
        ]

    async def _search(
        self,
        conn: Connection,
        index: IndexRow,
        query_text: str,
        flt: SqlFilter | None,
        request: QueryRequest,
        *,
        ann: bool,
    ) -> list[QueryResult]:
        operator = _OPERATOR[index.metric]
        distance = f"(embedding {operator} %(m_query)s::vector)"
        where = f"WHERE {flt.sql}" if flt else ""
        columns = "id, metadata, " + distance + (", embedding::text" if request.include_vector else "")
        params: dict[str, Any] = {
            **(flt.params if flt else {}),
            "m_query": query_text,
            "m_limit": request.top_k,
        }
        if ann:
            await tune(conn, index, request.top_k, request.options, iterative=self._pgvector >= (0, 8))
            if index.dimension > VECTOR_INDEX_MAX:
                half = f"halfvec({index.dimension})"
                order = f"(embedding::{half} {operator} %(m_query)s::{half})"
            else:
                order = distance
        elif index.metric == "cosine":
            # Not the indexed expression (an exact scan); a zero vector (NaN distance) scores 0.
            order = f"COALESCE(NULLIF({distance}, 'NaN'::float8), 1.0)"
        else:
            order = f"({distance} + 0.0)"
        sql = (
            f"SELECT {columns} FROM {self._table(index.name)} {where} ORDER BY {order}, id LIMIT %(m_limit)s"
        )
        rows = await (await conn.execute(sql, params)).fetchall()
        return [
            QueryResult(
                id=unescape_nul(row[0]),
                score=_score(index.metric, row[2]),
                metadata=row[1],
                vector=parse_vector(row[3]) if request.include_vector else None,
            )
            for row in rows
        ]

    def _filter(self, native_filter: Any) -> SqlFilter:
        return self._native(native_filter, SqlFilter)
