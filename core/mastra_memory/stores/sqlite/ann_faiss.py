"""faiss for the SQLite store's approximate route (``ann.py``, ``ann_direct.py``): imported on first use (the
optional extra ``mastra-memory[ann]``), the HNSW graph's parameters, and vectors as the graph holds them."""

from __future__ import annotations

import importlib
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ...capabilities import Metric
from .snapshot import FLOAT32

__all__ = ["EF_MAX", "EF_MIN", "faiss_available", "faiss_module", "new_graph", "prepared"]

# HNSW parameters measured in tests/benchmarks/ann_libraries.py (recall@10 = 1.000 at ef 64 on 100k).
_M: Final = 16
_EF_CONSTRUCTION: Final = 128
#: The search list's bounds: at least this long, and never longer than EF_MAX.
EF_MIN: Final = 128
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
