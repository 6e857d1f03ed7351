"""faiss for the SQLite store's approximate route (``ann.py``, ``ann_direct.py``): imported on first use (the
optional extra ``mastra-memory[ann]``), the HNSW graph's parameters, and vectors as the graph holds them."""

from __future__ import annotations

import ctypes
import importlib
import mmap
import sys
import threading
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ...capabilities import Metric
from .snapshot import FLOAT32

__all__ = [
    "EF_MAX",
    "faiss_available",
    "faiss_module",
    "map_in",
    "new_graph",
    "prepared",
    "search_list",
    "searching",
]

# HNSW parameters measured in tests/benchmarks/ann_libraries.py (recall@10 = 1.000 at ef 64 on 100k).
_M: Final = 16
_EF_CONSTRUCTION: Final = 128
# The search list: at least _EF_MIN per _EF_ROWS positions of the graph, never longer than EF_MAX. Measured on
# clustered 384-d vectors (docs/performance.md), 40 candidates re-ranked to the top 10: recall@10 1.000 with
# 128 at 100k rows; at 1M rows 0.954 with 128, 0.976 with 256, 0.996 with 512 (about 1 ms per search).
_EF_MIN: Final = 128
_EF_ROWS: Final = 250_000
EF_MAX: Final = 1024


def faiss_module() -> Any:
    """The faiss module, imported on first use (an optional dependency; its stubs are partial)."""
    return importlib.import_module("faiss")


def faiss_available() -> bool:
    try:
        faiss_module()
    except ImportError:
        return False
    return True


def search_list(size: int, fetch: int) -> int:
    """The search list (faiss ``efSearch``) for ``fetch`` candidates from a graph of ``size`` positions."""
    return min(EF_MAX, max(_EF_MIN * max(1, -(-size // _EF_ROWS)), fetch))


def searching() -> Any:
    """faiss, set to search on this thread alone: one query gains nothing from OpenMP's threads, and on a busy
    machine their barriers cost 50-100 ms a search (measured at 1M rows: 0.5 ms on one thread). The setting
    is the calling thread's own; builds on their thread keep every core."""
    faiss = faiss_module()
    faiss.omp_set_num_threads(1)
    return faiss


def prepared(block: npt.NDArray[np.float32], metric: Metric) -> npt.NDArray[np.float32]:
    """Vectors as the graph holds them: unit length for cosine (inner product), as stored otherwise."""
    out = np.array(block, dtype=FLOAT32, copy=True)
    if metric == "cosine":
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
    return out


def new_graph(dimension: int, metric: Metric) -> Any:
    """An empty HNSW graph: inner product (of unit vectors, for cosine) or L2 for euclidean."""
    faiss = faiss_module()

    kind = faiss.METRIC_L2 if metric == "euclidean" else faiss.METRIC_INNER_PRODUCT
    graph = faiss.IndexHNSWFlat(dimension, _M, kind)
    graph.hnsw.efConstruction = _EF_CONSTRUCTION
    return graph


# madvise(2) advice (Linux 5.14+): map every page of the range now, reading what the page cache lacks.
_MADV_POPULATE_READ: Final = 22
_MAP_IN_STEP: Final = 64 << 20  # bytes per call, so that a closing store does not wait for the rest


def map_in(block: npt.NDArray[np.float32], stop: threading.Event) -> None:
    """Map every page of a memory-mapped ``block`` (a graph's vectors) into this process now, on the calling
    thread, until ``stop`` is set. A search through a graph whose pages are not mapped yet takes a page fault
    per vector it visits: at 1M rows the first 100 searches of a process took 64 ms p50, then 2.6 ms
    (docs/performance.md). Elsewhere than on Linux, or on an older kernel, nothing happens."""
    if sys.platform != "linux" or block.nbytes == 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    madvise = libc.madvise
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    start = block.ctypes.data // mmap.PAGESIZE * mmap.PAGESIZE  # the page holding the first vector
    end = block.ctypes.data + block.nbytes
    for at in range(start, end, _MAP_IN_STEP):
        if stop.is_set() or madvise(at, min(_MAP_IN_STEP, end - at), _MADV_POPULATE_READ) != 0:
            return  # closing, or not supported (EINVAL): the searches fault the pages in themselves
