"""``PgVector``: the ``MastraVector`` adapter on PostgreSQL + pgvector.

Layout. One table per index, named after the index in the configured schema: ``id text COLLATE "C"``
(primary key; code-point order), ``embedding vector(<dimension>)`` (float32) and ``metadata jsonb``. A
registry table ``mastra_vector_indexes`` records each index's dimension, metric and ANN configuration, so
``list_indexes`` shows only indexes (never unrelated tables) and every operation reads the metric it
needs in the same transaction as its data.

ANN indexes. ``hnsw`` (default; ``m``, ``ef_construction``; ``ef`` at query time as ``hnsw.ef_search``)
and ``ivfflat`` (``lists``; ``probes`` at query time) use the metric's operator class
(``vector_cosine_ops``, ``vector_l2_ops``, ``vector_ip_ops``). Above 2,000 dimensions the index is built
over ``embedding::halfvec(n)`` (up to 4,000 dimensions) while the column keeps float32, so stored vectors
and scores stay exact; above that an index searches exactly. An ``ivfflat`` index is trained only once
the table holds at least ``lists`` rows (an IVF index trained on an empty table has poor recall); until
then queries are exact. ``flat`` builds no ANN index.

Queries never return fewer than ``min(top_k, matching)`` records: an ANN query runs with pgvector's
iterative index scans (``hnsw.iterative_scan = strict_order``, ``ivfflat.iterative_scan``), and when it
still returns fewer than ``top_k`` rows the same query runs again as an exact scan. Scores are computed
from pgvector's distances per docs/spec.md §3.4: cosine ``1 - d``, euclidean ``1 / (1 + d)``, dot product
``-d``.

Metadata indexes. ``create_index(metadata_indexes=["thread_id", ...])`` builds a GIN index
(``jsonb_path_ops``) on ``metadata -> 'thread_id'`` for every key made of identifier characters; the
translator writes equality and ``$in`` on such keys as containment over that same expression.

Writes. An upsert is one transaction: the rows travel in one binary ``COPY`` into a per-session staging
table, then move with ``INSERT ... SELECT ... ON CONFLICT (id) DO UPDATE`` statements of at most 16,383 rows
each, in id order so concurrent upserts lock rows in the same order. Floats in metadata are written as their
exact decimal value (see :func:`.translate.json_text`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import psycopg
from mastra_memory.capabilities import Metric
from mastra_memory.errors import CapabilityError, MastraMemoryError, ValidationError, VectorStoreError
from mastra_memory.vector import IndexConfig, IndexStats, MastraVector, QueryResult, default_ef

from .capabilities import MAX_ROWS_PER_STATEMENT, PGVECTOR_CAPABILITIES
from .connection import Connection, PgDatabase, is_transient, quote_ident
from .settings import MAX_IDENTIFIER_BYTES, PgVectorSettings
from .translate import PgFilterTranslator, SqlFilter, json_text, unstorable_text

__all__ = ["PGVECTOR_CAPABILITIES", "PgVector"]

logger = logging.getLogger("mastra_memory_pgvector.store")

REGISTRY: Final = "mastra_vector_indexes"
#: ``vector`` columns hold up to 16,000 dimensions, HNSW/IVF indexes over ``vector`` up to 2,000 and over
#: ``halfvec`` up to 4,000.
VECTOR_INDEX_MAX: Final = 2_000
HALFVEC_INDEX_MAX: Final = 4_000
_NATIVE_NAME: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FLOAT32: Final = np.dtype("<f4")
_OPCLASS: Final[Mapping[Metric, str]] = {
    "cosine": "cosine_ops",
    "euclidean": "l2_ops",
    "dotproduct": "ip_ops",
}
_OPERATOR: Final[Mapping[Metric, str]] = {"cosine": "<=>", "euclidean": "<->", "dotproduct": "<#>"}
_QUERY_OPTIONS: Final = frozenset({"ef", "probes", "exact"})
# The per-session staging table of upserts, and the size of the pieces a COPY is sent in.
_STAGE: Final = "pg_temp.mastra_upsert_stage"
_COPY_CHUNK: Final = 4 << 20
_DEFAULT_M: Final = 16
_DEFAULT_EF_CONSTRUCTION: Final = 64


def derived_name(base: str, suffix: str) -> str:
    """``<base>_<suffix>`` when it fits in 63 bytes, else a prefix of it plus an 8-hex-digit hash."""
    name = f"{base}_{suffix}"
    if len(name.encode()) <= MAX_IDENTIFIER_BYTES:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    tail = f"_{digest}"
    prefix = name.encode()[: MAX_IDENTIFIER_BYTES - len(tail)].decode("utf-8", "ignore")
    return prefix + tail


@dataclass(frozen=True, slots=True)
class _Index:
    """A registry row: what an index is and how it searches."""

    name: str
    dimension: int
    metric: Metric
    kind: str  # hnsw | ivfflat | flat
    m: int
    ef_construction: int
    lists: int | None
    probes: int | None
    ef: int | None
    built: bool  # whether the ANN index exists (ivfflat waits for rows)


def _vector_text(vector: npt.NDArray[np.floating]) -> str:
    """pgvector's text form; float32 values written with enough digits to read back exactly."""
    return "[" + ",".join(map(repr, vector.astype(_FLOAT32).tolist())) + "]"


