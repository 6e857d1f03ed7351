"""The approximate route without a snapshot: the graph searched with its rows read from the file (issue 28).

Why. The snapshot route (``ann.py``) needs the whole index in memory: at a million rows that is 1.5 GB of
float32 read before the first answer (12–25 s here). While no snapshot is loaded, a search over a scope at
or above the threshold can instead ask the memory-mapped graph for candidates and read only those rows —
their vectors to score exactly, their metadata to apply the filter in SQL — so the first recall after a
start costs milliseconds and the process holds the graph's links, not the matrix (docs/performance.md).

Exactness of what is returned: as on the snapshot route, only recall is approximate.

* The filter is the store's exact SQL translation, applied to every candidate row read; the tenant scope
  is part of it, so a foreign row never comes back.
* A graph position names the row ``seq`` it was built from. It stands for that row's current vector only
  while nothing wrote the row since the build, so this route runs only while *every* write since the
  build is known (:class:`Changes`): the graph was built at the registry's current generation, or each
  write since was this store's own (they list the seqs they touched), or a previous process saved that
  list on close (``<build>/changes.json``, valid only for the generation it names). Touched rows are read
  and scored from the file whatever the graph says; any other writer's change breaks the chain and the
  snapshot route answers instead (it checks every position against the file's vectors).
* Candidates are fetched without a filter inside the graph (the filter is in SQL here) and widened until
  ``2·k`` of them pass it; a filter too narrow for that within ``_MAX_FETCH`` candidates goes to the
  snapshot route, which restricts the graph search to the matching rows.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol, TypeAlias

import numpy as np
import numpy.typing as npt

from ...capabilities import Metric
from .ann_faiss import prepared
from .search import exact_scores, top_k_rows
from .snapshot import FLOAT32, Snapshot

__all__ = [
    "Answer",
    "ChangeLog",
    "Changes",
    "DirectQuery",
    "Graph",
    "ScopePositions",
    "direct_search",
    "scope_search",
]

#: A direct route's answer: a small snapshot of the rows read, the chosen slots in it, their exact scores.
Answer: TypeAlias = tuple[Snapshot, npt.NDArray[np.int64], npt.NDArray[np.float64]]

# Candidates asked of the graph at most before the snapshot route is preferred (a narrow filter).
_MAX_FETCH: Final = 4096
# Scores from the graph's float32 vectors (unit length for cosine) are within ~1e-6 (relative) of the exact
# ones: every row within this of the k-th best is scored again from the file, so rounding and ties never
# change the answer.
_ROUNDING: Final = 1e-4
# Positions of searched scopes a graph keeps (8 bytes each: 16 MB; 100 threads of 20,000 rows).
_SCOPE_POSITIONS: Final = 2_000_000
# Positions per run, on average, from which a scope is scored run by run (slices) rather than gathered.
_RUN: Final = 64
# Changed rows followed at most (the direct routes stop long before: max(10,000, 10 %) of the graph).
_MAX_CHANGES: Final = 1_000_000
# Writes remembered to connect a newly published graph's generation to the registry's.
_LOG_ENTRIES: Final = 10_000


@dataclass(frozen=True)
class DirectQuery:
    """One search as the direct routes take it, inside the store's read transaction on ``conn``."""

    conn: sqlite3.Connection
    table: str
    registry: str
    generation: str  # the registry generation read in this transaction
    dimension: int
    metric: Metric
    vector: npt.NDArray[np.float64]
    k: int
    where: str  # the filter's SQL ("" for none) and its parameters
    params: dict[str, Any]

    def read(self, seqs: npt.NDArray[np.int64], *, filtered: bool = True) -> list[tuple[int, str, bytes]]:
        """(seq, id, vector) of the rows among ``seqs`` that the filter keeps (every one: ``filtered``
        off)."""
        sql = (
            f"SELECT seq, id, vector FROM {self.table} WHERE seq IN (SELECT value FROM json_each(:ann_seqs))"
        )
        params = {"ann_seqs": json.dumps(seqs.tolist())}
        if filtered and self.where:
            sql += f" AND ({self.where})"
            params |= self.params
        return list(self.conn.execute(sql, params))

    def ranked(self, rows: list[tuple[int, str, bytes]], generation: str) -> Answer:
        """The rows read as a small snapshot, and its top ``k`` by exact score (``search.py``)."""
        rows = sorted(set(rows), key=lambda row: row[0])  # a changed row may also be a candidate
        seqs = np.fromiter((seq for seq, _, _ in rows), dtype=np.int64, count=len(rows))
        blobs = b"".join(blob for _, _, blob in rows)
        matrix = np.frombuffer(blobs, dtype=FLOAT32).reshape(len(rows), self.dimension)
        small = Snapshot(generation, seqs, [rid for _, rid, _ in rows], matrix)
        slots = np.arange(len(rows), dtype=np.int64)
        chosen, scores = top_k_rows(
            slots, exact_scores(small, slots, self.vector, self.metric), small.ids, self.k
        )
        return small, chosen, scores


