"""Helpers of the Qdrant adapter tests: settings and backends of the real engines (the embedded edge
engine, and qdrant-client's local mode in memory or on disk).

``Recording*`` backends are the real backends with a log of the requests they send (batch sizes, scroll
pages, ``ef``), so tests can check what reaches the engine without replacing it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mastra_memory_qdrant.backend import Hit, PointRecord, QdrantBackend, Search
from mastra_memory_qdrant.client import ClientBackend
from mastra_memory_qdrant.edge import EdgeBackend
from mastra_memory_qdrant.settings import QdrantSettings
from mastra_memory_qdrant.translate import QFilter

MODES = ("edge", "memory", "local")


class Log:
    """What a recording backend sent: upsert batch sizes, scroll page sizes, search (limit, ef, exact)."""

    def __init__(self) -> None:
        self.upserts: list[int] = []
        self.scrolls: list[int] = []
        self.searches: list[tuple[int, int, bool]] = []


class RecordingEdge(EdgeBackend):
    """The edge backend, logging its requests."""

    def __init__(self, settings: QdrantSettings) -> None:
        super().__init__(settings)
        self.log = Log()

    async def upsert(self, name: str, points: list[PointRecord]) -> None:
        self.log.upserts.append(len(points))
        await super().upsert(name, points)

    async def scroll(
        self, name: str, flt: QFilter | None, limit: int, offset: Any
    ) -> tuple[list[tuple[str, dict[str, Any]]], Any]:
        self.log.scrolls.append(limit)
        return await super().scroll(name, flt, limit, offset)

    async def search(self, search: Search) -> list[Hit]:
        self.log.searches.append((search.limit, search.ef, search.exact))
        return await super().search(search)


def settings_for(mode: str, tmp_path: Path) -> QdrantSettings:
    """Settings of a store in ``mode`` with its data under ``tmp_path``."""
    if mode == "edge":
        return QdrantSettings(edge_path=str(tmp_path / "edge"), edge_search_threads=1)
    if mode == "local":
        return QdrantSettings(path=str(tmp_path / "local"))
    return QdrantSettings(url=":memory:")


def backend_for(settings: QdrantSettings) -> QdrantBackend:
    """The real backend of the settings' mode."""
    return EdgeBackend(settings) if settings.mode == "edge" else ClientBackend(settings)
