"""pgvector's ANN indexes: their configuration, their DDL, rebuilds, and the search parameters of a query.

``hnsw`` (default; ``m``, ``ef_construction``; ``ef`` at query time as ``hnsw.ef_search``) and ``ivfflat``
(``lists``; ``probes`` at query time) use the metric's operator class (``vector_cosine_ops``,
``vector_l2_ops``, ``vector_ip_ops``). Above :data:`VECTOR_INDEX_MAX` dimensions the index is built over
``embedding::halfvec(n)`` (up to :data:`HALFVEC_INDEX_MAX`) while the column keeps float32, so stored
vectors and scores stay exact; above that an index searches exactly. An ``ivfflat`` index is trained only
once the table holds at least ``lists`` rows (an IVF index trained on an empty table has poor recall);
until then queries are exact. ``flat`` builds no ANN index. Each index's configuration is its registry
row (:class:`IndexRow`).
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from mastra_memory.capabilities import Metric
from mastra_memory.errors import CapabilityError, MastraMemoryError, ValidationError
from mastra_memory.vector.records import DEFAULT_EF_CONSTRUCTION, DEFAULT_M, IndexConfig, default_ef

from .connection import Connection, quote_ident
from .settings import MAX_IDENTIFIER_BYTES
from .translate import json_text

__all__ = [
    "DEFAULT_EF_CONSTRUCTION",
    "DEFAULT_M",
    "HALFVEC_INDEX_MAX",
    "VECTOR_INDEX_MAX",
    "IndexRow",
    "ann_target",
    "build_ann",
    "derived_name",
    "index_config",
    "rebuild",
    "tune",
]

logger = logging.getLogger("mastra_memory_pgvector.ann")

#: ``vector`` columns hold up to 16,000 dimensions, HNSW/IVF indexes over ``vector`` up to 2,000 and over
#: ``halfvec`` up to 4,000.
VECTOR_INDEX_MAX: Final = 2_000
HALFVEC_INDEX_MAX: Final = 4_000
_OPCLASS: Final[Mapping[Metric, str]] = {
    "cosine": "cosine_ops",
    "euclidean": "l2_ops",
    "dotproduct": "ip_ops",
}
#: What ``create_index`` with another of these rebuilds the ANN index for (the others apply at query time).
_BUILD: Final = ("type", "m", "ef_construction", "lists")

#: How an error is made: the store's ``_error`` (its ids name the public operation).
ErrorFactory = Callable[..., MastraMemoryError]


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
class IndexRow:
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

    @classmethod
    def of(
        cls, name: str, dimension: int, metric: Metric, config: Mapping[str, Any], built: bool
    ) -> IndexRow:
        """The row of index ``name`` with the stored (or wanted) ``config``."""
        return cls(
            name=name,
            dimension=dimension,
            metric=metric,
            kind=str(config.get("type", "flat")),
            m=int(config.get("m") or DEFAULT_M),
            ef_construction=int(config.get("ef_construction") or DEFAULT_EF_CONSTRUCTION),
            lists=config.get("lists"),
            probes=config.get("probes"),
            ef=config.get("ef"),
            built=built,
        )


def index_config(dimension: int, config: IndexConfig, error: ErrorFactory) -> dict[str, Any]:
    """The ANN configuration ``create_index`` asks for, checked (raised with ``error`` before any I/O)."""
    op = "CREATE_INDEX"
    kind = config.type or "hnsw"
    if dimension > HALFVEC_INDEX_MAX and kind != "flat":
        if config.type is not None:
            raise error(
                CapabilityError, op, "INVALID_ARGS",
                f"pgvector builds {kind} indexes up to {HALFVEC_INDEX_MAX} dimensions (as halfvec); "
                f"use index type 'flat' (exact search) for {dimension} dimensions",
            )  # fmt: skip
        logger.warning(
            "%d dimensions exceed pgvector's ANN index limit (%d); the index searches exactly",
            dimension, HALFVEC_INDEX_MAX,
        )  # fmt: skip
        kind = "flat"
    m = config.m or DEFAULT_M
    ef_construction = config.ef_construction or max(DEFAULT_EF_CONSTRUCTION, 2 * m)
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
        raise error(ValidationError, op, "INVALID_ARGS", "invalid index_config: " + "; ".join(problems))
    return {
        "type": kind,
        "m": m,
        "ef_construction": ef_construction,
        "lists": config.lists,
        "probes": config.probes,
        "ef": config.ef,
    }


def ann_target(index: IndexRow) -> tuple[str, str]:
    """The indexed expression and the operator class of an index (halfvec above 2,000 dimensions)."""
    if index.dimension > VECTOR_INDEX_MAX:
        return f"(embedding::halfvec({index.dimension}))", f"halfvec_{_OPCLASS[index.metric]}"
    return "embedding", f"vector_{_OPCLASS[index.metric]}"


async def build_ann(conn: Connection, table: str, index: IndexRow, rows: int) -> bool:
    """Create the ANN index of ``index`` over ``table`` (ivfflat only once the table has ``lists`` rows);
    whether it was built."""
    if index.kind == "flat":
        return False
    expression, opclass = ann_target(index)
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


async def rebuild(
    conn: Connection,
    schema: str,
    registry: str,
    table: str,
    existing: IndexRow,
    stored: dict[str, Any],
    config: IndexConfig,
    wanted: dict[str, Any],
) -> None:
    """``create_index`` of the existing index ``existing`` (its registry ``stored`` config): rebuild the
    ANN index when the caller asked for another type or build parameters, and keep the query-time ones."""
    name = existing.name
    asked = {k: wanted[k] for k in _BUILD if getattr(config, k) is not None}
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
            f"DROP INDEX IF EXISTS {quote_ident(schema)}.{quote_ident(derived_name(name, 'vector_idx'))}"
        )
        count = await (await conn.execute(f"SELECT count(*) FROM {table}")).fetchone()
        index = IndexRow.of(name, existing.dimension, existing.metric, merged, built=False)
        built = await build_ann(conn, table, index, int(count[0]) if count else 0)
    else:
        built = existing.built
    await conn.execute(
        f"UPDATE {registry} SET config = %s::jsonb, built = %s WHERE name = %s",
        (json_text(merged), built, name),
    )


async def tune(
    conn: Connection, index: IndexRow, top_k: int, options: Mapping[str, Any], iterative: bool
) -> None:
    """Search parameters of this transaction (one statement): ef_search or probes, and (``iterative``:
    pgvector 0.8) iterative index scans, which keep scanning until a filtered query has its ``top_k``
    rows."""
    settings: dict[str, str] = {}
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
