"""Portable scores (docs/spec.md §3.4): higher is better and depends only on the metric and the two vectors.

``cosine`` -> cosine similarity in [-1, 1]; ``dotproduct`` -> inner product; ``euclidean`` ->
``1 / (1 + L2 distance)`` in (0, 1]. Adapters convert their backend's native value with these helpers.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from .capabilities import Metric


def from_cosine_distance(distance: float) -> float:
    """``1 - d`` where ``d = 1 - cos`` (pgvector ``<=>``, LanceDB, S3 Vectors)."""
    return 1.0 - float(distance)


def from_euclidean_distance(distance: float) -> float:
    """``1 / (1 + d)`` for a plain L2 distance."""
    return 1.0 / (1.0 + float(distance))


def from_squared_euclidean(squared: float) -> float:
    """``1 / (1 + sqrt(s))`` for a squared L2 distance (Pinecone, LanceDB)."""
    return 1.0 / (1.0 + math.sqrt(max(float(squared), 0.0)))


def from_negative_inner_product(value: float) -> float:
    """pgvector's ``<#>`` returns ``-ip``."""
    return -float(value)


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
