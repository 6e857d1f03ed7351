"""How a record is laid out in PostgreSQL so that filters stay exact: ``id text``, ``embedding vector``,
``metadata jsonb``.

Metadata is written as jsonb text with every float as its exact decimal value
(:func:`~.translate.json_text`), so the translator's numeric comparisons see the numbers that were stored;
text holds neither U+0000 nor unpaired surrogates (:func:`metadata_problem`, declared deviation
``nul-character-rejected``). Vectors travel as float32 in pgvector's text form (:func:`vector_text`) or, for
upserts, in PostgreSQL's binary COPY format (:func:`copy_payload`).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from mastra_memory.vector.metadata import first_problem

from .translate import json_text, unstorable_text

__all__ = ["FLOAT32", "copy_payload", "metadata_problem", "metadata_text", "parse_vector", "vector_text"]

FLOAT32: Final = np.dtype("<f4")


def vector_text(vector: npt.NDArray[np.floating]) -> str:
    """pgvector's text form; float32 values written with enough digits to read back exactly."""
    return "[" + ",".join(map(repr, vector.astype(FLOAT32).tolist())) + "]"


def parse_vector(text: str) -> list[float]:
    """A vector from pgvector's text form."""
    body = text.strip()[1:-1]
    if not body:
        return []
    return [float(x) for x in np.asarray(body.split(","), dtype=FLOAT32)]


def copy_payload(ids: list[str], vectors: npt.NDArray[np.float32], metadata: list[str]) -> bytes:
    """Rows ``(id text, embedding vector, metadata jsonb)`` in PostgreSQL's binary COPY format.

    ``vector`` is pgvector's binary form (int16 dimension, int16 unused, big-endian float4 values) and
    ``jsonb`` is version byte 1 followed by the JSON text.
    """
    dimension = vectors.shape[1]
    vector_head = struct.pack(">iHH", 4 + 4 * dimension, dimension, 0)
    big_endian = np.ascontiguousarray(vectors, dtype=">f4")
    parts = [b"PGCOPY\n\xff\r\n\x00", struct.pack(">ii", 0, 0)]
    for i, (rid, meta) in enumerate(zip(ids, metadata, strict=True)):
        id_bytes = rid.encode()
        meta_bytes = b"\x01" + meta.encode()
        parts += (
            struct.pack(">hi", 3, len(id_bytes)),
            id_bytes,
            vector_head,
            big_endian[i].tobytes(),
            struct.pack(">i", len(meta_bytes)),
            meta_bytes,
        )
    parts.append(struct.pack(">h", -1))
    return b"".join(parts)


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, list):
        return any(_has_float(v) for v in value)
    if isinstance(value, Mapping):
        return any(_has_float(v) for v in value.values())
    return False


def metadata_text(metadata: Mapping[str, Any]) -> str:
    """Metadata as jsonb text (what PostgreSQL cannot hold was refused by the shared validation)."""
    if _has_float(metadata):
        return json_text(metadata)  # exact float text
    return json.dumps(metadata, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _unstorable(value: Any, path: str) -> str | None:
    """Why PostgreSQL could not hold the scalar or key ``value`` (None if it can); ``path`` names it."""
    if isinstance(value, str) and unstorable_text(value):
        return f"{path}: strings containing U+0000 or unpaired surrogates cannot be stored in PostgreSQL"
    return None


def metadata_problem(metadata: Mapping[str, Any]) -> str | None:
    """What PostgreSQL text cannot hold in ``metadata`` (U+0000), or None."""
    # The C encoder escapes U+0000 as \\u0000: only metadata whose JSON shows that is walked.
    if "\\u0000" not in json.dumps(metadata, ensure_ascii=False, allow_nan=False):
        return None
    return first_problem(metadata, _unstorable)