class ScopePositions:
    """The graph positions of recently searched scopes, each valid for the registry generation it was found
    at (a write changes the generation; its rows are then read from the file: :class:`Changes`). Finding
    them reads the key's expression index and sorts (about 3.5 ms for a 20,000-row thread at 1M rows);
    scoring the scope from the graph then takes about 4 ms."""

    def __init__(self, budget: int = _SCOPE_POSITIONS) -> None:
        self.budget = budget
        self._held: OrderedDict[tuple[str, str], tuple[str, npt.NDArray[np.int64]]] = OrderedDict()
        self._size = 0

    def get(self, scope: tuple[str, str], generation: str) -> npt.NDArray[np.int64] | None:
        found = self._held.get(scope)
        if found is None or found[0] != generation:
            return None
        self._held.move_to_end(scope)
        return found[1]

    def put(self, scope: tuple[str, str], generation: str, positions: npt.NDArray[np.int64]) -> None:
        old = self._held.pop(scope, None)
        if old is not None:
            self._size -= old[1].size
        self._held[scope] = (generation, positions)
        self._size += positions.size
        while self._size > self.budget and len(self._held) > 1:
            _, (_, dropped) = self._held.popitem(last=False)
            self._size -= dropped.size


class Graph(Protocol):
    """What the direct route needs of a graph (``ann.AnnGraph``): position ``p`` holds row ``seqs[p]``."""

    seqs: npt.NDArray[np.int64]
    dimension: int
    scopes: ScopePositions

    @property
    def size(self) -> int: ...

    def nearest(self, vector: npt.NDArray[np.float64], fetch: int) -> npt.NDArray[np.int64]: ...

    def positions_of(self, seqs: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None: ...

    def stored(self) -> npt.NDArray[np.float32]: ...


@dataclass
class Changes:
    """Every seq written since the graph ``build`` was built, up to the registry ``generation``."""

    build: str
    generation: str
    seqs: npt.NDArray[np.int64]  # ascending, distinct

    def save(self, folder: Path) -> None:
        """``changes.json`` in the build's folder (replaced atomically); a missing folder is ignored."""
        tmp = folder / f"changes.{os.getpid()}.tmp"
        try:
            tmp.write_text(json.dumps({"generation": self.generation, "seqs": self.seqs.tolist()}))
            os.replace(tmp, folder / "changes.json")
        except OSError:
            tmp.unlink(missing_ok=True)

    @staticmethod
    def saved(folder: Path, build: str) -> Changes | None:
        try:
            meta = json.loads((folder / "changes.json").read_text())
            seqs = np.unique(np.asarray(meta["seqs"], dtype=np.int64))
            return Changes(build, str(meta["generation"]), seqs)
        except (OSError, ValueError, KeyError, TypeError):
            return None


class ChangeLog:
    """This store's own writes of one index, as generation steps: ``before -> (after, seqs touched)``."""

    def __init__(self) -> None:
        self._steps: OrderedDict[str, tuple[str, npt.NDArray[np.int64]]] = OrderedDict()
        self.current: Changes | None = None
        self.last = ""  # the generation our latest write left

    def record(self, before: str, after: str, seqs: npt.NDArray[np.int64]) -> None:
        self._steps[before] = (after, seqs)
        self.last = after
        if len(self._steps) > _LOG_ENTRIES:
            self._steps.popitem(last=False)
        current = self.current
        if current is not None:
            if current.generation == before and current.seqs.size < _MAX_CHANGES:
                current.seqs = np.union1d(current.seqs, seqs)
                current.generation = after
            else:  # someone else wrote in between (the chain is broken), or far too many to read per search
                self.current = None

    def changes(self, build: str, start: str, seqs: npt.NDArray[np.int64], target: str) -> Changes | None:
        """The changes from generation ``start`` (with ``seqs`` already changed) to ``target`` along our own
        writes, or None when a step is not ours (another writer) or no longer remembered."""
        parts, generation = [seqs], start
        while generation != target:
            step = self._steps.get(generation)
            if step is None:
                return None
            generation, touched = step
            parts.append(touched)
        if not any(part.size for part in parts):  # the common case at start: nothing to sort
            return Changes(build, target, np.zeros(0, dtype=np.int64))
        return Changes(build, target, np.unique(np.concatenate(parts)))

    def resolve(self, build: str, graph_generation: str, folder: Path | None, target: str) -> Changes | None:
        """The changes since the graph ``build`` (built at ``graph_generation``) up to ``target``, or None
        when they are not all known."""
        current = self.current
        if current is not None and current.build == build and current.generation == target:
            return current
        found = self.changes(build, graph_generation, np.zeros(0, dtype=np.int64), target)
        if found is None and folder is not None:
            saved = Changes.saved(folder, build)
            if saved is not None:
                found = self.changes(build, saved.generation, saved.seqs, target)
        self.current = found
        return found


def direct_search(q: DirectQuery, graph: Graph, changes: Changes) -> Answer | None:
    """The top ``k`` rows matching the filter through the graph and the file: a small snapshot of the rows
    read, the chosen slots in it and their exact scores; None when the filter is too narrow for the
    unfiltered graph search (the caller takes the snapshot route)."""
    changed = changes.seqs
    rows = q.read(changed) if changed.size else []
    fetch = min(max(4 * q.k, 40), graph.size)
    while True:
        found = graph.seqs[graph.nearest(q.vector, fetch)]
        if changed.size:
            found = found[~np.isin(found, changed)]  # read above, as they are now
        kept = q.read(found)
        if len(kept) >= 2 * q.k or fetch >= graph.size:
            break
        if fetch >= _MAX_FETCH:
            return None
        fetch = min(fetch * 4, _MAX_FETCH, graph.size)
    return q.ranked(rows + kept, changes.generation)


def scope_search(q: DirectQuery, graph: Graph, changes: Changes, scope: tuple[str, str]) -> Answer | None:
    """The exact top ``k`` of a scope: its seqs from the key's expression index alone (no row read), each
    scored from the graph's memory-mapped vector of that seq, then the rows within rounding of the k-th
    best (and every changed row of the scope) read and scored exactly. A scope snapshot would read every
    row of the scope from the file instead (20,000 rows: ~0.2 s at 1M rows here). None if a seq is
    missing from the graph (never expected while every change is known)."""
    changed = changes.seqs
    ordered = graph.scopes.get(scope, q.generation)
    if ordered is None:
        expression, value = scope
        # One aggregated value, not a Python row per seq (20,000 rows: ~1 ms against ~17 ms).
        sql = f"SELECT json_group_array(seq) FROM {q.table} WHERE {expression} = ?"
        (listed,) = q.conn.execute(sql, (value,)).fetchone()
        seqs = np.asarray(json.loads(listed), dtype=np.int64)
        if changed.size:
            seqs = seqs[~np.isin(seqs, changed)]  # read below, as they are now
        positions = graph.positions_of(np.sort(seqs))
        if positions is None:
            return None
        ordered = np.sort(positions)
        graph.scopes.put(scope, q.generation, ordered)
    rows = q.read(changed) if changed.size else []
    if ordered.size:
        query = prepared(q.vector.astype(FLOAT32).reshape(1, -1), q.metric)[0]
        approx = _scored(graph.stored(), ordered, query)
        keep = np.ones(approx.size, dtype=np.bool_)
        if approx.size > q.k:
            kth = np.partition(approx, approx.size - q.k)[approx.size - q.k]
            keep = approx >= kth - _ROUNDING * max(1.0, abs(float(kth)))
        rows += q.read(graph.seqs[ordered][keep], filtered=False)
    return q.ranked(rows, changes.generation)


def _scored(
    stored: npt.NDArray[np.float32], positions: npt.NDArray[np.int64], query: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """``stored[positions] @ query`` for ascending ``positions``. A first build groups each scope's rows
    (``ann_files.CLUSTER_KEYS``): its runs of consecutive positions are scored as slices of the mapping, not
    gathered row by row into a copy."""
    breaks = np.flatnonzero(np.diff(positions) != 1) + 1
    if breaks.size > positions.size // _RUN:
        scores: npt.NDArray[np.float32] = stored[positions] @ query
        return scores
    starts = np.concatenate(([0], breaks))
    ends = np.concatenate((breaks, [positions.size]))
    runs = [stored[positions[a] : positions[b - 1] + 1] @ query for a, b in zip(starts, ends, strict=True)]
    return np.concatenate(runs)