def _copy_payload(ids: list[str], vectors: npt.NDArray[np.float32], metadata: list[str]) -> bytes:
    """Rows ``(id text, embedding vector, metadata jsonb)`` in PostgreSQL's binary COPY format.

    ``vector`` is pgvector's binary form (int16 dimension, int16 unused, big-endian float4 values) and
    ``jsonb`` is version byte 1 followed by the JSON text.
    """
    dimension = vectors.shape[1]
    vector_head = struct.pack(">iHH", 4 + 4 * dimension, dimension, 0)
    big_endian = np.ascontiguousarray(vectors, dtype=">f4")
    parts = [b"PGCOPY\n\xff\r\n\x00", struct.pack(">ii", 0, 0)]
    for i, (rid, meta) in enumerate(zip(ids, metadata, strict=True)):
        id_bytes = rid.encode()
        meta_bytes = b"\x01" + meta.encode()
        parts += (
            struct.pack(">hi", 3, len(id_bytes)),
            id_bytes,
            vector_head,
            big_endian[i].tobytes(),
            struct.pack(">i", len(meta_bytes)),
            meta_bytes,
        )
    parts.append(struct.pack(">h", -1))
    return b"".join(parts)


def _parse_vector(text: str) -> list[float]:
    body = text.strip()[1:-1]
    if not body:
        return []
    return [float(x) for x in np.asarray(body.split(","), dtype=_FLOAT32)]


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

    def __init__(self, settings: PgVectorSettings | str | None = None) -> None:
        super().__init__()
        if isinstance(settings, str):
            settings = PgVectorSettings(url=settings)
        self.settings = settings if settings is not None else PgVectorSettings()
        self.schema = self.settings.schema_name
        self._db = PgDatabase(self.settings, self._setup)
        self._pgvector: tuple[int, ...] = (0,)

    # --- plumbing ----------------------------------------------------------------------------------

    def _table(self, name: str) -> str:
        if not _NATIVE_NAME.fullmatch(name):  # the base validated it; never build SQL from anything else
            raise ValidationError(f"invalid index name {name!r}")
        return f"{quote_ident(self.schema)}.{quote_ident(name)}"

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

    async def _index(self, conn: Connection, operation: str, name: str, *, lock: bool = False) -> _Index:
        row = await (
            await conn.execute(
                f"SELECT dimension, metric, config, built FROM {self._registry} WHERE name = %s"
                + (" FOR SHARE" if lock else ""),
                (name,),
            )
        ).fetchone()
        if row is None:
            raise self._not_found(operation, name)
        config: dict[str, Any] = row[2]
        return _Index(
            name=name,
            dimension=int(row[0]),
            metric=row[1],
            kind=str(config.get("type", "flat")),
            m=int(config.get("m") or _DEFAULT_M),
            ef_construction=int(config.get("ef_construction") or _DEFAULT_EF_CONSTRUCTION),
            lists=config.get("lists"),
            probes=config.get("probes"),
            ef=config.get("ef"),
            built=bool(row[3]),
        )

    async def close(self) -> None:
        """Close the connection pool."""
        await self._db.close()

    # --- naming ------------------------------------------------------------------------------------

    def to_native_index_name(self, name: str) -> str:
        """Index names are SQL identifiers of at most 63 bytes: portable names are used as they are."""
        return name

    # --- hooks: indexes ---------------------------------------------------------------------------

    def _check_config(self, dimension: int, config: IndexConfig) -> dict[str, Any]:
        op = "CREATE_INDEX"
        kind = config.type or "hnsw"
        if dimension > HALFVEC_INDEX_MAX and kind != "flat":
            if config.type is not None:
                raise self._error(
                    CapabilityError, op, "INVALID_ARGS",
                    f"pgvector builds {kind} indexes up to {HALFVEC_INDEX_MAX} dimensions (as halfvec); "
                    f"use index type 'flat' (exact search) for {dimension} dimensions",
                )  # fmt: skip
            logger.warning(
                "%d dimensions exceed pgvector's ANN index limit (%d); the index searches exactly",
                dimension, HALFVEC_INDEX_MAX,
            )  # fmt: skip
            kind = "flat"
        m = config.m or _DEFAULT_M
        ef_construction = config.ef_construction or max(_DEFAULT_EF_CONSTRUCTION, 2 * m)
        problems = []
        if not 2 <= m <= 100:
            problems.append(f"m must be between 2 and 100, got {m}")
        if not 4 <= ef_construction <= 1000:
            problems.append(f"ef_construction must be between 4 and 1000, got {ef_construction}")
        elif ef_construction < 2 * m:
            problems.append(f"ef_construction ({ef_construction}) must be at least 2 * m ({2 * m})")
        if config.lists is not None and not 1 <= config.lists <= 32_768:
            problems.append(f"lists must be between 1 and 32768, got {config.lists}")
        if config.ef is not None and not 1 <= config.ef <= 1000:
            problems.append(f"ef must be between 1 and 1000, got {config.ef}")
        if problems:
            raise self._error(
                ValidationError, op, "INVALID_ARGS", "invalid index_config: " + "; ".join(problems)
            )
        return {
            "type": kind,
            "m": m,
            "ef_construction": ef_construction,
            "lists": config.lists,
            "probes": config.probes,
            "ef": config.ef,
        }

    def _ann_target(self, index: _Index) -> tuple[str, str]:
        """The indexed expression and the operator class of an index (halfvec above 2,000 dimensions)."""
        if index.dimension > VECTOR_INDEX_MAX:
            return f"(embedding::halfvec({index.dimension}))", f"halfvec_{_OPCLASS[index.metric]}"
        return "embedding", f"vector_{_OPCLASS[index.metric]}"

    async def _build_ann(self, conn: Connection, index: _Index, rows: int) -> bool:
        """Create the ANN index of ``index`` (ivfflat only once the table has ``lists`` rows)."""
        if index.kind == "flat":
            return False
        expression, opclass = self._ann_target(index)
        table = self._table(index.name)
        ann = quote_ident(derived_name(index.name, "vector_idx"))
        if index.kind == "hnsw":
            options = f"m = {int(index.m)}, ef_construction = {int(index.ef_construction)}"
            await conn.execute(
                f"CREATE INDEX {ann} ON {table} USING hnsw ({expression} {opclass}) WITH ({options})"
            )
            return True
        lists = index.lists or max(100, min(4000, math.floor(2 * math.sqrt(rows))))
        if rows < lists:
            return False
        await conn.execute(
            f"CREATE INDEX {ann} ON {table} USING ivfflat ({expression} {opclass}) WITH (lists = {lists})"
        )
        return True

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
        if options:
            raise self._error(
                ValidationError, op, "INVALID_ARGS",
                f"unknown create_index options {sorted(options)} for pgvector (it takes none)",
            )  # fmt: skip
        wanted = self._check_config(dimension, config)
        table = self._table(name)

        async def create(conn: Connection) -> None:
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"{self.schema}.{name}",))
            row = await (
                await conn.execute(
                    f"SELECT dimension, metric, config FROM {self._registry} WHERE name = %s", (name,)
                )
            ).fetchone()
            if row is not None:
                self._check_dimension(op, name, int(row[0]), dimension)
                if row[1] != metric:
                    logger.warning(
                        "index %r already exists with metric %r; keeping it (asked for %r)",
                        name,
                        row[1],
                        metric,
                    )
                await self._maybe_rebuild(conn, name, row[2], config, wanted)
            else:
                exists = await (await conn.execute("SELECT to_regclass(%s)", (table,))).fetchone()
                if exists is not None and exists[0] is not None:
                    raise self._error(
                        VectorStoreError, op, "NAME_TAKEN",
                        f"a table named {name!r} already exists in schema {self.schema!r} and is not a "
                        "mastra-memory index; choose another index name or schema",
                    )  # fmt: skip
                pkey = quote_ident(derived_name(name, "pkey"))
                await conn.execute(
                    f'CREATE TABLE {table} (id text COLLATE "C" NOT NULL, embedding '
                    f"vector({int(dimension)}) NOT NULL, "
                    f"metadata jsonb NOT NULL DEFAULT '{{}}'::jsonb, CONSTRAINT {pkey} PRIMARY KEY (id))"
                )
                index = _Index(
                    name=name,
                    dimension=dimension,
                    metric=metric,
                    kind=wanted["type"],
                    m=wanted["m"],
                    ef_construction=wanted["ef_construction"],
                    lists=wanted["lists"],
                    probes=wanted["probes"],
                    ef=wanted["ef"],
                    built=False,
                )
                built = await self._build_ann(conn, index, 0)
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

        await self._run(op, create)

    async def _maybe_rebuild(
        self, conn: Connection, name: str, stored: dict[str, Any], config: IndexConfig, wanted: dict[str, Any]
    ) -> None:
        """Rebuild the ANN index when the caller asked for another type or build parameters."""
        build = ("type", "m", "ef_construction", "lists")
        asked = {k: wanted[k] for k in build if getattr(config, k) is not None}
        changed = {k: v for k, v in asked.items() if stored.get(k) != v}
        query_time = {k: wanted[k] for k in ("probes", "ef") if getattr(config, k) is not None}
        if not changed and all(stored.get(k) == v for k, v in query_time.items()):
            return
        merged = {**stored, **asked, **query_time}
        if changed:
            logger.info(
                "index %r: rebuilding the ANN index (%s)",
                name,
                ", ".join(f"{k}={v}" for k, v in changed.items()),
            )
            await conn.execute(
                "DROP INDEX IF EXISTS "
                f"{quote_ident(self.schema)}.{quote_ident(derived_name(name, 'vector_idx'))}"
            )
            count = await (await conn.execute(f"SELECT count(*) FROM {self._table(name)}")).fetchone()
            index = await self._index(conn, "CREATE_INDEX", name)
            index = _Index(
                name=name,
                dimension=index.dimension,
                metric=index.metric,
                kind=merged["type"],
                m=merged["m"],
                ef_construction=merged["ef_construction"],
                lists=merged.get("lists"),
                probes=merged.get("probes"),
                ef=merged.get("ef"),
                built=False,
            )
            built = await self._build_ann(conn, index, int(count[0]) if count else 0)
        else:
            built_row = await (
                await conn.execute(f"SELECT built FROM {self._registry} WHERE name = %s", (name,))
            ).fetchone()
            built = bool(built_row[0]) if built_row else False
        await conn.execute(
            f"UPDATE {self._registry} SET config = %s::jsonb, built = %s WHERE name = %s",
            (json_text(merged), built, name),
        )

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

        await self._run("DELETE_INDEX", delete)

    # --- validation specific to PostgreSQL ----------------------------------------------------------

    def _float32(self, operation: str, vectors: npt.NDArray[np.float64]) -> npt.NDArray[np.float32]:
        with np.errstate(over="ignore"):  # an overflow becomes inf, reported just below
            as_float32 = vectors.astype(_FLOAT32)
        bad = np.argwhere(~np.isfinite(as_float32))
        if bad.size:
            position = [int(x) for x in bad[0]]
            i, j = (position[0], position[1]) if len(position) == 2 else (0, position[0])
            value = vectors[i, j] if vectors.ndim == 2 else vectors[j]
            raise self._error(
                ValidationError, operation, "INVALID_VECTOR",
                f"vector [{i}][{j}] = {value!r} is outside the float32 range pgvector stores",
            )  # fmt: skip
        return as_float32

    def _metadata_text(self, operation: str, metadata: Mapping[str, Any], where: str) -> str:
        # Fast path (C encoder) for the common case: no floats, nothing PostgreSQL cannot hold.
        try:
            fast = json.dumps(metadata, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
            fast.encode("utf-8")  # lone surrogates raise here
        except (UnicodeEncodeError, ValueError, TypeError):
            fast = None
        if fast is not None and "\\u0000" not in fast and not _has_float(metadata):
            return fast
        problem = _unstorable(metadata, where)
        if problem:
            raise self._error(ValidationError, operation, "INVALID_METADATA", problem)
        return json_text(metadata)

    # --- hooks: writes ----------------------------------------------------------------------------

    async def _upsert(
        self, name: str, ids: list[str], vectors: npt.NDArray[np.float64], metadata: list[dict[str, Any]]
    ) -> None:
        op = "UPSERT"
        as_float32 = self._float32(op, vectors)
        for i, rid in enumerate(ids):
            if unstorable_text(rid):
                raise self._error(
                    ValidationError, op, "INVALID_ID",
                    "ids must be non-empty strings without NUL characters or unpaired surrogates "
                    f"(ids[{i}] = {rid!r})",
                )  # fmt: skip
        texts = [self._metadata_text(op, meta, f"metadata[{i}]") for i, meta in enumerate(metadata)]
        order = sorted(range(len(ids)), key=ids.__getitem__)  # one lock order for concurrent upserts
        payload = _copy_payload([ids[i] for i in order], as_float32[order], [texts[i] for i in order])
        table = self._table(name)
        rows = len(ids)

        async def upsert(conn: Connection) -> None:
            index = await self._index(conn, op, name, lock=True)
            self._check_dimension(op, name, index.dimension, vectors.shape[1])
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
                await conn.execute(
                    f"INSERT INTO {table} (id, embedding, metadata) "
                    f"SELECT id, embedding, metadata FROM {_STAGE} "
                    "WHERE n >= %s AND n < %s ORDER BY n "
                    "ON CONFLICT (id) DO UPDATE SET embedding = EXCLUDED.embedding, "
                    "metadata = EXCLUDED.metadata",
                    (first, first + MAX_ROWS_PER_STATEMENT),
                )
            if index.kind == "ivfflat" and not index.built:
                await self._train_ivf(conn, index)

        await self._run(op, upsert)

    async def _train_ivf(self, conn: Connection, index: _Index) -> None:
        count = await (await conn.execute(f"SELECT count(*) FROM {self._table(index.name)}")).fetchone()
        if await self._build_ann(conn, index, int(count[0]) if count else 0):
            await conn.execute(f"UPDATE {self._registry} SET built = true WHERE name = %s", (index.name,))

    async def _update_by_id(
        self, name: str, id: str, vector: npt.NDArray[np.float64] | None, metadata: dict[str, Any] | None
    ) -> None:
        if unstorable_text(id):
            return  # such an id cannot exist: a missing id is a no-op
        await self._update(name, "id = %(m_id)s", {"m_id": id}, vector, metadata)

    async def _update_by_filter(
        self,
        name: str,
        native_filter: Any,
        vector: npt.NDArray[np.float64] | None,
        metadata: dict[str, Any] | None,
    ) -> None:
        flt = self._filter(native_filter)
        await self._update(name, flt.sql, dict(flt.params), vector, metadata)

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
            assignments.append("embedding = %(m_vector)s::vector")
            values["m_vector"] = _vector_text(self._float32(op, vector))
        if metadata is not None:
            assignments.append("metadata = %(m_metadata)s::jsonb")
            values["m_metadata"] = self._metadata_text(op, metadata, "metadata")
        table = self._table(name)

        async def update(conn: Connection) -> None:
            index = await self._index(conn, op, name, lock=True)
            if vector is not None:
                self._check_dimension(op, name, index.dimension, vector.shape[0])
            await conn.execute(f"UPDATE {table} SET {', '.join(assignments)} WHERE {where}", values)

        await self._run(op, update)

    async def _delete_by_ids(self, name: str, ids: list[str]) -> None:
        op = "DELETE_VECTORS"
        wanted = [i for i in ids if not unstorable_text(i)]
        table = self._table(name)

        async def delete(conn: Connection) -> None:
            await self._index(conn, op, name, lock=True)
            if wanted:
                await conn.execute(f"DELETE FROM {table} WHERE id = ANY(%(ids)s::text[])", {"ids": wanted})

        await self._run(op, delete)

    async def _delete_by_filter(self, name: str, native_filter: Any) -> None:
        op = "DELETE_VECTORS"
        flt = self._filter(native_filter)
        table = self._table(name)

        async def delete(conn: Connection) -> None:
            await self._index(conn, op, name, lock=True)
            await conn.execute(f"DELETE FROM {table} WHERE {flt.sql}", dict(flt.params))

        await self._run(op, delete)

    # --- hooks: query -----------------------------------------------------------------------------

    async def _query(
        self,
        name: str,
        vector: npt.NDArray[np.float64] | None,
        top_k: int,
        native_filter: Any,
        include_vector: bool,
        options: dict[str, Any],
    ) -> list[QueryResult]:
        op = "QUERY"
        for key in ("ef", "probes"):
            value = options.get(key)
            limit = 1000 if key == "ef" else 32_768
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit
            ):
                raise self._error(
                    ValidationError,
                    op,
                    "INVALID_ARGS",
                    f"{key} must be an integer from 1 to {limit}, got {value!r}",
                )
        flt = self._filter(native_filter) if native_filter is not None else None
        query_text = None if vector is None else _vector_text(self._float32(op, vector))
        exact_only = bool(options.get("exact"))

        async def run(conn: Connection) -> list[QueryResult]:
            index = await self._index(conn, op, name)
            if query_text is None:
                return await self._list_records(conn, index, top_k, flt, include_vector)
            self._check_dimension(op, name, index.dimension, len(vector) if vector is not None else 0)
            if index.built and not exact_only:
                hits = await self._search(
                    conn, index, query_text, top_k, flt, include_vector, options, ann=True
                )
                if len(hits) >= top_k:
                    return hits
            return await self._search(conn, index, query_text, top_k, flt, include_vector, options, ann=False)

        results: list[QueryResult] = await self._run(op, run)
        return results

    async def _list_records(
        self, conn: Connection, index: _Index, top_k: int, flt: SqlFilter | None, include_vector: bool
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
                id=row[0],
                score=0.0,
                metadata=row[1],
                vector=_parse_vector(row[2]) if include_vector else None,
            )
            for row in rows
        ]

    async def _search(
        self,
        conn: Connection,
        index: _Index,
        query_text: str,
        top_k: int,
        flt: SqlFilter | None,
        include_vector: bool,
        options: dict[str, Any],
        *,
        ann: bool,
    ) -> list[QueryResult]:
        operator = _OPERATOR[index.metric]
        distance = f"(embedding {operator} %(m_query)s::vector)"
        where = f"WHERE {flt.sql}" if flt else ""
        columns = "id, metadata, " + distance + (", embedding::text" if include_vector else "")
        params: dict[str, Any] = {**(flt.params if flt else {}), "m_query": query_text, "m_limit": top_k}
        if ann:
            await self._tune(conn, index, top_k, options)
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
                id=row[0],
                score=_score(index.metric, row[2]),
                metadata=row[1],
                vector=_parse_vector(row[3]) if include_vector else None,
            )
            for row in rows
        ]

    async def _tune(self, conn: Connection, index: _Index, top_k: int, options: dict[str, Any]) -> None:
        """Search parameters of this transaction (one statement): ef_search or probes, and pgvector 0.8's
        iterative index scans, which keep scanning until a filtered query has its ``top_k`` rows."""
        settings: dict[str, str] = {}
        iterative = self._pgvector >= (0, 8)
        if index.kind == "hnsw":
            ef = options.get("ef") or index.ef or default_ef(top_k, index.m)
            settings["hnsw.ef_search"] = str(ef)
            if iterative:
                settings["hnsw.iterative_scan"] = "strict_order"
        elif index.kind == "ivfflat":
            probes = options.get("probes") or index.probes
            if probes:
                settings["ivfflat.probes"] = str(probes)
            if iterative:
                settings["ivfflat.iterative_scan"] = "relaxed_order"
        if settings:
            calls = ", ".join(f"set_config(%(k{i})s, %(v{i})s, true)" for i in range(len(settings)))
            params: dict[str, str] = {}
            for i, (name, value) in enumerate(settings.items()):
                params[f"k{i}"], params[f"v{i}"] = name, value
            await conn.execute(f"SELECT {calls}", params)

    def _filter(self, native_filter: Any) -> SqlFilter:
        if not isinstance(native_filter, SqlFilter):
            raise MastraMemoryError(
                f"pgvector expected a translated SqlFilter, got {type(native_filter).__name__}"
            )
        return native_filter


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, list):
        return any(_has_float(v) for v in value)
    if isinstance(value, Mapping):
        return any(_has_float(v) for v in value.values())
    return False


def _unstorable(value: Any, path: str) -> str | None:
    """Why PostgreSQL could not hold ``value`` exactly (None if it can); ``path`` names the key."""
    if isinstance(value, str):
        if unstorable_text(value):
            return f"{path}: strings containing U+0000 or unpaired surrogates cannot be stored in PostgreSQL"
        return None
    if isinstance(value, list):
        for i, item in enumerate(value):
            problem = _unstorable(item, f"{path}[{i}]")
            if problem:
                return problem
    if isinstance(value, Mapping):
        for key, item in value.items():
            child = f"{path}.{key}"
            problem = _unstorable(key, f"{child} (key)") or _unstorable(item, child)
            if problem:
                return problem
    return None
