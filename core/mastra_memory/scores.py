"""Portable scores (docs/spec.md §3.4): higher is better and depends only on the metric and the two vectors.

``cosine`` -> cosine similarity in [-1, 1]; ``dotproduct`` -> inner product; ``euclidean`` ->
``1 / (1 + L2 distance)`` in (0, 1]. :func:`exact_scores` computes them by brute force (the exact stores
and the conformance oracle); :func:`best` picks the ``top_k`` in the order of docs/spec.md §3.1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from .capabilities import Metric


def exact_scores(
    matrix: npt.NDArray[np.floating], query: npt.NDArray[np.floating], metric: Metric
) -> npt.NDArray[np.float64]:
    """Brute-force portable scores of every row of ``matrix`` against ``query``, in float64.

    A zero vector has no direction: its cosine score is 0.
    """
    m = np.asarray(matrix, dtype=np.float64)
    q = np.asarray(query, dtype=np.float64)
    if m.size == 0:
        return np.zeros(m.shape[0], dtype=np.float64)
    if metric == "dotproduct":
        return np.asarray(m @ q, dtype=np.float64)
    if metric == "euclidean":
        return np.asarray(1.0 / (1.0 + np.linalg.norm(m - q, axis=1)), dtype=np.float64)
    norms = np.linalg.norm(m, axis=1) * np.linalg.norm(q)
    dots = m @ q
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(norms > 0, dots / np.where(norms > 0, norms, 1.0), 0.0)
    return np.clip(out, -1.0, 1.0)


def best(scores: npt.NDArray[np.floating], k: int, id_of: Callable[[int], Any]) -> list[int]:
    """Positions of the ``k`` best ``scores`` by (score descending, id ascending), the order of docs/spec.md
    §3.1; ``id_of(i)`` is the id at position ``i``.

    Every position scoring at least the k-th best score is a candidate, so records tied at the cut-off all
    compete on id and the selection equals a full sort's first ``k``; usually about ``k`` ids are read.
    """
    n = scores.size
    if k < n:
        cutoff = np.partition(scores, n - k)[n - k]
        candidates = np.flatnonzero(scores >= cutoff)
    else:
        candidates = np.arange(n)
    return sorted(candidates.tolist(), key=lambda i: (-float(scores[i]), id_of(i)))[:k]
