"""The approximate route of the SQLite vector store: an HNSW graph (faiss) behind exact re-ranking (issue 28).
This module holds the route, the builds and the opening; one graph and its mapping onto a snapshot are
``ann_graph.py``.

When. A search over the whole-index snapshot whose matching rows number at least the threshold
(``SQLiteSettings.ann_threshold``, 50,000 by default) asks the graph for
candidates, then scores them exactly (``search.py``) with the snapshot's float32 vectors: scores are the
exact ones, only recall is approximate (measured ≥ 0.99 at recall@10, docs/performance.md). Below the
threshold, without the optional ``faiss-cpu`` package (``mastra-memory[ann]``), or while no graph is
ready, the search is exact.

Exactness of what is returned. Candidates are graph positions; each position names the row ``seq`` it
was built from. A position counts only while the snapshot holds a live row with that seq *and* the same
vector (checked against the graph's stored vectors when a graph is attached to a new snapshot; our own
later writes mark the seqs they touch). Filters are evaluated exactly by the store first; the graph
search is restricted to the matching positions inside faiss (``IDSelectorBitmap``), and every matching
row the graph does not hold (newer, updated, or written by another process since the build) is scored
exactly beside the candidates. So a result is never a deleted or updated-away vector, never outside the
filter (the tenant scope is a filter), and rows newer than the graph are always searched.

Building. The first large search starts a build in a background thread reading its own consistent
connection to the file (never the live snapshot, which writes patch in place) and answers exactly until
the graph is ready; once more than ``max(10,000, 10 %)`` of the matching rows are outside the graph, the
graph is extended (or rebuilt when a quarter of its positions went stale) the same way.
:meth:`AnnRoute.build` builds on demand and waits. A ``:memory:`` database builds in the background too,
from copies of the snapshot's rows, and keeps the graph in memory only.

Persistence. Beside the file, ``<file>.ann/<index>/<build>/`` holds ``graph.faiss``, ``seqs.npy`` and
``order.npy``, and ``<file>.ann/<index>/current.json`` names the build (replaced atomically). A first build
adds the rows grouped by user, then thread (``ann_files.CLUSTER_KEYS``). The graph's vectors are
memory-mapped (``IO_FLAG_MMAP_IFC``), so a restart attaches it without rebuilding; a store opens the
persisted graphs in the background as it is constructed (:meth:`AnnRoute.warm`). One process builds at a
time (``flock`` on ``<index>/build.lock``); the others keep their graph or search exactly. On close, a store
saves the seqs its own writes changed since the build (``<build>/changes.json``): a store that has not
loaded the index searches the graph directly from the file while those are all the changes
(``ann_direct.py``), so a start does not read the whole matrix.
"""

from __future__ import annotations

import importlib.util
import logging
import shutil
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from ...capabilities import Metric
from .ann_direct import Answer, ChangeLog, Changes, DirectQuery, direct_search, scope_search
from .ann_faiss import faiss_available, faiss_module, map_in, new_graph, prepared
from .ann_files import GraphFiles, read_rows
from .ann_graph import AnnGraph
from .search import exact_scores, top_k_rows
from .settings import DEFAULT_ANN_THRESHOLD
from .snapshot import Snapshot

__all__ = ["DEFAULT_ANN_THRESHOLD", "AnnGraph", "AnnRoute", "faiss_available"]

logger = logging.getLogger("mastra_memory.stores.sqlite.ann")

_ADD_CHUNK: Final = 2_000  # rows added between two checks that the store is still open
# Seconds a search waits for the graphs opened in the background at start (AnnRoute.warm) before opening
# its own (a graph on a cold disk can take seconds to open; it is the same work either way).
_WARM_WAIT: Final = 60.0
# Seconds the opening at start waits, unless a search needs a graph sooner (AnnRoute.warm).
_WARM_DELAY: Final = 0.1


