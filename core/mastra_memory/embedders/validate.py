"""Check what an embedder returned before anything uses it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ..errors import EmbeddingError


def check_embeddings(
    model_id: str, embeddings: object, count: int, expected_dimension: int | None = None
) -> npt.NDArray[np.float64]:
    """Return ``embeddings`` as a ``(count, dimension)`` float64 array, or raise `EmbeddingError`.

    Checks: one vector per text, every vector the same non-zero length (equal to ``expected_dimension``
    when given), and only finite numbers.
    """
    if not isinstance(embeddings, Sequence) or isinstance(embeddings, str | bytes):
        raise _error(model_id, f"returned {type(embeddings).__name__} instead of a list of vectors")
    if len(embeddings) != count:
        raise _error(model_id, f"returned {len(embeddings)} embeddings for {count} texts")
    if count == 0:
        return np.zeros((0, expected_dimension or 0), dtype=np.float64)
    lengths = set()
    for position, vector in enumerate(embeddings):
        if not isinstance(vector, Sequence | np.ndarray) or isinstance(vector, str | bytes):
            raise _error(model_id, f"returned {type(vector).__name__} as embedding {position}, not a vector")
        lengths.add(len(vector))
    if len(lengths) > 1:
        raise _error(model_id, f"returned vectors of different lengths {sorted(lengths)} in one batch")
    dimension = lengths.pop()
    if dimension == 0:
        raise _error(model_id, "returned empty vectors")
    if expected_dimension is not None and dimension != expected_dimension:
        raise EmbeddingError(
            f"Embedder {model_id} returned {dimension}-dimensional vectors but earlier calls returned "
            f"{expected_dimension}; one model must keep one dimension. Check the model served under this "
            "name, or call get_embedding_cache().clear() after deliberately switching models.",
            details={"model_id": model_id, "expected": expected_dimension, "actual": dimension},
        )
    try:
        raw = np.asarray(embeddings)
    except (TypeError, ValueError):
        raw = np.asarray([], dtype=object)
    # Numbers only: numeric strings and None would otherwise be converted or become an object array.
    if raw.dtype.kind not in "iuf":
        raise _error(model_id, "returned a vector with a non-numeric value")
    array = raw.astype(np.float64)
    finite = np.isfinite(array).all(axis=1)
    if not finite.all():
        position = int(np.argmin(finite))
        raise _error(model_id, f"returned a non-finite value (NaN or infinity) in embedding {position}")
    return array


def _error(model_id: str, problem: str) -> EmbeddingError:
    return EmbeddingError(
        f"Embedder {model_id} {problem}; check the provider or model, the vectors cannot be stored.",
        details={"model_id": model_id},
    )
