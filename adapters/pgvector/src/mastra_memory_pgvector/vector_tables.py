"""``PgVector`` with ``layout="mastra"``: vectors in ``@mastra/pg``'s own per-index tables (spec §4.7).

Layout. What ``@mastra/pg`` 1.27.1's ``PgVector.createIndex`` creates (read from the catalog of a schema it
wrote; tests/interop/test_pg_vector.py compares them): one table per index, named as the index,
``(id SERIAL PRIMARY KEY, vector_id TEXT NOT NULL, embedding vector(<dimension>), metadata JSONB DEFAULT
'{}'::jsonb, namespace VARCHAR(255) NOT NULL DEFAULT 'default')``, the unique index
``<index>_namespace_vector_id_idx`` on ``(namespace, vector_id)``, the ANN index ``<index>_vector_idx``
(Mastra's default ``ivfflat`` with ``lists = max(100, min(4000, 2·√rows))``, or ``hnsw`` with its defaults
``m = 8, ef_construction = 32``) and one btree ``<index>_md_<xxh32 of the key>_idx`` on
``(metadata->>'<key>')`` per metadata index. There is no registry: an index is a table with a text
``vector_id``, a vector ``embedding`` and a jsonb ``metadata`` (Mastra's ``listIndexes``); its dimension is
the column's type modifier and its metric the operator class of ``<index>_vector_idx`` (cosine without one, as
Mastra reads it). Records are ``vector_id`` (Mastra's random uuids or this project's ``<message_id>#n``,
both read) in Mastra's ``default`` namespace; ``id`` is never written.

Search. Reads go through a subquery that renames ``vector_id`` to ``id`` (code-point order) and keeps the
``default`` namespace, so :class:`~.store.PgVector`'s query code runs unchanged. An ``hnsw`` index is
searched as the store's own (iterative scan, exact fallback); an ``ivfflat`` index searches exactly: Mastra
trains it on the table as it is at ``createIndex`` (usually empty), where it would miss, and Mastra's own
filtered query -- every recall's -- scans exactly too.

Nothing else is changed: a table that exists is never altered (no ANN rebuild, no metadata index added), so
a schema Mastra made keeps its DDL; a table of this project's own layout is refused with
:class:`StorageLayoutError` before any write, as :mod:`.store` refuses a Mastra table in its own layout.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from typing import Any, Final

from mastra_memory.capabilities import Metric
from mastra_memory.errors import CapabilityError, ValidationError
from mastra_memory.storage.layouts import Layout, StorageLayoutError
from mastra_memory.vector.records import IndexConfig

from .ann import VECTOR_INDEX_MAX, IndexRow
from .connection import Connection, quote_ident
from .lexical import drop_lexical_rows
from .store import _STAGE, PgVector
from .tables import pgvector_wrong_layout

__all__ = ["MastraTablesPgVector", "mastra_ddl", "vector_table_layout", "xxh32"]

logger = logging.getLogger("mastra_memory_pgvector.vector_tables")

NAMESPACE: Final = "default"  # Mastra's DEFAULT_NAMESPACE: every record of an index written without one
_HNSW_M: Final = 8  # Mastra's defaults for an hnsw index without parameters
_HNSW_EF_CONSTRUCTION: Final = 32
_OPCLASS: Final[dict[Metric, str]] = {
    "cosine": "vector_cosine_ops",
    "euclidean": "vector_l2_ops",
    "dotproduct": "vector_ip_ops",
}
_PARAM: Final = re.compile(r"(m|ef_construction|lists)\s*=\s*'?(\d+)'?")
DESCRIPTIONS: Final[dict[Layout, str]] = {
    "mastra-memory": "mastra-memory's own pgvector index table (column id, registered in "
    "mastra_vector_indexes)",
    "mastra": "a @mastra/pg vector index table (columns vector_id, namespace)",
}

# --- xxHash32 (seed 0): Mastra names a metadata index after the hash of its key -------------------------

_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_MASK: Final = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _MASK, 13) * _P1) & _MASK


def xxh32(data: bytes, seed: int = 0) -> int:
    """xxHash32 of ``data`` (what ``xxhash-wasm``'s ``h32`` gives Mastra for a metadata key's UTF-8)."""
    n, i = len(data), 0
    if n >= 16:
        v = [(seed + _P1 + _P2) & _MASK, (seed + _P2) & _MASK, seed & _MASK, (seed - _P1) & _MASK]
        while i + 16 <= n:
            for lane in range(4):
                v[lane] = _round(v[lane], int.from_bytes(data[i : i + 4], "little"))
                i += 4
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _MASK
    else:
        h = (seed + _P5) & _MASK
    h = (h + n) & _MASK
    while i + 4 <= n:
        h = (_rotl((h + int.from_bytes(data[i : i + 4], "little") * _P3) & _MASK, 17) * _P4) & _MASK
        i += 4
    while i < n:
        h = (_rotl((h + data[i] * _P5) & _MASK, 11) * _P1) & _MASK
        i += 1
    h = ((h ^ (h >> 15)) * _P2) & _MASK
    h = ((h ^ (h >> 13)) * _P3) & _MASK
    return h ^ (h >> 16)


# --- DDL ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MastraAnn:
    """The ANN index ``createIndex`` builds: ``kind`` hnsw, ivfflat or flat, with its parameters."""

    kind: str
    m: int = _HNSW_M
    ef_construction: int = _HNSW_EF_CONSTRUCTION
    lists: int | None = None


def mastra_ann(dimension: int, config: IndexConfig) -> MastraAnn:
    """Mastra's choice for ``config``: ``ivfflat`` when no type is given; no ANN index above the 2,000
    dimensions pgvector indexes over ``vector`` (Mastra's own index would fail there)."""
    kind = config.type or "ivfflat"
    if kind != "flat" and dimension > VECTOR_INDEX_MAX:
        logger.warning(
            "%d dimensions exceed pgvector's vector index limit; the index searches exactly", dimension
        )
        kind = "flat"
    return MastraAnn(
        kind=kind,
        m=config.m or _HNSW_M,
        ef_construction=config.ef_construction or _HNSW_EF_CONSTRUCTION,
        lists=config.lists,
    )


def mastra_ddl(
    schema: str, name: str, dimension: int, metric: Metric, ann: MastraAnn, rows: int, keys: list[str]
) -> list[str]:
    """The statements ``@mastra/pg``'s ``createIndex`` runs for a new index (its spelling, so the catalog
    holds the same definitions whichever side created the index)."""
    table = f"{quote_ident(schema)}.{quote_ident(name)}"
    statements = [
        f"CREATE TABLE IF NOT EXISTS {table} (id SERIAL PRIMARY KEY, vector_id TEXT NOT NULL, "
        f"embedding vector({int(dimension)}), metadata JSONB DEFAULT '{{}}'::jsonb, "
        f"namespace VARCHAR(255) NOT NULL DEFAULT '{NAMESPACE}')",
        f"CREATE UNIQUE INDEX IF NOT EXISTS {quote_ident(namespace_index_name(name))} "
        f"ON {table} (namespace, vector_id)",
    ]
    ann_name = quote_ident(f"{name}_vector_idx")
    if ann.kind == "hnsw":
        statements.append(
            f"CREATE INDEX IF NOT EXISTS {ann_name} ON {table} USING hnsw (embedding {_OPCLASS[metric]}) "
            f"WITH (m = {int(ann.m)}, ef_construction = {int(ann.ef_construction)})"
        )
    elif ann.kind == "ivfflat":
        lists = ann.lists or max(100, min(4000, int((rows**0.5) * 2)))
        statements.append(
            f"CREATE INDEX IF NOT EXISTS {ann_name} ON {table} USING ivfflat (embedding {_OPCLASS[metric]}) "
            f"WITH (lists = {int(lists)})"
        )
    for key in keys:
        digest = format(xxh32(key.encode()), "x")
        md = quote_ident(f"{name[: 55 - len(digest)]}_md_{digest}_idx")
        escaped = key.replace("'", "''")
        statements.append(f"CREATE INDEX IF NOT EXISTS {md} ON {table} ((metadata->>'{escaped}'))")
    return statements


def namespace_index_name(name: str) -> str:
    """Mastra's name of the unique ``(namespace, vector_id)`` index (a hashed form above 63 characters)."""
    full = f"{name}_namespace_vector_id_idx"
    if len(full) <= 63:
        return full
    suffix = f"_ns_{hashlib.sha256(name.encode()).hexdigest()[:32]}_idx"
    return name[: 63 - len(suffix)] + suffix


# --- the catalog ----------------------------------------------------------------------------------------

_COLUMNS: Final = (
    "SELECT a.attname, t.typname, a.atttypmod FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
    "WHERE a.attrelid = to_regclass(%s) AND a.attnum > 0 AND NOT a.attisdropped"
)
_ANN: Final = (
    "SELECT am.amname, pg_get_indexdef(i.indexrelid), opc.opcname FROM pg_index i "
    "JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam "
    "JOIN pg_opclass opc ON opc.oid = i.indclass[0] WHERE c.relname = %s AND i.indrelid = to_regclass(%s)"
)


async def vector_table_layout(conn: Connection, table: str) -> tuple[Layout | None, dict[str, Any]]:
    """Which layout the index table ``table`` (quoted, schema-qualified) is in, and its columns
    (name → (type, typmod)); ``(None, {})`` when there is no such table."""
    rows = await (await conn.execute(_COLUMNS, (table,))).fetchall()
    columns = {str(r[0]): (str(r[1]), int(r[2])) for r in rows}
    if not columns:
        return None, {}
    if "vector_id" in columns:
        return "mastra", columns
    if {"id", "embedding"} <= columns.keys():
        return "mastra-memory", columns
    return None, columns


def wrong_index_layout(
    schema: str, name: str, where: str, found: Layout, expected: Layout
) -> StorageLayoutError:
    """The guard's error for index ``name`` whose table is of the ``found`` layout."""
    return pgvector_wrong_layout(
        f"index table {name!r} in schema {schema!r} at {where}",
        found,
        expected,
        DESCRIPTIONS,
        "convert it by re-indexing the messages into a store of the wanted layout "
        "(`mastra-memory migrate` moves the storage; `Memory.reindex` rebuilds the vectors)",
        schema=schema,
        index=name,
        where=where,
    )


_MASTRA_TABLES: Final = (
    "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE n.nspname = %(schema)s AND c.relkind IN ('r', 'p') "
    "AND EXISTS (SELECT 1 FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
    "WHERE a.attrelid = c.oid AND a.attname = 'vector_id' AND t.typname = 'text') "
    "AND EXISTS (SELECT 1 FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
    "WHERE a.attrelid = c.oid AND a.attname = 'embedding' AND t.typname = 'vector') "
    "AND EXISTS (SELECT 1 FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
    "WHERE a.attrelid = c.oid AND a.attname = 'metadata' AND t.typname = 'jsonb') "
    "ORDER BY c.relname"
)


async def refuse_mastra_schema(conn: Connection, schema: str, where: str) -> None:
    """The own layout's guard, before it creates its registry: a schema without the registry that holds
    @mastra/pg index tables is Mastra's (StorageLayoutError); read-only."""
    registry = await (
        await conn.execute("SELECT to_regclass(%s)", (f"{quote_ident(schema)}.mastra_vector_indexes",))
    ).fetchone()
    if registry is not None and registry[0] is not None:
        return
    found = await (await conn.execute(_MASTRA_TABLES + " LIMIT 1", {"schema": schema})).fetchone()
    if found is not None:
        raise wrong_index_layout(schema, str(found[0]), where, "mastra", "mastra-memory")


def _metric(opclass: str) -> Metric:
    if "l2" in opclass:
        return "euclidean"
    if "ip" in opclass:
        return "dotproduct"
    return "cosine"


class MastraTablesPgVector(PgVector):
    """:class:`PgVector` on ``@mastra/pg``'s per-index tables; ``PgVector(layout="mastra")`` is one."""

    _ID_COLUMN = "vector_id"

    # --- plumbing ----------------------------------------------------------------------------------

    def _table(self, name: str) -> str:
        """What the shared read code selects from: the index's ``default`` namespace, ``vector_id`` as
        ``id`` in code-point order (the planner flattens the subquery, so the ANN index still serves)."""
        return (
            f'(SELECT vector_id COLLATE "C" AS id, embedding, metadata FROM {self._real(name)} '
            f"WHERE namespace = '{NAMESPACE}') AS m_rows"
        )

    def _scoped(self, where: str) -> str:
        """Writes touch only the index's ``default`` namespace."""
        return f"namespace = '{NAMESPACE}' AND ({where})"

    def _insert_from_stage(self, table: str) -> str:
        """As the own layout's (store.py), onto Mastra's unique ``(namespace, vector_id)``."""
        return (
            f"INSERT INTO {table} (vector_id, embedding, metadata, namespace) "
            f"SELECT id, embedding, metadata, '{NAMESPACE}' FROM {_STAGE} "
            "WHERE n >= %s AND n < %s ORDER BY n "
            "ON CONFLICT (namespace, vector_id) DO UPDATE SET embedding = EXCLUDED.embedding, "
            "metadata = EXCLUDED.metadata"
        )

    async def _train_ivf(self, conn: Connection, index: IndexRow) -> None:
        """Never: a Mastra table's ivfflat index is searched exactly and never rebuilt (module docstring)."""

    async def _catalog(self, conn: Connection, operation: str, name: str) -> IndexRow | None:
        """The index as the catalog describes it, None when there is no table; a table of this project's
        own layout is refused (StorageLayoutError), one that is no index is not found."""
        table = self._real(name)
        layout, columns = await vector_table_layout(conn, table)
        if layout == "mastra-memory":
            raise wrong_index_layout(self.schema, name, self._db.where, "mastra-memory", "mastra")
        if layout is None:
            if columns:
                raise self._not_found(operation, name)
            return None
        embedding = columns.get("embedding")
        if embedding is None or embedding[0] != "vector" or columns.get("metadata", ("",))[0] != "jsonb":
            raise self._not_found(operation, name)
        ann = await (await conn.execute(_ANN, (f"{name}_vector_idx", table))).fetchone()
        kind, config = "flat", {}
        metric: Metric = "cosine"
        if ann is not None:
            kind, metric = str(ann[0]), _metric(str(ann[2]))
            config = {k: int(v) for k, v in _PARAM.findall(str(ann[1]))}
        return IndexRow.of(
            name,
            embedding[1],
            metric,
            {"type": kind, **config},
            built=kind == "hnsw",  # ivfflat: exact (module docstring)
        )

    async def _index(self, conn: Connection, operation: str, name: str, *, lock: bool = False) -> IndexRow:
        row = await self._catalog(conn, operation, name)
        if row is None:
            raise self._not_found(operation, name)
        return row

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
        ann = mastra_ann(dimension, config)
        if ann.kind == "flat" and metric != "cosine":
            # Mastra keeps an index's metric only in its ANN index's operator class.
            raise self._error(
                CapabilityError, "CREATE_INDEX", "INVALID_ARGS",
                f"an index without an ANN index is cosine in @mastra/pg's layout; metric {metric!r} "
                "needs index type 'hnsw' or 'ivfflat'",
            )  # fmt: skip
        if ann.kind not in ("flat", "hnsw", "ivfflat"):
            raise self._error(
                ValidationError, "CREATE_INDEX", "INVALID_ARGS", f"unknown index type {ann.kind!r}"
            )

        async def create(conn: Connection) -> None:
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"{self.schema}.{name}",))
            existing = await self._catalog(conn, "CREATE_INDEX", name)
            if existing is not None:
                # Never altered: the table may be a Mastra app's (module docstring).
                self._keep_existing(name, existing.dimension, existing.metric, dimension, metric)
                return
            for statement in mastra_ddl(self.schema, name, dimension, metric, ann, 0, metadata_indexes):
                await conn.execute(statement)

        await self._run("CREATE_INDEX", create)

    async def _list_indexes(self) -> list[str]:
        async def names(conn: Connection) -> list[str]:
            rows = await (await conn.execute(_MASTRA_TABLES, {"schema": self.schema})).fetchall()
            return [str(r[0]) for r in rows]

        result: list[str] = await self._run("LIST_INDEXES", names)
        return result

    async def _delete_index(self, name: str) -> None:
        async def delete(conn: Connection) -> None:
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"{self.schema}.{name}",))
            if await self._catalog(conn, "DELETE_INDEX", name) is not None:
                await conn.execute(f"DROP TABLE IF EXISTS {self._real(name)}")
            await drop_lexical_rows(conn, self.schema, name)  # our texts beside it (lexical.py)

        await self._run("DELETE_INDEX", delete)
