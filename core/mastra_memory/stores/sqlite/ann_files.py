"""The SQLite store's approximate index on disk (``ann.py``): ``<file>.ann/<index>/``, the rows a build reads.

``current.json`` names the current build directory (replaced atomically), which holds ``graph.faiss``,
``seqs.npy`` and ``order.npy`` (and, saved by a closing store, ``changes.json``: ``ann_direct.py``);
``build.lock`` lets one process build at a time.

A first build adds the rows grouped by the scopes Memory recalls in (:data:`CLUSTER_KEYS`), so the vectors
of one user or one thread lie together in ``graph.faiss``: scoring a scope from them
(``ann_direct.scope_search``) reads one stretch of the mapping instead of a page per row (a 20,000-row
thread of a 1M-row user: about 4 ms against 7 ms with every page mapped, 90 ms against 560 ms from disk;
docs/performance.md).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sqlite3
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NamedTuple, cast

import numpy as np
import numpy.typing as npt

from ...capabilities import Metric
from .ann_faiss import faiss_module
from .scopes import value_sql
from .snapshot import FLOAT32
from .vector_rows import metadata_index_name

__all__ = ["BUILD_CHUNK", "CLUSTER_KEYS", "GraphFiles", "Stored", "read_rows"]

#: Rows read (and added) per chunk by a build.
BUILD_CHUNK: Final = 20_000
#: Metadata keys a first build orders the graph's positions by, coarsest first, each only where the index has
#: its metadata index: the scope filters of Memory's recall (docs/spec.md §5.3).
CLUSTER_KEYS: Final = ("resource_id", "thread_id")


class Stored(NamedTuple):
    """A persisted build: the faiss graph (vectors memory-mapped), its seqs, generation and name, and its
    positions in seq order (None for a build saved without them)."""

    index: Any
    seqs: npt.NDArray[np.int64]
    generation: str
    build: str
    order: npt.NDArray[np.int64] | None


@dataclass
class GraphFiles:
    """``<file>.ann/<index>/``: ``current.json`` naming the build directory, and ``build.lock``."""

    root: Path

    def _meta(self) -> dict[str, Any] | None:
        """``current.json`` as written by :meth:`publish`, or None (none yet, or unreadable)."""
        try:
            meta = json.loads((self.root / "current.json").read_text())
        except (OSError, ValueError):
            return None
        return meta if isinstance(meta, dict) else None

    def current(self) -> tuple[str, str] | None:
        """(build, generation) of the current build, or None."""
        meta = self._meta()
        try:
            return None if meta is None else (str(meta["build"]), str(meta["generation"]))
        except KeyError:
            return None

    def shape(self) -> tuple[int, Metric] | None:
        """(dimension, metric) of the current build, or None."""
        meta = self._meta()
        try:
            if meta is None or meta["metric"] not in ("cosine", "euclidean", "dotproduct"):
                return None
            return int(meta["dimension"]), cast(Metric, meta["metric"])
        except (KeyError, TypeError, ValueError):
            return None

    def publish(
        self, index: Any, seqs: npt.NDArray[np.int64], generation: str, dimension: int, metric: Metric
    ) -> str:
        """Save a graph (``index``: faiss; position ``p`` holds row ``seqs[p]``) as the current build: its
        name."""
        faiss = faiss_module()

        self.root.mkdir(parents=True, exist_ok=True)
        build = uuid.uuid4().hex
        folder = self.root / build
        folder.mkdir()
        faiss.write_index(index, str(folder / "graph.faiss"))
        np.save(folder / "seqs.npy", seqs)
        # Positions by seq, for finding a scope's positions (a clustered build is not in seq order; sorting
        # 1M seqs on a process's first scoped search took about 0.1 s).
        np.save(folder / "order.npy", np.argsort(seqs, kind="stable").astype(np.int64))
        meta = {"build": build, "generation": generation, "dimension": dimension}
        meta |= {"metric": metric, "count": int(seqs.size)}
        tmp = self.root / f"current.{build}.tmp"
        tmp.write_text(json.dumps(meta))
        os.replace(tmp, self.root / "current.json")
        for old in self.root.iterdir():  # earlier builds (a mapped file stays readable once unlinked)
            if old.is_dir() and old.name != build:
                shutil.rmtree(old, ignore_errors=True)
        return build

    def load(self, dimension: int, metric: Metric) -> Stored | None:
        """The current build, its graph memory-mapped, or None (none, another shape, unreadable)."""
        faiss = faiss_module()

        meta = self._meta()
        if meta is None:
            return None
        try:
            folder = self.root / str(meta["build"])
            if meta["dimension"] != dimension or meta["metric"] != metric:
                return None
            seqs = np.load(folder / "seqs.npy")
            graph = faiss.read_index(str(folder / "graph.faiss"), faiss.IO_FLAG_MMAP_IFC)
            order = np.load(folder / "order.npy") if (folder / "order.npy").exists() else None
        except (OSError, ValueError, KeyError, TypeError, RuntimeError):
            return None
        if graph.ntotal != seqs.size or graph.d != dimension:
            return None
        if order is not None:
            order = order.astype(np.int64) if order.shape == seqs.shape else None
        return Stored(graph, seqs.astype(np.int64), str(meta["generation"]), str(meta["build"]), order)

    def lock(self) -> Any:
        """An exclusive build lock, or None when another process holds it."""
        self.root.mkdir(parents=True, exist_ok=True)
        handle = open(self.root / "build.lock", "a+")  # noqa: SIM115 - held until the build ends
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return None
        return handle


def read_rows(
    path: str, table: str, registry: str, name: str, after: int, extra: npt.NDArray[np.int64]
) -> tuple[str, list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]]:
    """(generation, chunks of (seqs, vectors)) of the rows with seq > ``after`` or in ``extra``, read in one
    transaction on a connection of its own: a first build's (``after`` < 0) grouped by :data:`CLUSTER_KEYS`,
    an extension's in seq order (appended after the groups)."""
    conn = sqlite3.connect(path, timeout=10.0)
    try:
        conn.execute("BEGIN")
        (generation,) = conn.execute(f"SELECT generation FROM {registry} WHERE name = ?", (name,)).fetchone()
        chunks: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]] = []
        grouped = _grouped(conn, table, name) if after < 0 and not extra.size else None
        if grouped is not None:
            for start in range(0, grouped.size, BUILD_CHUNK):
                chunks.append(_rows_of(conn, table, grouped[start : start + BUILD_CHUNK]))
            conn.execute("COMMIT")
            return str(generation), chunks
        queries: list[tuple[str, tuple[Any, ...]]] = [("seq > ?", (int(after),))]
        if extra.size:  # rows the graph holds with an older vector: added again
            listed = json.dumps([int(s) for s in extra])
            queries.append(("seq IN (SELECT value FROM json_each(?))", (listed,)))
        for where, params in queries:
            cursor = conn.execute(f"SELECT seq, vector FROM {table} WHERE {where} ORDER BY seq", params)
            while batch := cursor.fetchmany(BUILD_CHUNK):
                seqs = np.fromiter((s for s, _ in batch), dtype=np.int64, count=len(batch))
                block = np.frombuffer(b"".join(v for _, v in batch), dtype=FLOAT32).reshape(len(batch), -1)
                chunks.append((seqs, block))
        conn.execute("COMMIT")
        return str(generation), chunks
    finally:
        conn.close()


