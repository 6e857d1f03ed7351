"""How a record's metadata is laid out in a Qdrant payload so that every filter is exact.

A point's payload is ``{**metadata, "_mastra_id": <original id>, "_mastra_norm": <L2 norm of the
written vector>, "_mastra_f": <filter document>}``:

* the metadata itself, verbatim at the top level — what reads return and what a person sees in Qdrant;
* ``_mastra_id``, the caller's id (docs/spec.md §3.5: point ids are UUIDs, the original is kept here);
* ``_mastra_norm``, the L2 norm of the vector as written (float64). Qdrant normalises vectors of a cosine
  collection on write and returns the unit vector, while a query with ``include_vector=True`` must return
  the stored one (docs/spec.md §3.2): :func:`restore_vector` scales what Qdrant returns back to this norm.
  It is written for every metric, so every vector write keeps it in step whatever the index's metric;
* ``_mastra_f``, a *filter document* derived from the metadata, which is what filters look at.

Why a derived document: Qdrant's own conditions cannot express MongoDB semantics over arbitrary
metadata exactly. Its JSON paths cannot name keys containing ``"`` and need ``a[].b`` to step into
arrays (Mongo steps in implicitly); ``is_empty`` cannot tell ``[]`` from a missing key, ``values_count``
counts a scalar as 1 and a missing key as 0, integer ``match`` never matches a float ``1.0``, and the
edge engine's Python binding reads a boolean match value as an integer. The filter document removes each
of these problems by construction:

``v-<path>``
    every scalar value MongoDB's path resolution reaches at ``<path>`` (through nested objects, implicit
    traversal of arrays of objects, and the elements of an array at the end of the path): strings,
    integers, and floats — integral floats within int64 stored as integers, so one integer ``match``
    finds ``1`` and ``1.0`` alike. Booleans and nulls are recorded as facts instead.
``e-<path>``
    the object elements of the arrays reached at ``<path>``, each as a filter document of its own (with
    paths relative to the element), for ``$elemMatch`` through a ``nested`` condition.
``x``
    the *facts* of this document (:mod:`mastra_memory.filters.facts`), one keyword each
    (``<tag>:<path>``): ``p`` the path is present (a value, even null or ``[]``, is reached), ``a`` every
    container one level up holds the last key, ``c`` the
    path reaches containers (objects, or arrays holding objects) to step into, ``s`` it reaches a scalar or
    null (a dead end for longer paths), ``z``/``t``/``f`` a reached value (or an element of a reached
    array) is null/true/false, ``n:<path>:<k>`` it reaches an array of length ``k``, ``l`` it reaches an
    array that holds an array (which ``$elemMatch`` over documents reads as an empty object).

``<path>`` is the metadata path with each key encoded (:func:`encode_key`) and the keys joined with
``-``: a key of ASCII letters, digits and ``_`` starting with a letter or digit stays as it is, any other
key becomes ``_`` plus the hex of its UTF-8 bytes. Encoded keys contain neither ``-`` nor ``:``, so paths
and facts are unambiguous, and every Qdrant key built from them is a plain identifier.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from mastra_memory.filters import facts
from mastra_memory.filters.numbers import in_int64
from mastra_memory.vector.records import RESERVED_PREFIX

__all__ = [
    "ELEMENTS_PREFIX",
    "FACTS_KEY",
    "FILTER_ROOT",
    "MAX_FILTER_DOCUMENT_SIZE",
    "RESERVED_ID",
    "RESERVED_NORM",
    "VALUES_PREFIX",
    "build_payload",
    "encode_key",
    "fact",
    "filter_document",
    "filter_document_size",
    "metadata_of",
    "path_code",
    "restore_vector",
    "vector_norm",
]

# The reserved payload keys (docs/spec.md §3.6: metadata never holds the prefix), stripped by metadata_of.
RESERVED_ID: Final = RESERVED_PREFIX + "id"
RESERVED_NORM: Final = RESERVED_PREFIX + "norm"
FILTER_ROOT: Final = RESERVED_PREFIX + "f"
FACTS_KEY: Final = "x"
VALUES_PREFIX: Final = "v-"
ELEMENTS_PREFIX: Final = "e-"
#: The largest filter document a point may have, in characters as :func:`filter_document_size` estimates
#: them (declared deviation ``filter-document-size``). The document repeats each key's full path, and each
#: level of arrays of objects doubles what lies below it: 150 bytes of metadata nested 40 levels deep made a
#: 53 MB payload that took 26 s to build, and 128 KB of 32 nested keys of 4,000 characters a 26 MB one,
#: both within the shared limits. At this bound a point's payload stays within a few megabytes, while
#: ordinary metadata (a thousand keys, lists of thousands of values, objects in arrays in arrays) stays far
#: below it.
MAX_FILTER_DOCUMENT_SIZE: Final = 4 * 1024 * 1024

_PLAIN_KEY: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_]*", re.ASCII)


def encode_key(key: str) -> str:
    """One metadata key as a Qdrant-safe identifier (injective; see the module docstring)."""
    if _PLAIN_KEY.fullmatch(key):
        return key
    return "_" + key.encode("utf-8").hex()


def path_code(path: tuple[str, ...]) -> str:
    """A metadata path in the encoded form used by the filter document (keys joined with ``-``)."""
    return "-".join(encode_key(key) for key in path)


def fact(tag: str, path: tuple[str, ...], extra: int | None = None) -> str:
    """The fact keyword ``<tag>:<path>`` (``<tag>:<path>:<extra>`` for array lengths)."""
    return facts.fact(tag, path_code(path), extra)


def _number(value: int | float) -> int | float:
    if isinstance(value, float) and value.is_integer() and in_int64(value):
        return int(value)
    return value


def filter_document(root: Mapping[str, Any]) -> dict[str, Any]:
    """The filter document of one object (the metadata, or an object element of an array): the values
    and the object elements reached at each path, and the facts of
    :func:`~mastra_memory.filters.facts.document_facts`."""
    document: dict[str, Any] = {}

    def visit(code: str, scalars: list[Any], objects: list[Mapping[str, Any]]) -> None:
        if scalars:
            document[VALUES_PREFIX + code] = [v if isinstance(v, str) else _number(v) for v in scalars]
        if objects:
            document[ELEMENTS_PREFIX + code] = [filter_document(o) for o in objects]

    document[FACTS_KEY] = sorted(facts.document_facts(root, path_code, visit))
    return document


def filter_document_size(metadata: Mapping[str, Any], stop_above: int = MAX_FILTER_DOCUMENT_SIZE) -> int:
    """An upper bound of the characters of the filter document of ``metadata`` (measured at 1–4 times
    the real size), computed without building it by an iterative walk; it stops counting once above
    ``stop_above``.

    Every key writes a few facts and a values key naming its full encoded path, so the document grows
    with the length of each path; and a value inside ``k`` nested arrays of objects is written ``2**k``
    times — once reached from each enclosing document by path (implicit array traversal), and once more
    inside each element document of those arrays (``e-<path>``, for ``$elemMatch``).
    """
    total = 0
    stack: list[tuple[Any, int, int]] = [(metadata, 0, 0)]  # (value, object-array level, path length)
    while stack:
        value, level, length = stack.pop()
        copies = 1 << level
        if isinstance(value, Mapping):
            for key, item in value.items():
                path = length + (len(encode_key(key)) if isinstance(key, str) else 8) + (1 if length else 0)
                total += copies * 4 * (path + 8)  # the facts p, a, c/s and the values key
                stack.append((item, level, path))
        elif isinstance(value, (list, tuple)):
            total += copies * (length + 8)  # the length fact
            stack.extend((item, level + 1 if isinstance(item, Mapping) else level, length) for item in value)
        elif isinstance(value, str):
            total += copies * (len(value) + 4)
        else:
            total += copies * (length + 12)  # a number, or the fact of a null or a boolean
        if total > stop_above:
            return total
    return total


def build_payload(record_id: str, metadata: Mapping[str, Any], norm: float | None) -> dict[str, Any]:
    """The payload of one point: metadata, original id, vector norm (when known), filter document."""
    payload = {**metadata, RESERVED_ID: record_id, FILTER_ROOT: filter_document(metadata)}
    if norm is not None:
        payload[RESERVED_NORM] = norm
    return payload


def vector_norm(vector: Sequence[float] | npt.NDArray[np.float64]) -> float:
    """The L2 norm of a vector as written, in float64 (what :data:`RESERVED_NORM` holds)."""
    return float(np.linalg.norm(np.asarray(vector, dtype=np.float64)))


def restore_vector(returned: list[float], payload: Mapping[str, Any]) -> list[float]:
    """The vector as written, from the unit vector Qdrant returns for a point of a cosine collection.

    ``returned`` is rescaled to the norm recorded in the payload. It is divided by its own norm rather
    than taken as exactly unit: the engine computes the norm it divides by in float32, and whatever
    factor it used cancels out, so the result matches what was written to float32 precision. A point
    without a recorded norm (written by an older version) comes back as Qdrant returns it; a zero
    vector stays zero (nothing is divided by 0).
    """
    norm = payload.get(RESERVED_NORM)
    if isinstance(norm, bool) or not isinstance(norm, (int, float)):
        return returned
    array = np.asarray(returned, dtype=np.float64)
    length = float(np.linalg.norm(array))
    if length == 0.0 or norm == 0.0:
        return [0.0] * len(returned)
    restored: list[float] = (array * (float(norm) / length)).tolist()
    return restored


def metadata_of(payload: Mapping[str, Any] | None) -> dict[str, Any]:
    """The caller's metadata from a payload (every reserved ``_mastra_`` key removed)."""
    if not payload:
        return {}
    return {k: v for k, v in payload.items() if not k.startswith(RESERVED_PREFIX)}
