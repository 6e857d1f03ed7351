"""The qdrant-client backend: a Qdrant server (URL + API key) or the client's local mode (path, memory).

Every write waits for the server to apply it (``wait=True``), so a read right after a write sees it.
"""

from __future__ import annotations

from typing import Any, Final, cast

from mastra_memory.capabilities import Metric
from qdrant_client import AsyncQdrantClient, models

from .backend import Hit, IndexInfo, PointRecord, QdrantBackend, Search, payload_groups
from .layout import FILTER_ROOT, RESERVED_ID, RESERVED_NORM
from .settings import QdrantSettings
from .translate import QFilter, render_client

__all__ = ["ClientBackend"]

_DISTANCES: Final[dict[str, models.Distance]] = {
    "cosine": models.Distance.COSINE,
    "euclidean": models.Distance.EUCLID,
    "dotproduct": models.Distance.DOT,
}
_METRICS: Final[dict[models.Distance, Metric]] = {v: cast(Metric, k) for k, v in _DISTANCES.items()}
_WITHOUT_FILTER_DOCUMENT: Final = models.PayloadSelectorExclude(exclude=[FILTER_ROOT])


def _filter(flt: QFilter | None) -> models.Filter | None:
    return None if flt is None else render_client(flt)


def _point_id(value: Any) -> str:
    return str(value)


class ClientBackend(QdrantBackend):
    """Qdrant through ``AsyncQdrantClient``; the client is created on first use."""

    def __init__(self, settings: QdrantSettings) -> None:
        self._settings = settings
        self._client: AsyncQdrantClient | None = None
        # Local mode builds no payload index and always searches exactly (search params do nothing).
        self.payload_indexes = settings.mode == "server"

    @property
    def client(self) -> AsyncQdrantClient:
        """The async client (created on first use)."""
        if self._client is None:
            s = self._settings
            if s.mode == "server":
                self._client = AsyncQdrantClient(
                    url=s.server_url,
                    api_key=s.api_key.get_secret_value() if s.api_key is not None else None,
                    prefer_grpc=s.prefer_grpc,
                    timeout=s.timeout,
                )
            elif s.mode == "local":
                self._client = AsyncQdrantClient(path=s.path)
            else:
                self._client = AsyncQdrantClient(location=":memory:")
        return self._client

    async def info(self, name: str) -> IndexInfo | None:
        if not await self.client.collection_exists(name):
            return None
        config = (await self.client.get_collection(name)).config
        params = config.params.vectors
        if not isinstance(params, models.VectorParams):
            raise TypeError(f"collection {name!r} has named vectors; it was not created by mastra-memory")
        hnsw = config.hnsw_config
        return IndexInfo(
            dimension=params.size, metric=_METRICS[params.distance], m=hnsw.m, ef_construct=hnsw.ef_construct
        )

    async def count(self, name: str) -> int:
        return (await self.client.count(name, exact=True)).count

    async def create(self, name: str, info: IndexInfo, keyword_fields: list[str]) -> bool:
        if await self.client.collection_exists(name):
            return False
        try:
            await self.client.create_collection(
                name,
                vectors_config=models.VectorParams(size=info.dimension, distance=_DISTANCES[info.metric]),
                hnsw_config=models.HnswConfigDiff(m=info.m, ef_construct=info.ef_construct),
            )
        except Exception:
            if await self.client.collection_exists(name):  # created concurrently
                return False
            raise
        await self.ensure_keyword_fields(name, keyword_fields)
        return True

    async def ensure_keyword_fields(self, name: str, keyword_fields: list[str]) -> None:
        if not self.payload_indexes or not keyword_fields:
            return
        schema = (await self.client.get_collection(name)).payload_schema
        for field in keyword_fields:
            if field not in schema:
                await self.client.create_payload_index(
                    name, field, field_schema=models.PayloadSchemaType.KEYWORD, wait=True
                )

    async def names(self) -> list[str]:
        return [c.name for c in (await self.client.get_collections()).collections]

    async def delete(self, name: str) -> None:
        if await self.client.collection_exists(name):
            await self.client.delete_collection(name)

    async def upsert(self, name: str, points: list[PointRecord]) -> None:
        await self.client.upsert(
            name,
            points=[models.PointStruct(id=p.point_id, vector=p.vector, payload=p.payload) for p in points],
            wait=True,
        )

    async def search(self, search: Search) -> list[Hit]:
        params = models.SearchParams(hnsw_ef=search.ef, exact=search.exact) if self.payload_indexes else None
        response = await self.client.query_points(
            search.name,
            query=search.vector,
            limit=search.limit,
            query_filter=_filter(search.flt),
            with_payload=_WITHOUT_FILTER_DOCUMENT,
            with_vectors=search.with_vector,
            search_params=params,
        )
        return [Hit.of(_point_id(point.id), point, search.with_vector) for point in response.points]

    async def scroll(
        self, name: str, flt: QFilter | None, limit: int, offset: Any
    ) -> tuple[list[tuple[str, dict[str, Any]]], Any]:
        records, following = await self.client.scroll(
            name,
            scroll_filter=_filter(flt),
            limit=limit,
            offset=offset,
            with_payload=_WITHOUT_FILTER_DOCUMENT,
            with_vectors=False,
        )
        return [(_point_id(r.id), dict(r.payload or {})) for r in records], following

    async def existing(self, name: str, point_ids: list[str]) -> dict[str, dict[str, Any]]:
        records = await self.client.retrieve(
            name,
            point_ids,
            with_payload=models.PayloadSelectorInclude(include=[RESERVED_ID, RESERVED_NORM]),
            with_vectors=False,
        )
        return {_point_id(r.id): dict(r.payload or {}) for r in records}

    async def vectors(self, name: str, point_ids: list[str]) -> dict[str, tuple[list[float], dict[str, Any]]]:
        records = await self.client.retrieve(
            name,
            point_ids,
            with_payload=models.PayloadSelectorInclude(include=[RESERVED_ID, RESERVED_NORM]),
            with_vectors=True,
        )
        return {
            _point_id(r.id): ([float(x) for x in cast(list[float], r.vector)], dict(r.payload or {}))
            for r in records
        }

    async def set_payloads(self, name: str, payloads: list[tuple[str, dict[str, Any]]]) -> None:
        operations: list[models.UpdateOperation] = [
            models.OverwritePayloadOperation(
                overwrite_payload=models.SetPayload(payload=payload, points=[pid])
            )
            for pid, payload in payloads
        ]
        if operations:
            await self.client.batch_update_points(name, update_operations=operations, wait=True)

    async def set_vectors(self, name: str, vectors: list[tuple[str, list[float], dict[str, Any]]]) -> None:
        if not vectors:
            return
        operations: list[models.UpdateOperation] = [
            models.UpdateVectorsOperation(
                update_vectors=models.UpdateVectors(
                    points=[models.PointVectors(id=pid, vector=vec) for pid, vec, _ in vectors]
                )
            )
        ]
        operations.extend(
            models.SetPayloadOperation(set_payload=models.SetPayload(payload=values, points=list(pids)))
            for values, pids in payload_groups(vectors)
        )
        await self.client.batch_update_points(name, update_operations=operations, wait=True)

    async def delete_points(self, name: str, point_ids: list[str]) -> None:
        if point_ids:
            await self.client.delete(name, points_selector=models.PointIdsList(points=point_ids), wait=True)

    async def delete_matching(self, name: str, flt: QFilter) -> None:
        await self.client.delete(
            name, points_selector=models.FilterSelector(filter=render_client(flt)), wait=True
        )

    async def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()
