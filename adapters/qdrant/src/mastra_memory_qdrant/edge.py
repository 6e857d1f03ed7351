"""The embedded engine: ``qdrant-edge-py`` runs Qdrant's Rust shard (HNSW, payload indexes, WAL) in-process.

Layout. ``edge_path`` holds one directory per index: ``<edge_path>/<index>/shard`` is the Qdrant shard
and ``<edge_path>/<index>/mastra_index.json`` records how the index was created (dimension, metric,
HNSW ``m`` and ``ef_construct``). The sidecar is written last, so an index exists once it is there.

Sharing. A shard directory can be opened once per process (its WAL is locked), while mastra-memory may
build several stores over the same ``edge_path``. Open shards therefore live in a process-wide registry,
reference-counted by the stores using them; the last store to close one closes the shard. Each open
shard has one worker thread that runs all its calls, so the event loop never blocks on the engine and
calls to one shard are applied in order.

Indexing. The engine has no background optimiser: segments become HNSW-indexed when
``EdgeShard.optimize()`` runs. The store calls it after an upsert once ``edge_optimize_threshold`` points
were written since the last run, and :meth:`QdrantVector.optimize` runs it on demand. Unindexed segments
are searched exactly.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar, cast

import qdrant_edge as qe
from mastra_memory.capabilities import Metric
from mastra_memory.errors import VectorStoreError, error_id

from .backend import Hit, IndexInfo, PointRecord, QdrantBackend, Search, payload_groups
from .layout import FILTER_ROOT, RESERVED_ID, RESERVED_NORM
from .settings import QdrantSettings
from .translate import Condition, QFilter, QMatch, QMatchAny, QNested, QRange

__all__ = ["EdgeBackend", "render_edge"]

T = TypeVar("T")

SIDECAR: Final = "mastra_index.json"
SHARD_DIR: Final = "shard"
_DISTANCES: Final[dict[str, qe.Distance]] = {
    "cosine": qe.Distance.Cosine,
    "euclidean": qe.Distance.Euclid,
    "dotproduct": qe.Distance.Dot,
}
#: Below this many points a segment is searched exactly instead of through its HNSW graph.
_FULL_SCAN_THRESHOLD: Final = 10_000


# --- rendering -------------------------------------------------------------------------------------


def _edge_condition(condition: Condition) -> Any:
    if isinstance(condition, QFilter):
        return render_edge(condition)
    if isinstance(condition, QMatch):
        return qe.FieldCondition(condition.key, match=qe.MatchValue(condition.value))
    if isinstance(condition, QMatchAny):
        return qe.FieldCondition(
            condition.key, match=qe.MatchAny(cast(list[str] | list[int], list(condition.values)))
        )
    if isinstance(condition, QRange):
        return qe.FieldCondition(
            condition.key,
            range=qe.RangeFloat(gte=condition.gte, gt=condition.gt, lte=condition.lte, lt=condition.lt),
        )
    if isinstance(condition, QNested):
        return qe.NestedCondition(condition.key, render_edge(condition.filter))
    raise TypeError(f"not a neutral Qdrant condition: {condition!r}")


def render_edge(flt: QFilter) -> qe.Filter:
    """The neutral filter as a ``qdrant_edge.Filter``."""
    return qe.Filter(
        must=[_edge_condition(c) for c in flt.must] or None,
        should=[_edge_condition(c) for c in flt.should] or None,
        must_not=[_edge_condition(c) for c in flt.must_not] or None,
    )


# --- the process-wide registry of open shards --------------------------------------------------------


@dataclass(eq=False)
class _OpenShard:
    shard: qe.EdgeShard
    executor: ThreadPoolExecutor
    refs: int = 0
    optimized_at: int = 0
    closed: bool = field(default=False)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.executor.submit(self.shard.close).result()
            self.executor.shutdown(wait=True)


_lock = threading.Lock()
_open: dict[Path, _OpenShard] = {}


def _executor(path: Path) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"qdrant-edge-{path.parent.name}")


def _acquire(path: Path) -> _OpenShard:
    """The open shard at ``path`` with one more reference (loaded on first use)."""
    with _lock:
        entry = _open.get(path)
        if entry is None:
            executor = _executor(path)
            try:
                shard = executor.submit(qe.EdgeShard.load, str(path)).result()
            except BaseException:
                executor.shutdown(wait=False)
                raise
            entry = _OpenShard(shard, executor)
            _open[path] = entry
        entry.refs += 1
        return entry


def _release(path: Path, entry: _OpenShard) -> None:
    with _lock:
        if _open.get(path) is not entry:
            return
        entry.refs -= 1
        if entry.refs > 0:
            return
        del _open[path]
    entry.close()


def _forget(path: Path) -> None:
    """Close the shard at ``path`` for every store (its index is being deleted)."""
    with _lock:
        entry = _open.pop(path, None)
    if entry is not None:
        entry.close()


# --- engine panics ---------------------------------------------------------------------------------

#: What a caller, not the engine, raises: these pass through unchanged.
_CONTROL_FLOW: Final = (KeyboardInterrupt, SystemExit, GeneratorExit, asyncio.CancelledError)


async def _guarded(name: str, work: Awaitable[T]) -> T:
    """``await work``, with an engine panic turned into :class:`VectorStoreError`.

    A Rust panic inside the engine reaches Python as ``pyo3_runtime.PanicException``, which derives from
    ``BaseException``, not ``Exception``: it would escape every ``except Exception`` (the template's
    error wrapping included) and end the caller's task. It becomes ``VectorStoreError`` with the id
    ``MASTRA_VECTOR_QDRANT_ENGINE_PANIC`` and the panic as ``__cause__``. Cancellation, interrupts and
    exits pass through unchanged.
    """
    try:
        return await work
    except _CONTROL_FLOW:
        raise
    except Exception:
        raise
    except BaseException as exc:
        raise VectorStoreError(
            f"the qdrant-edge engine panicked on index {name!r} ({type(exc).__name__}: {exc}); the index's "
            "shard may be damaged: if this repeats, recreate the index and reindex its records "
            "(Memory.reindex for memory indexes)",
            id=error_id("VECTOR", "qdrant", "", "ENGINE_PANIC"),
            details={"index": name, "panic": type(exc).__name__},
        ) from exc


# --- the backend -------------------------------------------------------------------------------------


class EdgeBackend(QdrantBackend):
    """One EdgeShard per index under ``settings.edge_path``."""

    def __init__(self, settings: QdrantSettings) -> None:
        assert settings.edge_path is not None
        self._root = Path(settings.edge_path).expanduser().resolve()
        self._threshold = settings.edge_optimize_threshold
        self._threads = settings.edge_search_threads
        self._held: dict[str, _OpenShard] = {}

    def _dir(self, name: str) -> Path:
        return self._root / name

    def _shard_path(self, name: str) -> Path:
        return self._dir(name) / SHARD_DIR

    def _read_sidecar(self, name: str) -> IndexInfo | None:
        try:
            data = json.loads((self._dir(name) / SIDECAR).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        return IndexInfo(
            dimension=int(data["dimension"]),
            metric=cast(Metric, data["metric"]),
            m=int(data["m"]),
            ef_construct=int(data["ef_construct"]),
        )

    async def _entry(self, name: str) -> _OpenShard:
        entry = self._held.get(name)
        if entry is not None and not entry.closed:
            return entry
        if entry is not None:
            self._held.pop(name, None)
        path = self._shard_path(name)
        entry = await asyncio.to_thread(_acquire, path)
        held = self._held.get(name)
        if held is not None and not held.closed:  # a concurrent call of this store got there first
            await asyncio.to_thread(_release, path, entry)
            return held
        self._held[name] = entry
        return entry

    async def _run(self, name: str, call: Callable[[qe.EdgeShard], T]) -> T:
        async def run() -> T:
            entry = await self._entry(name)
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(entry.executor, call, entry.shard)

        return await _guarded(name, run())

    async def info(self, name: str) -> IndexInfo | None:
        return await asyncio.to_thread(self._read_sidecar, name)

    async def count(self, name: str) -> int:
        return await self._run(name, lambda shard: shard.count(qe.CountRequest(exact=True)))

    def _config(self, info: IndexInfo) -> qe.EdgeConfig:
        return qe.EdgeConfig(
            vectors=qe.EdgeVectorParams(size=info.dimension, distance=_DISTANCES[info.metric]),
            hnsw_config=qe.HnswIndexConfig(
                m=info.m, ef_construct=info.ef_construct, full_scan_threshold=_FULL_SCAN_THRESHOLD
            ),
            max_search_threads=self._threads,
            payload_memory=qe.Memory.Cached,
        )

    def _create(self, name: str, info: IndexInfo, keyword_fields: list[str]) -> bool:
        path = self._shard_path(name)
        with _lock:
            if self._read_sidecar(name) is not None:
                return False
            if path.exists():  # left behind by a creation that did not finish
                shutil.rmtree(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            executor = _executor(path)
            try:
                shard = executor.submit(qe.EdgeShard.create, str(path), self._config(info)).result()
            except BaseException:
                executor.shutdown(wait=False)
                raise
            entry = _OpenShard(shard, executor, refs=1)
            try:
                for key in keyword_fields:
                    operation = qe.UpdateOperation.create_field_index(key, qe.PayloadSchemaType.Keyword)
                    executor.submit(shard.update, operation).result()
                sidecar = path.parent / SIDECAR
                partial = sidecar.with_suffix(".tmp")
                partial.write_text(
                    json.dumps(
                        {
                            "dimension": info.dimension,
                            "metric": info.metric,
                            "m": info.m,
                            "ef_construct": info.ef_construct,
                        }
                    ),
                    encoding="utf-8",
                )
                os.replace(partial, sidecar)
            except BaseException:
                entry.close()
                raise
            _open[path] = entry
        self._held[name] = entry
        return True

    async def create(self, name: str, info: IndexInfo, keyword_fields: list[str]) -> bool:
        return await _guarded(name, asyncio.to_thread(self._create, name, info, keyword_fields))

    async def ensure_keyword_fields(self, name: str, keyword_fields: list[str]) -> None:
        def ensure(shard: qe.EdgeShard) -> None:
            present = shard.info().payload_schema
            for key in keyword_fields:
                if key not in present:
                    shard.update(qe.UpdateOperation.create_field_index(key, qe.PayloadSchemaType.Keyword))

        if keyword_fields:
            await self._run(name, ensure)

    async def names(self) -> list[str]:
        def names() -> list[str]:
            if not self._root.is_dir():
                return []
            return sorted(p.name for p in self._root.iterdir() if (p / SIDECAR).is_file())

        return await asyncio.to_thread(names)

    async def delete(self, name: str) -> None:
        def remove() -> None:
            path = self._shard_path(name)
            _forget(path)
            sidecar = self._dir(name) / SIDECAR
            sidecar.unlink(missing_ok=True)  # the index is gone from here on, even if removal is slow
            shutil.rmtree(self._dir(name), ignore_errors=True)

        self._held.pop(name, None)
        await _guarded(name, asyncio.to_thread(remove))

    async def upsert(self, name: str, points: list[PointRecord]) -> None:
        batch = [qe.Point(p.point_id, p.vector, p.payload) for p in points]
        await self._run(name, lambda shard: shard.update(qe.UpdateOperation.upsert_points(batch)))

    async def after_upsert(self, name: str) -> None:
        if self._threshold <= 0:
            return
        entry = await _guarded(name, self._entry(name))

        def maybe_optimize(shard: qe.EdgeShard) -> None:
            count = shard.info().points_count
            if count - entry.optimized_at >= self._threshold:
                shard.optimize()
                entry.optimized_at = count

        await self._run(name, maybe_optimize)

    async def optimize(self, name: str) -> None:
        entry = await _guarded(name, self._entry(name))

        def run(shard: qe.EdgeShard) -> None:
            shard.optimize()
            entry.optimized_at = shard.info().points_count

        await self._run(name, run)

    async def search(self, search: Search) -> list[Hit]:
        request = qe.QueryRequest(
            limit=search.limit,
            query=qe.Query.Nearest(search.vector),
            filter=render_edge(search.flt) if search.flt is not None else None,
            with_payload=qe.PayloadSelector.Exclude([FILTER_ROOT]),
            with_vector=search.with_vector,
            params=qe.SearchParams(hnsw_ef=search.ef, exact=search.exact),
        )
        points = await self._run(search.name, lambda shard: shard.query(request))
        return [Hit.of(str(point.id), point, search.with_vector) for point in points]

    async def scroll(
        self, name: str, flt: QFilter | None, limit: int, offset: Any
    ) -> tuple[list[tuple[str, dict[str, Any]]], Any]:
        request = qe.ScrollRequest(
            offset=offset,
            limit=limit,
            filter=render_edge(flt) if flt is not None else None,
            with_payload=qe.PayloadSelector.Exclude([FILTER_ROOT]),
            with_vector=False,
        )
        records, following = await self._run(name, lambda shard: shard.scroll(request))
        return [(str(r.id), dict(r.payload or {})) for r in records], following

    async def existing(self, name: str, point_ids: list[str]) -> dict[str, dict[str, Any]]:
        selector = qe.PayloadSelector.Include([RESERVED_ID, RESERVED_NORM])
        records = await self._run(name, lambda shard: shard.retrieve(list(point_ids), selector, False))
        return {str(r.id): dict(r.payload or {}) for r in records}

    async def vectors(self, name: str, point_ids: list[str]) -> dict[str, tuple[list[float], dict[str, Any]]]:
        selector = qe.PayloadSelector.Include([RESERVED_ID, RESERVED_NORM])
        records = await self._run(name, lambda shard: shard.retrieve(list(point_ids), selector, True))
        return {
            str(r.id): ([float(x) for x in cast(list[float], r.vector)], dict(r.payload or {}))
            for r in records
        }

    async def set_payloads(self, name: str, payloads: list[tuple[str, dict[str, Any]]]) -> None:
        def apply(shard: qe.EdgeShard) -> None:
            for pid, payload in payloads:
                shard.update(qe.UpdateOperation.overwrite_payload([pid], payload))

        if payloads:
            await self._run(name, apply)

    async def set_vectors(self, name: str, vectors: list[tuple[str, list[float], dict[str, Any]]]) -> None:
        def apply(shard: qe.EdgeShard) -> None:
            shard.update(
                qe.UpdateOperation.update_vectors([qe.PointVectors(pid, vec) for pid, vec, _ in vectors])
            )
            for values, pids in payload_groups(vectors):
                shard.update(qe.UpdateOperation.set_payload(list(pids), values))

        if vectors:
            await self._run(name, apply)

    async def delete_points(self, name: str, point_ids: list[str]) -> None:
        if point_ids:
            operation = qe.UpdateOperation.delete_points(list(point_ids))
            await self._run(name, lambda shard: shard.update(operation))

    async def delete_matching(self, name: str, flt: QFilter) -> None:
        operation = qe.UpdateOperation.delete_points_by_filter(render_edge(flt))
        await self._run(name, lambda shard: shard.update(operation))

    async def close(self) -> None:
        held, self._held = self._held, {}
        for name, entry in held.items():
            await _guarded(name, asyncio.to_thread(_release, self._shard_path(name), entry))
