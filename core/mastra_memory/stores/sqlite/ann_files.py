"""The SQLite store's approximate index on disk (``ann.py``): ``<file>.ann/<index>/``, the rows a build reads.

``current.json`` names the current build directory (replaced atomically), which holds ``graph.faiss`` and
``seqs.npy`` (and, saved by a closing store, ``changes.json``: ``ann_direct.py``); ``build.lock`` lets one
process build at a time.
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
from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt

from ...capabilities import Metric
from .ann_faiss import faiss_module
from .snapshot import FLOAT32

__all__ = ["BUILD_CHUNK", "GraphFiles", "Stored", "read_rows"]

#: Rows read (and added) per chunk by a build.
BUILD_CHUNK: Final = 20_000


class Stored(NamedTuple):
    """A persisted build: the faiss graph (vectors memory-mapped), its seqs, generation and name."""

    index: Any
    seqs: npt.NDArray[np.int64]
    generation: str
    build: str


@dataclass
class GraphFiles:
    """``<file>.ann/<index>/``: ``current.json`` naming the build directory, and ``build.lock``."""

    root: Path

    def current(self) -> tuple[str, str] | None:
        """(build, generation) of the current build, or None."""
        try:
            meta = json.loads((self.root / "current.json").read_text())
            return str(meta["build"]), str(meta["generation"])
        except (OSError, ValueError, KeyError, TypeError):
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

        try:
            meta = json.loads((self.root / "current.json").read_text())
            folder = self.root / str(meta["build"])
            if meta["dimension"] != dimension or meta["metric"] != metric:
                return None
            seqs = np.load(folder / "seqs.npy")
            graph = faiss.read_index(str(folder / "graph.faiss"), faiss.IO_FLAG_MMAP_IFC)
        except (OSError, ValueError, KeyError, TypeError, RuntimeError):
            return None
        if graph.ntotal != seqs.size or graph.d != dimension:
            return None
        return Stored(graph, seqs.astype(np.int64), str(meta["generation"]), str(meta["build"]))

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
    transaction on a connection of its own."""
    conn = sqlite3.connect(path, timeout=10.0)
    try:
        conn.execute("BEGIN")
        (generation,) = conn.execute(f"SELECT generation FROM {registry} WHERE name = ?", (name,)).fetchone()
        chunks: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]] = []
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
