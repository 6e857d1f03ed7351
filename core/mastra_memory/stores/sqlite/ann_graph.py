"""One HNSW graph of the SQLite store's approximate route (``ann.py``) and how its positions map onto a
snapshot: which positions still hold a live row's current vector, the rows it does not hold, and the
candidates of a filtered search (restricted inside faiss). ``ann_direct.py`` uses the same graph without a
snapshot."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ...capabilities import Metric
from .ann_direct import ScopePositions
from .ann_faiss import EF_MAX, faiss_module, prepared, search_list, searching
from .snapshot import FLOAT32, Snapshot

__all__ = ["AnnGraph"]

# Stored graph vectors within this of the snapshot's (after the same normalisation) count as the same.
_SAME_VECTOR: Final = 1e-5


@dataclass(eq=False)
class AnnGraph:
    """One HNSW graph: position ``p`` holds the vector of row ``seqs[p]`` as it was when added."""

    graph: Any
    seqs: npt.NDArray[np.int64]
    dimension: int
    metric: Metric
    generation: str  # the registry generation of the rows it was built from
    build: str = ""  # the build directory's name ("" in memory only)
    # The mapping onto one snapshot (recomputed when the snapshot or its generation changes).
    snapshot: Snapshot | None = field(default=None, repr=False)
    mapped_generation: str = ""
    mapped_layout: int = -1
    order: npt.NDArray[np.int64] | None = None  # positions by seq (built on first use)
    ordered: npt.NDArray[np.int64] | None = None  # seqs[order], kept by positions_of
    bad: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=np.bool_))
    slots: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    covered: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=np.bool_))
    outside: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    touched: list[npt.NDArray[np.int64]] = field(default_factory=list)
    scopes: ScopePositions = field(default_factory=ScopePositions, repr=False)  # ann_direct.scope_search
    mapped_in: bool = False  # AnnRoute._map_in asked for

    @property
    def size(self) -> int:
        return int(self.seqs.size)

    def stored(self) -> npt.NDArray[np.float32]:
        """The graph's vectors (a view of its storage, memory-mapped when loaded from a file)."""
        faiss = faiss_module()

        storage = faiss.downcast_index(self.graph.storage)
        flat = faiss.rev_swig_ptr(storage.get_xb(), self.size * self.dimension)
        return np.asarray(flat).reshape(self.size, self.dimension)

    def attach(self, snapshot: Snapshot) -> None:
        """Map positions onto ``snapshot``'s slots: which positions still hold a live row's current vector
        (``bad`` otherwise), and the live slots no good position covers (``outside``)."""
        if snapshot is self.snapshot and snapshot.generation == self.mapped_generation:
            return
        if snapshot is self.snapshot and snapshot.layout == self.mapped_layout:
            self._patch(snapshot)
            return
        slots = snapshot.find(self.seqs) if self.size else np.zeros(0, dtype=np.int64)
        if snapshot is self.snapshot:
            # Same snapshot: every change since was our own write, which listed the seqs it touched.
            bad = self.bad | (slots < 0)
            if self.touched:
                bad |= np.isin(self.seqs, np.concatenate(self.touched))
        else:
            bad = slots < 0
            if snapshot.generation != self.generation:
                bad |= ~self._same_vectors(snapshot, slots)
        self.touched = []
        self.bad = bad
        self.slots = np.where(bad, -1, slots)
        covered = np.zeros(snapshot.n, dtype=np.bool_)
        covered[self.slots[~bad]] = True
        self.covered = covered
        self.outside = np.flatnonzero(~covered & snapshot.live[: snapshot.n]).astype(np.int64)
        self.snapshot = snapshot
        self.mapped_generation = snapshot.generation
        self.mapped_layout = snapshot.layout

    def _patch(self, snapshot: Snapshot) -> None:
        """:meth:`attach` after our own writes that renumbered no slot: only the touched seqs change (their
        positions go bad, their live slots are outside the graph); O(touched · log n), not O(n)."""
        touched = np.unique(np.concatenate(self.touched)) if self.touched else np.zeros(0, dtype=np.int64)
        self.touched = []
        if touched.size and self.size:
            if self.order is None:
                self.order = np.argsort(self.seqs, kind="stable").astype(np.int64)
            ordered = self.seqs[self.order]
            lo = np.searchsorted(ordered, touched, side="left")
            hi = np.searchsorted(ordered, touched, side="right")
            counts = hi - lo
            total = int(counts.sum())
            if total:
                offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
                positions = self.order[np.repeat(lo, counts) + offsets]
                old = self.slots[positions]
                self.covered[old[old >= 0]] = False
                self.bad[positions] = True
                self.slots[positions] = -1
        if self.covered.size < snapshot.n:  # appended slots
            self.covered = np.concatenate(
                [self.covered, np.zeros(snapshot.n - self.covered.size, dtype=np.bool_)]
            )
        live = snapshot.live
        kept = self.outside[(self.outside < snapshot.n)]
        kept = kept[live[kept]]
        found = snapshot.find(touched) if touched.size else touched
        found = found[found >= 0]
        found = found[~self.covered[found]]
        self.outside = np.unique(np.concatenate([kept, found]))
        self.mapped_generation = snapshot.generation

    def _same_vectors(self, snapshot: Snapshot, slots: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        """Per position, whether the snapshot's row holds the vector the graph was given (chunked)."""
        same = np.zeros(self.size, dtype=np.bool_)
        stored = self.stored()
        for start in range(0, self.size, 8192):
            part = slots[start : start + 8192]
            found = part >= 0
            rows = prepared(snapshot.matrix[part[found]], self.metric)
            diff = np.abs(stored[start : start + part.size][found] - rows).max(axis=1, initial=0.0)
            chunk = np.zeros(part.size, dtype=np.bool_)
            chunk[found] = diff <= _SAME_VECTOR
            same[start : start + part.size] = chunk
        return same

    def positions_of(self, seqs: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
        """The newest position of each seq (an extension re-adds an updated row after its old position),
        or None if one is not in the graph."""
        if self.order is None:
            # Saved with the build (ann_files.py); a graph in seq order needs no sort either.
            ascending = bool(np.all(self.seqs[1:] > self.seqs[:-1]))
            order = np.arange(self.size) if ascending else np.argsort(self.seqs, kind="stable")
            self.order = order.astype(np.int64)
        if self.ordered is None:
            self.ordered = self.seqs[self.order]
        ordered = self.ordered
        at = np.searchsorted(ordered, seqs, side="right") - 1
        if seqs.size and (at.min() < 0 or not np.array_equal(ordered[at], seqs)):
            return None
        found: npt.NDArray[np.int64] = self.order[at]
        return found

    def nearest(self, vector: npt.NDArray[np.float64], fetch: int) -> npt.NDArray[np.int64]:
        """Positions of the ``fetch`` best matches of ``vector`` in the whole graph (no filter)."""
        faiss = searching()

        query = prepared(vector.astype(FLOAT32).reshape(1, -1), self.metric)
        params = faiss.SearchParametersHNSW(efSearch=search_list(self.size, fetch))
        _, labels = self.graph.search(query, fetch, params=params)
        found: npt.NDArray[np.int64] = labels[0][labels[0] >= 0].astype(np.int64)
        return found

    def candidates(
        self, snapshot: Snapshot, rows: npt.NDArray[np.int64], vector: npt.NDArray[np.float64], k: int
    ) -> npt.NDArray[np.int64]:
        """Slots to score exactly: the graph's best matches among ``rows`` plus every row of ``rows`` the
        graph does not hold (ascending, distinct)."""
        faiss = searching()

        self.attach(snapshot)
        everything = rows.size == snapshot.n - snapshot.dead
        if everything:
            outside = self.outside
            allowed = ~self.bad
        else:
            wanted = np.zeros(snapshot.n, dtype=np.bool_)
            wanted[rows] = True
            outside = self.outside[wanted[self.outside]]
            allowed = ~self.bad & wanted[np.maximum(self.slots, 0)]
        selected = int(np.count_nonzero(allowed)) if not everything or self.bad.any() else self.size
        parts = [outside]
        if selected:
            fetch = min(max(4 * k, 40), selected)
            # A narrower filter leaves fewer matching neighbours per visited node: widen the list.
            ef = min(EF_MAX, search_list(self.size, fetch) * max(1, -(-self.size // selected)))
            query = prepared(vector.astype(FLOAT32).reshape(1, -1), self.metric)
            if selected == self.size:
                params = faiss.SearchParametersHNSW(efSearch=ef)
            else:
                bits = np.packbits(allowed, bitorder="little")
                params = faiss.SearchParametersHNSW(
                    sel=faiss.IDSelectorBitmap(self.size, faiss.swig_ptr(bits)), efSearch=ef
                )
            _, labels = self.graph.search(query, fetch, params=params)
            found = labels[0][labels[0] >= 0]
            parts.append(self.slots[found])
        return np.unique(np.concatenate(parts))
