"""``DictStoreVector``: a vector store that keeps its records in Python dicts and scores with numpy.

Every search is exact (a brute-force scan of the matching records), so filtered queries always return
``min(top_k, matching)`` hits. The public methods of ``MastraVector`` validate input and translate filters
before calling the ``_``-prefixed hooks below, which is all an adapter implements.
"""

from __future__ import annotations

import copy
import logging
import threading
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from mastra_memory.capabilities import Metric
from mastra_memory.errors import ValidationError
from mastra_memory.vector import IndexConfig, IndexStats, MastraVector, QueryRequest, QueryResult

from .capabilities import CAPABILITIES
from .settings import DictStoreSettings
from .translate import DictStoreTranslator, Predicate

logger = logging.getLogger("mastra_memory_dictstore")

Vector = npt.NDArray[np.float64]
#: Tuning options of ANN searches; an exact scan has nothing to tune, so they are accepted and ignored.
_ANN_QUERY_OPTIONS = frozenset({"ef", "probes"})


@dataclass
class _Record:
    vector: Vector
    metadata: dict[str, Any]


@dataclass
class _Index:
    dimension: int
    metric: Metric
    records: dict[str, _Record] = field(default_factory=dict)


def _scores(matrix: Vector, query: Vector, metric: Metric) -> Vector:
    """Portable scores (higher is better): cosine similarity, inner product, or 1 / (1 + L2 distance)."""
    if metric == "dotproduct":
        return np.asarray(matrix @ query, dtype=np.float64)
    if metric == "euclidean":
        return np.asarray(1.0 / (1.0 + np.linalg.norm(matrix - query, axis=1)), dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(query)
    safe = np.where(norms > 0, norms, 1.0)
    return np.asarray(np.clip(np.where(norms > 0, (matrix @ query) / safe, 0.0), -1.0, 1.0), dtype=np.float64)


class DictStoreVector(MastraVector):
    """The example adapter. ``DictStoreVector()`` is a private store; pass settings to share a space."""

    capabilities = CAPABILITIES
    translator = DictStoreTranslator

    _spaces: ClassVar[dict[str, dict[str, _Index]]] = {}
    _spaces_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, settings: DictStoreSettings | None = None) -> None:
        super().__init__()
        self.settings = settings or DictStoreSettings()
        if self.settings.space is None:
            self._indexes: dict[str, _Index] = {}
        else:
            with self._spaces_lock:
                self._indexes = self._spaces.setdefault(self.settings.space, {})

    @classmethod
    def drop_space(cls, space: str) -> None:
        """Forget every index of a named space (stores still holding it keep their data)."""
        with cls._spaces_lock:
            cls._spaces.pop(space, None)

    def _get(self, operation: str, name: str) -> _Index:
        index = self._indexes.get(name)
        if index is None:
            raise self._not_found(operation, name)
        return index

    @staticmethod
    def _matching(index: _Index, predicate: Predicate | None) -> list[tuple[str, _Record]]:
        return [
            (rid, rec) for rid, rec in index.records.items() if predicate is None or predicate(rec.metadata)
        ]

    # --- hooks ----------------------------------------------------------------------------------

    async def _create_index(
        self,
        name: str,
        dimension: int,
        metric: Metric,
        config: IndexConfig,
        metadata_indexes: list[str],
        options: dict[str, Any],
    ) -> None:
        existing = self._indexes.get(name)
        if existing is None:
            self._indexes[name] = _Index(dimension, metric)
            return
        self._check_dimension("CREATE_INDEX", name, existing.dimension, dimension)
        if existing.metric != metric:
            logger.warning(
                "index %r exists with metric %s; keeping it (requested %s)", name, existing.metric, metric
            )

    async def _upsert(
        self, name: str, ids: list[str], vectors: Vector, metadata: list[dict[str, Any]]
    ) -> None:
        index = self._get("UPSERT", name)
        for rid, row, meta in zip(ids, vectors, metadata, strict=True):
            index.records[rid] = _Record(np.array(row, dtype=np.float64), copy.deepcopy(meta))

    async def _query(self, request: QueryRequest) -> list[QueryResult]:
        unknown = sorted(set(request.options) - _ANN_QUERY_OPTIONS)
        if unknown:
            raise self._error(
                ValidationError,
                "QUERY",
                "INVALID_ARGS",
                f"unknown query options {unknown} for dictstore (accepted and ignored: ef, probes)",
            )
        index = self._get("QUERY", request.name)
        matching = self._matching(index, request.native_filter)
        if request.vector is None:
            ranked = [(rid, rec, 0.0) for rid, rec in sorted(matching, key=lambda item: item[0])]
        elif matching:
            scores = _scores(np.vstack([rec.vector for _, rec in matching]), request.vector, index.metric)
            ranked = sorted(
                ((rid, rec, float(score)) for (rid, rec), score in zip(matching, scores, strict=True)),
                key=lambda item: (-item[2], item[0]),
            )
        else:
            ranked = []
        return [
            QueryResult(
                id=rid,
                score=score,
                metadata=copy.deepcopy(rec.metadata),
                vector=rec.vector.tolist() if request.include_vector else None,
            )
            for rid, rec, score in ranked[: request.top_k]
        ]

    async def _list_indexes(self) -> list[str]:
        return sorted(self._indexes)

    async def _describe_index(self, name: str) -> IndexStats:
        index = self._get("DESCRIBE_INDEX", name)
        return IndexStats(dimension=index.dimension, count=len(index.records), metric=index.metric)

    async def _delete_index(self, name: str) -> None:
        self._indexes.pop(name, None)

    async def _update_by_id(
        self, name: str, id: str, vector: Vector | None, metadata: dict[str, Any] | None
    ) -> None:
        record = self._get("UPDATE_VECTOR", name).records.get(id)
        if record is not None:
            self._replace(record, vector, metadata)

    async def _update_by_filter(
        self, name: str, native_filter: Any, vector: Vector | None, metadata: dict[str, Any] | None
    ) -> None:
        for _, record in self._matching(self._get("UPDATE_VECTOR", name), native_filter):
            self._replace(record, vector, metadata)

    async def _delete_by_ids(self, name: str, ids: list[str]) -> None:
        records = self._get("DELETE_VECTORS", name).records
        for rid in ids:
            records.pop(rid, None)

    async def _delete_by_filter(self, name: str, native_filter: Any) -> None:
        index = self._get("DELETE_VECTORS", name)
        for rid, _ in self._matching(index, native_filter):
            del index.records[rid]

    @staticmethod
    def _replace(record: _Record, vector: Vector | None, metadata: dict[str, Any] | None) -> None:
        if vector is not None:
            record.vector = np.array(vector, dtype=np.float64)
        if metadata is not None:
            record.metadata = copy.deepcopy(metadata)