def _loaded(files: GraphFiles, dimension: int, metric: Metric) -> AnnGraph | None:
    stored = files.load(dimension, metric)
    if stored is None:
        return None
    graph = AnnGraph(stored.index, stored.seqs, dimension, metric, stored.generation, stored.build)
    graph.order = stored.order
    return graph


class _Stopped(Exception):
    """The store closed during a build."""


class AnnRoute:
    """The graphs of one store, their background builds, and the search through them."""

    def __init__(self, path: str, threshold: int, background: bool) -> None:
        self.threshold = threshold
        self.background = background
        self.in_memory = path == ":memory:"
        self._path = path
        self._graphs: dict[str, AnnGraph | None] = {}  # None: looked for on disk, none usable
        self._logs: dict[str, ChangeLog] = {}  # our own writes while a graph exists (ann_direct.py)
        self._persisted: set[str] = set()  # indexes known to have a graph on disk
        self._installed: bool | None = None
        self._futures: dict[str, Future[AnnGraph | None]] = {}
        self._warming: Future[dict[str, AnnGraph]] | None = None  # AnnRoute.warm
        self._wake = threading.Event()  # a search needs the graphs warm() is about to open
        self._pool: ThreadPoolExecutor | None = None
        self._warned = False
        self.builds = 0  # graphs built or extended by this store (tests read it)
        self._guard = threading.Lock()
        self._stop = threading.Event()

    def close(self) -> None:
        """Stop a running build (dropped, not published), save what our writes changed since each persisted
        graph (the next process's direct route starts from it: ``ann_direct.py``) and forget the graphs."""
        self._stop.set()
        self._wake.set()
        for name, log in self._logs.items():
            current = self._files(name).current() if log.last else None
            if current is not None:  # the build on disk now (perhaps never loaded: a process that only wrote)
                build, generation = current
                folder = self._files(name).root / build
                changes = log.resolve(build, generation, folder, log.last)
                if changes is not None and changes.generation != generation:
                    changes.save(folder)
        self._logs.clear()
        self._persisted.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._graphs.clear()
        self._futures.clear()
        self._warming = None
        self._stop = threading.Event()
        self._wake = threading.Event()

    def warm(self) -> None:
        """Open the persisted graphs in the background, a moment after the store opens (at once when a search
        needs one): faiss imported and each graph's links read (about 0.1 s at 1M rows with the files in
        the page cache, much more from a cold disk), which a process's first search would otherwise wait
        for (docs/performance.md); :meth:`graph` takes them as they were loaded. Nothing happens without a
        graph on disk or without faiss."""
        if self.in_memory or not self.installed():
            return
        try:
            names = [d.name for d in Path(f"{self._path}.ann").iterdir() if (d / "current.json").is_file()]
        except OSError:
            return
        if not names:
            return

        wake, stop = self._wake, self._stop

        def job() -> dict[str, AnnGraph]:
            # A first search that needs no graph (a small user's scope, read from the file) runs alone
            # first: faiss's import holds the interpreter lock for ~27 ms (a recall issued at once took
            # ~50 ms instead of 27 beside it). A search that needs a graph wakes the opening at once.
            wake.wait(_WARM_DELAY)
            opened: dict[str, AnnGraph] = {}
            for name in names:
                files = self._files(name)
                shape = files.shape()
                graph = None if shape is None or stop.is_set() else _loaded(files, *shape)
                if graph is not None:
                    opened[name] = graph
            return opened

        self._warming = self._executor().submit(job)

    def _map_in(self, graph: AnnGraph) -> None:
        """Map in the pages of a persisted graph's vectors in the background, once, after the first search
        that used it (``ann_faiss.map_in``; during it, the two would contend for the same pages): the
        searches after it take no page faults. Not at start: a store whose searches all stay below the
        threshold (many small users) never maps the graph."""
        if graph.mapped_in or not graph.build:
            return
        graph.mapped_in = True
        stop = self._stop
        # The job holds the graph, so its mapping stays while the job runs (a newer build may replace it).
        self._executor().submit(lambda: map_in(graph.stored(), stop))

    def _warmed(self) -> None:
        """Take the graphs :meth:`warm` opened (waiting for them, bounded) where none is held yet."""
        warming, self._warming = self._warming, None
        self._wake.set()
        if warming is None:
            return
        try:
            opened = warming.result(timeout=_WARM_WAIT)
        except Exception:  # a graph that failed to open is opened (or not) by the search itself
            logger.debug("sqlite store: opening approximate indexes in the background failed", exc_info=True)
            return
        for name, graph in opened.items():
            if self._graphs.get(name) is None and name not in self._futures:
                self._graphs[name] = graph

    def _files(self, name: str) -> GraphFiles:
        return GraphFiles(Path(f"{self._path}.ann") / name)

    def forget(self, name: str) -> None:
        """The index was deleted: drop its graph and files."""
        self._graphs.pop(name, None)
        self._logs.pop(name, None)
        self._persisted.discard(name)
        if not self.in_memory:
            shutil.rmtree(self._files(name).root, ignore_errors=True)

    def touched(self, name: str, seqs: npt.NDArray[np.int64], before: str, after: str) -> None:
        """Our own write changed the rows ``seqs`` and the registry generation from ``before`` to ``after``
        (same transaction as the snapshot patch)."""
        graph = self._graphs.get(name)
        if graph is not None and graph.snapshot is not None and seqs.size:  # else the next attach is whole
            graph.touched.append(seqs)
        if self.has_graph(name):  # the changes since its build: the direct route needs every one
            self._logs.setdefault(name, ChangeLog()).record(before, after, seqs)

    def has_graph(self, name: str) -> bool:
        """Whether a graph of ``name`` exists or is being built (one ``stat`` per write until it does)."""
        if name in self._persisted or self._graphs.get(name) is not None or name in self._futures:
            return True
        if not self.in_memory and (self._files(name).root / "current.json").exists():
            self._persisted.add(name)
            return True
        return False

    def direct(self, name: str, q: DirectQuery) -> Answer | None:
        """The search through the persisted graph with the rows read from the file, for a store that has
        not loaded the index (``ann_direct.py``); None where the snapshot route must answer: no persisted
        graph, writes since its build not all known or too many, or a filter too narrow."""
        found = self._direct_graph(name, q)
        if found is None or found[0].size < self.threshold:
            return None
        answer = direct_search(q, *found)
        self._map_in(found[0])
        return answer

    def direct_scope(self, name: str, q: DirectQuery, scope: tuple[str, str]) -> Answer | None:
        """The exact top ``k`` of one scope below the threshold (``scope``: the SQL of the key's expression
        index, the value), scored from the persisted graph's vectors (``ann_direct.scope_search``) instead of
        a scope snapshot read from the file; None where that is not possible."""
        if q.metric == "euclidean":
            return None  # the graph holds raw vectors there; only inner products are scored from it
        found = self._direct_graph(name, q)
        if found is None:
            return None
        answer = scope_search(q, *found, scope)
        self._map_in(found[0])
        return answer

    def _direct_graph(self, name: str, q: DirectQuery) -> tuple[AnnGraph, Changes] | None:
        """The persisted graph and every change since its build, when both are known (``ann_direct.py``);
        None where the snapshot route must answer: no graph on disk, changes since its build not all this
        store's own, or too many to read on every search."""
        if self.in_memory or not self.has_graph(name) or not self.usable():
            return None  # (the stat first: no faiss import for a store that never had a graph)
        graph = self.graph(name, q.dimension, q.metric)
        if graph is None or not graph.build:
            return None
        log = self._logs.setdefault(name, ChangeLog())
        folder = self._files(name).root / graph.build
        changes = log.resolve(graph.build, graph.generation, folder, q.generation)
        if changes is None or changes.seqs.size > max(10_000, graph.size // 10):
            return None  # the snapshot route checks every position, then extends the graph
        if changes.seqs.size > max(1_000, graph.size // 1_000):
            # Changed rows are read on every search (~5 µs each): add them to the graph in the background.
            self._start_file_job(
                name, q.table, q.registry, graph, changes.seqs, graph.dimension, graph.metric
            )
        return graph, changes

    def installed(self) -> bool:
        """Whether faiss can be imported, without importing it (27 ms from bytecode, 0.12 s from source: paid
        by the first search that uses a graph, not by each scoped search that only asks whether one could)."""
        if self._installed is None:
            self._installed = importlib.util.find_spec("faiss") is not None
        return self._installed

    def usable(self) -> bool:
        if faiss_available():
            return True
        if not self._warned:
            self._warned = True
            logger.warning(
                "sqlite store: searches over %d+ rows stay exact; install mastra-memory[ann] (faiss-cpu) for "
                "the approximate index",
                self.threshold,
            )
        return False

    def graph(self, name: str, dimension: int, metric: Metric) -> AnnGraph | None:
        """The graph of ``name`` (a finished background build swapped in, or the persisted one loaded)."""
        if self._warming is not None:
            self._warmed()
        future = self._futures.get(name)
        if future is not None and future.done():
            del self._futures[name]
            try:
                built = future.result()
            except _Stopped:
                built = None
            except Exception:  # a failed build leaves the exact route; logged, retried on a later search
                logger.exception("sqlite store: building the approximate index of %r failed", name)
                built = None
            if built is not None:
                self._graphs[name] = built
        graph = self._graphs.get(name)
        if graph is not None and (graph.dimension != dimension or graph.metric != metric):
            self._graphs[name] = graph = None
        if not self.in_memory and name not in self._futures:
            current = self._files(name).current()
            if current is not None and (graph is None or current[0] != graph.build):
                # First use, or another process published a newer build.
                newer = _loaded(self._files(name), dimension, metric)
                if newer is not None:
                    self._graphs[name] = graph = newer
        return graph

    def search(
        self,
        name: str,
        table: str,
        registry: str,
        snapshot: Snapshot,
        rows: npt.NDArray[np.int64],
        vector: npt.NDArray[np.float64],
        k: int,
        metric: Metric,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]] | None:
        """The top ``k`` of ``rows`` through the graph (exactly scored), or None for the exact route."""
        # Even when top_k is most of the rows, the graph route stays correct (it then fetches every allowed
        # position): with a low threshold, the conformance kit runs through it.
        if rows.size < self.threshold or not self.usable():
            return None
        graph = self.graph(name, snapshot.matrix.shape[1], metric)
        if graph is not None:
            graph.attach(snapshot)
            stale = int(np.count_nonzero(graph.bad))
            if graph.outside.size > max(10_000, snapshot.n // 10) or stale > graph.size // 4:
                base = graph if stale <= graph.size // 4 else None  # mostly stale: rebuilt
                self._start(name, table, registry, snapshot, metric, base)
        else:
            self._start(name, table, registry, snapshot, metric, None)
            return None  # exact until the graph is ready
        slots = graph.candidates(snapshot, rows, vector, k)
        self._map_in(graph)
        scores = exact_scores(snapshot, slots, vector, metric)
        return top_k_rows(slots, scores, snapshot.ids, k)

    # --- building ------------------------------------------------------------------------------------

    def build(
        self, name: str, table: str, registry: str, snapshot: Snapshot, metric: Metric
    ) -> Future[AnnGraph | None] | None:
        """Build (or extend) the graph of ``name`` now: the future of the build (None when the graph
        already holds every row as it is)."""
        current = self.graph(name, snapshot.matrix.shape[1], metric) if faiss_available() else None
        if current is not None:
            current.attach(snapshot)
            if current.outside.size == 0 and name not in self._futures:
                return None
            if int(np.count_nonzero(current.bad)) > current.size // 4:
                current = None
        return self._start(name, table, registry, snapshot, metric, current, force=True)

    def _start(
        self,
        name: str,
        table: str,
        registry: str,
        snapshot: Snapshot,
        metric: Metric,
        base: AnnGraph | None,
        force: bool = False,
    ) -> Future[AnnGraph | None] | None:
        if name in self._futures:
            return self._futures[name]
        dimension = snapshot.matrix.shape[1]
        if not self.background and not force:
            return None
        if self.in_memory:
            return self._submit(name, self._memory_job(snapshot, base, dimension, metric))
        touched = np.zeros(0, dtype=np.int64) if base is None else base.seqs[base.bad]
        return self._start_file_job(name, table, registry, base, touched, dimension, metric, force=True)

    def _start_file_job(
        self,
        name: str,
        table: str,
        registry: str,
        base: AnnGraph | None,
        touched: npt.NDArray[np.int64],
        dimension: int,
        metric: Metric,
        force: bool = False,
    ) -> Future[AnnGraph | None] | None:
        """Build (``base`` None) or extend ``base`` with the rows after its last seq and the ``touched``
        ones it holds, read from the file on a connection of its own, in the background."""
        if name in self._futures:
            return self._futures[name]
        if not self.background and not force:
            return None
        after = -1 if base is None else int(base.seqs.max(initial=-1))
        extra = np.unique(touched[touched <= after])
        files = self._files(name)

        def job() -> AnnGraph | None:
            lock = files.lock()
            if lock is None:
                return None  # another process is building; its graph is picked up when published
            try:
                generation, chunks = read_rows(self._path, table, registry, name, after, extra)
                if base is not None:
                    # An owned copy to add to (a memory-mapped graph cannot grow).
                    loaded = _loaded(files, dimension, metric)
                    if loaded is None or loaded.build != base.build:
                        return None
                    faiss = faiss_module()

                    loaded.graph = faiss.read_index(str(files.root / base.build / "graph.faiss"))
                    return self._extend(loaded, chunks, generation, dimension, metric, files)
                return self._extend(None, chunks, generation, dimension, metric, files)
            finally:
                lock.close()

        return self._submit(name, job)

    def _memory_job(
        self, snapshot: Snapshot, base: AnnGraph | None, dimension: int, metric: Metric
    ) -> Callable[[], AnnGraph | None]:
        """No other connection can read a private database: the build reads copies of the snapshot's rows
        taken now (on the store's thread) and grows a copy of the graph, which searches keep using."""
        slots = snapshot.live_slots() if base is None else base.outside
        chunk = (snapshot.seqs[slots].copy(), snapshot.matrix[slots])  # fancy indexing: copies
        generation = snapshot.generation

        def job() -> AnnGraph | None:
            start = None
            if base is not None:
                graph = faiss_module().clone_index(base.graph)
                start = AnnGraph(graph, base.seqs, dimension, metric, base.generation)
            return self._extend(start, [chunk], generation, dimension, metric, None)

        return job

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mastra-sqlite-ann")
        return self._pool

    def _submit(self, name: str, job: Callable[[], AnnGraph | None]) -> Future[AnnGraph | None]:
        future = self._executor().submit(job)
        self._futures[name] = future
        return future

    def _extend(
        self,
        base: AnnGraph | None,
        chunks: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]],
        generation: str,
        dimension: int,
        metric: Metric,
        files: GraphFiles | None,
    ) -> AnnGraph:
        graph = new_graph(dimension, metric) if base is None else base.graph
        parts = [base.seqs] if base is not None else []
        for seqs, block in chunks:
            for start in range(0, seqs.size, _ADD_CHUNK):
                if self._stop.is_set():
                    raise _Stopped
                graph.add(prepared(block[start : start + _ADD_CHUNK], metric))
            parts.append(np.asarray(seqs, dtype=np.int64))
        seqs_all = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        built = AnnGraph(graph, seqs_all, dimension, metric, generation)
        if files is not None:
            built.build = files.publish(graph, seqs_all, generation, dimension, metric)
            # Serve the published file memory-mapped (the build's own copy is released).
            mapped = _loaded(files, dimension, metric)
            if mapped is not None:
                built = mapped
        with self._guard:
            self.builds += 1
        where = files.root if files is not None else "in memory"
        logger.info("approximate index built: %d positions (%s)", built.size, where)
        return built
