"""How a record's metadata is stored in S3 Vectors: a verbatim copy to read, typed keys to filter on.

Each vector carries:

* ``_mastra_meta`` — the whole metadata as canonical JSON text, a **non-filterable** key. Every read
  (query, update by id, scans) returns this copy, so the round trip is lossless: nulls, nested objects,
  ints versus floats, the non-filterable keys (docs/spec.md §3.6).
* **typed filterable keys**, one per path and JSON type, named ``<tag>:<path>``: ``s`` strings (a string,
  or a list of strings), ``n`` numbers, ``b`` booleans, ``z`` null (``true``), ``o`` an object
  (``true``), ``l`` a list (``true``; its elements are under ``s``). Path segments are joined by ``.``
  with ``%``, ``.`` and ``#`` inside a segment escaped (``%25``, ``%2E``, ``%23``), so ``{"a.b": 1}`` and
  ``{"a": {"b": 1}}`` never meet; an encoded path longer than 40 bytes is replaced by ``#`` and 128 bits
  of its SHA-256. One key holds one type, so an equality or range test never compares
  across types (S3Mock's ``$gte`` matched a string against a number), and a number is stored as an
  integer when it is integral within int64 (S3Mock's ``5`` never equalled ``5.0``). Top-level keys of
  ``non_filterable_metadata_keys`` get no typed keys.

The budget (:func:`budget_problem`) follows the service's limits: filterable metadata ≤ 2 KB per vector
(measured as the UTF-8 bytes of its keys and string values, 8 bytes per number and 1 per boolean), all
metadata ≤ 40 KB and ≤ 50 keys.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

from mastra_memory.filters.numbers import in_int64

from .capabilities import MAX_FILTERABLE_BYTES, MAX_METADATA_KEYS, MAX_TOTAL_METADATA_BYTES

__all__ = [
    "META_KEY",
    "TAGS",
    "budget_problem",
    "decode",
    "encode",
    "key",
    "list_problem",
    "number",
]

#: The non-filterable key holding the verbatim metadata (JSON text).
META_KEY: Final = "_mastra_meta"
#: The typed key tags, in the order :func:`present` lists them.
TAGS: Final = ("s", "n", "b", "z", "o", "l")
#: Encoded paths longer than this (in UTF-8 bytes) are keyed by ``#`` and 128 bits of their SHA-256, so a
#: long key name does not use up the 2 KB filterable budget once per path and type.
MAX_PATH_BYTES: Final = 40


def _segment(name: str) -> str:
    return name.replace("%", "%25").replace(".", "%2E").replace("#", "%23")


def key(tag: str, path: Iterable[str]) -> str:
    """The filterable key of ``path`` for values of type ``tag`` (a long path by its hash)."""
    joined = ".".join(_segment(p) for p in path)
    if len(joined.encode("utf-8")) > MAX_PATH_BYTES:
        joined = "#" + hashlib.sha256(joined.encode("utf-8")).hexdigest()[:32]
    return f"{tag}:{joined}"


def number(value: int | float) -> int | float:
    """A JSON number as stored and compared: integral values within int64 as ints, others as floats."""
    if isinstance(value, int):
        return value
    if value.is_integer() and in_int64(value):
        return int(value)
    return value


def list_problem(metadata: Mapping[str, Any], skip: frozenset[str]) -> str | None:
    """Why ``metadata`` cannot be stored (a list with a non-string element, an integer beyond int64)."""
    stack: list[tuple[Any, str]] = [(v, k) for k, v in metadata.items() if k not in skip]
    while stack:
        value, where = stack.pop()
        if isinstance(value, dict):
            stack.extend((v, f"{where}.{k}") for k, v in value.items())
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if not isinstance(item, str):
                    return (
                        f"the list at {where} holds {type(item).__name__} at [{i}]: S3 Vectors lists may "
                        "contain only strings (declared deviation string-list-only); store the values as "
                        "separate keys, or list the key in non_filterable_metadata_keys"
                    )
        elif isinstance(value, int) and not isinstance(value, bool) and not in_int64(value):
            return (
                f"the integer at {where} is outside the signed 64-bit range (declared deviation "
                "int64-range); store it as a string or a float"
            )
    return None


def encode(metadata: Mapping[str, Any], skip: frozenset[str]) -> dict[str, Any]:
    """The S3 Vectors metadata of one record: typed filterable keys and the verbatim copy."""
    out: dict[str, Any] = {}
    stack: list[tuple[tuple[str, ...], Any]] = [((k,), v) for k, v in metadata.items() if k not in skip]
    while stack:
        path, value = stack.pop()
        if value is None:
            out[key("z", path)] = True
        elif isinstance(value, bool):
            out[key("b", path)] = value
        elif isinstance(value, str):
            out[key("s", path)] = value
        elif isinstance(value, (int, float)):
            out[key("n", path)] = number(value)
        elif isinstance(value, list):
            out[key("l", path)] = True
            if value:
                out[key("s", path)] = list(value)
        elif isinstance(value, dict):
            out[key("o", path)] = True
            stack.extend((((*path, k), v) for k, v in value.items()))
    out[META_KEY] = json.dumps(metadata, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return out


def decode(stored: Mapping[str, Any] | None) -> dict[str, Any]:
    """The caller's metadata of a stored vector (the verbatim copy; ``{}`` without one)."""
    if not stored:
        return {}
    text = stored.get(META_KEY)
    if not isinstance(text, str):
        return {}
    value = json.loads(text)
    return value if isinstance(value, dict) else {}


def _size(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    if isinstance(value, bool):
        return 1
    if isinstance(value, (int, float)):
        return 8
    if isinstance(value, list):
        return sum(_size(v) for v in value)
    return 0


def budget_problem(encoded: Mapping[str, Any]) -> str | None:
    """Why ``encoded`` (from :func:`encode`) exceeds the service's per-vector metadata limits, or None."""
    filterable = sum(len(k.encode("utf-8")) + _size(v) for k, v in encoded.items() if k != META_KEY)
    total = filterable + len(META_KEY) + _size(encoded.get(META_KEY, ""))
    keys = len(encoded)
    if filterable > MAX_FILTERABLE_BYTES:
        return (
            f"its filterable metadata takes {filterable} bytes, more than S3 Vectors' "
            f"{MAX_FILTERABLE_BYTES}; "
            "move bulky keys to non_filterable_metadata_keys (set at index creation) or store less"
        )
    if total > MAX_TOTAL_METADATA_BYTES:
        return (
            f"its metadata takes about {total} bytes, more than S3 Vectors' {MAX_TOTAL_METADATA_BYTES} per "
            "vector; store less (Memory: lower chunk_size so each chunk's text fits)"
        )
    if keys > MAX_METADATA_KEYS:
        return (
            f"it needs {keys} metadata keys (one per path and type, plus one), more than S3 Vectors' "
            f"{MAX_METADATA_KEYS}; store fewer keys or nest less"
        )
    return None
