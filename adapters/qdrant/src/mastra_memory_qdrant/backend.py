"""What :class:`~mastra_memory_qdrant.store.QdrantVector` needs from a Qdrant engine.

Two implementations: :class:`~mastra_memory_qdrant.client.ClientBackend` (qdrant-client's async client:
a server, or its local mode) and :class:`~mastra_memory_qdrant.edge.EdgeBackend` (the embedded
qdrant-edge engine, one shard per index). Both take filters in the neutral form of :mod:`.translate`
and render them themselves.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, cast

from mastra_memory.capabilities import Metric

from .translate import QFilter

__all__ = ["Hit", "IndexInfo", "PointRecord", "QdrantBackend", "Search", "payload_groups"]


def payload_groups(
    vectors: list[tuple[str, list[float], dict[str, Any]]],
) -> list[tuple[dict[str, Any], list[str]]]:
    """The payload keys of :meth:`QdrantBackend.set_vectors` as (keys, point ids) runs of equal keys.

    An update by filter gives every point the same vector and norm: one payload request per page.
    """
    groups: list[tuple[dict[str, Any], list[str]]] = []
    for pid, _, values in vectors:
        if not values:
            continue
        if groups and groups[-1][0] == values:
            groups[-1][1].append(pid)
        else:
            groups.append((values, [pid]))
    return groups


@dataclass(frozen=True, slots=True)
class IndexInfo:
    """How an index was created. ``m == 0`` means no HNSW graph (``flat``: exact search)."""

    dimension: int
    metric: Metric
    m: int
    ef_construct: int


@dataclass(frozen=True, slots=True)
class PointRecord:
    """One point to write: its Qdrant id (a UUID string), vector and full payload."""

    point_id: str
    vector: list[float]
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Search:
    """One nearest-neighbour request to an engine (:meth:`QdrantBackend.search`), the parameters declared
    once for every backend: the ``limit`` nearest points of collection ``name`` to ``vector`` matching
    ``flt``, their vectors when ``with_vector``, HNSW's ``ef``, or a full scan when ``exact``."""

    name: str
    vector: list[float]
    limit: int
    flt: QFilter | None
    with_vector: bool
    ef: int
    exact: bool


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: the engine's native score, the payload (filter document excluded), the vector."""

    point_id: str
    score: float
    payload: dict[str, Any]
    vector: list[float] | None

    @classmethod
    def of(cls, point_id: str, point: Any, with_vector: bool) -> Hit:
        """The hit of an engine's scored point (qdrant-client's and the edge engine's both carry
        ``score``, ``payload`` and ``vector``)."""
        stored = point.vector if with_vector else None
        return cls(
            point_id=point_id,
            score=float(point.score),
            payload=dict(point.payload or {}),
            vector=[float(x) for x in cast(list[float], stored)] if stored is not None else None,
        )


class QdrantBackend(ABC):
    """The engine operations the store is written against (all async; ``name`` is the collection)."""

    #: Whether keyword payload indexes are built (qdrant-client's local mode has none).
    payload_indexes: bool = True

    @abstractmethod
    async def info(self, name: str) -> IndexInfo | None:
        """How the index was created, or ``None`` when it does not exist."""

    @abstractmethod
    async def count(self, name: str) -> int:
        """The exact number of points."""

    @abstractmethod
    async def create(self, name: str, info: IndexInfo, keyword_fields: list[str]) -> bool:
        """Create the index with keyword payload indexes; ``False`` when it already existed."""

    @abstractmethod
    async def ensure_keyword_fields(self, name: str, keyword_fields: list[str]) -> None:
        """Create the keyword payload indexes that are missing."""

    @abstractmethod
    async def names(self) -> list[str]:
        """The names of the indexes."""

    @abstractmethod
    async def delete(self, name: str) -> None:
        """Delete the index; a missing one is not an error."""

    @abstractmethod
    async def upsert(self, name: str, points: list[PointRecord]) -> None:
        """Insert or replace the points (one request, acknowledged when applied)."""

    @abstractmethod
    async def search(self, search: Search) -> list[Hit]:
        """The ``search.limit`` nearest points matching ``search.flt``."""

    @abstractmethod
    async def scroll(
        self, name: str, flt: QFilter | None, limit: int, offset: Any
    ) -> tuple[list[tuple[str, dict[str, Any]]], Any]:
        """One page of ``(point id, payload without the filter document)`` and the next offset."""

    @abstractmethod
    async def existing(self, name: str, point_ids: list[str]) -> dict[str, dict[str, Any]]:
        """Those of ``point_ids`` that exist, each with its reserved payload keys (id and vector norm)."""

    @abstractmethod
    async def vectors(self, name: str, point_ids: list[str]) -> dict[str, tuple[list[float], dict[str, Any]]]:
        """The vector of each of ``point_ids`` that exists, as the engine returns it, with its reserved
        payload keys (the norm that restores a cosine collection's vector)."""

    @abstractmethod
    async def set_payloads(self, name: str, payloads: list[tuple[str, dict[str, Any]]]) -> None:
        """Replace the whole payload of each point."""

    @abstractmethod
    async def set_vectors(self, name: str, vectors: list[tuple[str, list[float], dict[str, Any]]]) -> None:
        """Replace the vector of each point and set the given payload keys beside it (keeping the others)."""

    @abstractmethod
    async def delete_points(self, name: str, point_ids: list[str]) -> None:
        """Delete points by id (unknown ids are ignored)."""

    @abstractmethod
    async def delete_matching(self, name: str, flt: QFilter) -> None:
        """Delete every point matching ``flt``."""

    async def optimize(self, name: str) -> None:
        """Build pending indexes now (engines that optimise in the background do nothing)."""
        return None

    async def after_upsert(self, name: str) -> None:
        """Called after each upsert call: engines without background optimisation may index here."""
        return None

    @abstractmethod
    async def close(self) -> None:
        """Release the engine."""