def _grouped(conn: sqlite3.Connection, table: str, name: str) -> npt.NDArray[np.int64] | None:
    """Every seq, ordered by the :data:`CLUSTER_KEYS` that have their metadata index, then by seq; None when
    none has one (the rows are read in seq order)."""
    keys = [key for key in CLUSTER_KEYS if _has_index(conn, metadata_index_name(name, key))]
    if not keys:
        return None
    order = ", ".join(value_sql(key) for key in keys)
    cursor = conn.execute(f"SELECT seq FROM {table} ORDER BY {order}, seq")
    return np.fromiter((seq for (seq,) in cursor), dtype=np.int64)


def _has_index(conn: sqlite3.Connection, index: str) -> bool:
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (index.strip('"'),))
    return found.fetchone() is not None


def _rows_of(
    conn: sqlite3.Connection, table: str, seqs: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """(``seqs``, their vectors in that order): read in seq order, then put in the order asked."""
    listed = json.dumps(np.sort(seqs).tolist())
    sql = f"SELECT seq, vector FROM {table} WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY seq"
    rows = conn.execute(sql, (listed,)).fetchall()
    found = np.fromiter((s for s, _ in rows), dtype=np.int64, count=len(rows))
    block = np.frombuffer(b"".join(v for _, v in rows), dtype=FLOAT32).reshape(len(rows), -1)
    return seqs, block[np.searchsorted(found, seqs)]
