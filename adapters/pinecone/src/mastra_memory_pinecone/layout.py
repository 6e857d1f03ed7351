"""How a record's metadata is stored in Pinecone, and read back (docs/spec.md §3.6).

Pinecone keeps flat metadata: strings, numbers (64-bit floats), booleans and lists of strings. The
adapter writes the caller's metadata like this:

* nested dicts become dotted keys (``{"a": {"b": 1}}`` -> ``{"a.b": 1}``); a key with a ``.`` in it is
  rejected, so the dotted form is unambiguous (declared ``nested-flattened``, ``dotted-keys-rejected``);
* nulls and empty dicts are not stored (``null-dropped``, ``nested-flattened``); lists must hold only
  strings (``string-list-only``); integers beyond int64 are rejected (``int64-range``);
* the reserved list ``_mastra_shape`` records what flat keys cannot say, one ``<tag>:<path>`` entry each:

  ====  =====================================================================================
  tag   meaning
  ====  =====================================================================================
  d     a dict is present at the path (it holds something that is stored)
  l     a list is present at the path (an empty list has no key of its own)
  n     a number is stored at the path (so a negated range can tell numbers from other types)
  f     that number is a float with an integral value (Pinecone returns every number as a float)
  b     that number is an integer beyond ±2^53, stored as the nearest float; ``i:<int>:<path>`` holds
        its exact value, so equality and ranges near it stay exact
  z     (no path) the record's vector is all zeros; Pinecone refuses such a vector, so a tiny
        component :data:`ZERO_STANDIN` stands in for it and reads return zeros
  ====  =====================================================================================

* ``_mastra_id`` keeps the original id of a record whose id Pinecone cannot take (non-ASCII or NUL), or
  that has the form ``mastra-<uuid5>`` itself: those are stored under ``mastra-<uuid5>`` (docs/spec.md
  §3.5).

:func:`decode` inverts all of this exactly, so the round trip is lossless apart from the declared
deviations.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Final

from mastra_memory.filters.numbers import EXACT_FLOAT_LIMIT, in_int64
from mastra_memory.vector import native_record_id

__all__ = [
    "RESERVED_ID",
    "SHAPE_KEY",
    "ZERO_STANDIN",
    "MetadataRejected",
    "decode",
    "encode",
    "metadata_bytes",
    "metadata_problem",
    "native_id",
]

SHAPE_KEY: Final = "_mastra_shape"
RESERVED_ID: Final = "_mastra_id"
#: The first component written for an all-zero vector (2^-64): it changes a dot product by at most
#: 2^-64·|q₀| and a squared distance by about 2^-63·|q₀|, far below float32 resolution of any score.
ZERO_STANDIN: Final = 2.0**-64
_ID_PREFIX: Final = "mastra-"


class MetadataRejected(ValueError):
    """Metadata Pinecone cannot store; the message names the key path and what to do."""


def _takes(record_id: str) -> bool:
    """Whether Pinecone takes ``record_id`` as it is (ASCII, no NUL)."""
    return record_id.isascii() and "\x00" not in record_id


def native_id(record_id: str) -> str:
    """The Pinecone id of a record id (docs/spec.md §3.5): itself when Pinecone takes it and it is not of
    the form ``mastra-<uuid5>``, else ``mastra-<uuid5>`` (a literal one could be another id's record)."""
    return native_record_id(record_id, _takes, _ID_PREFIX)


def encode(metadata: Mapping[str, Any], record_id: str, zero: bool = False) -> dict[str, Any]:
    """The Pinecone metadata of one record (``metadata`` is normalised JSON, docs/spec.md §3.6)."""
    out: dict[str, Any] = {}
    shape: list[str] = []
    for key, value in metadata.items():
        _put(out, shape, (key,), value)
    if zero:
        shape.append("z:")
    if shape:
        out[SHAPE_KEY] = shape
    if native_id(record_id) != record_id:
        out[RESERVED_ID] = record_id
    return out


def _dotted(path: tuple[str, ...]) -> str:
    return ".".join(path)


def _put(out: dict[str, Any], shape: list[str], path: tuple[str, ...], value: Any) -> bool:
    """Store ``value`` at ``path``; whether anything was stored (an empty dict or a null is not)."""
    if "." in path[-1]:
        raise MetadataRejected(
            f"the key {path[-1]!r} at {_dotted(path[:-1]) or '<root>'} contains '.', which Pinecone's "
            "flattened nested keys reserve as the path separator (declared deviation dotted-keys-rejected); "
            "rename the key"
        )
    key = _dotted(path)
    if value is None:
        return False
    if isinstance(value, Mapping):
        stored = False
        for child, inner in value.items():
            stored = _put(out, shape, (*path, child), inner) or stored
        if stored:
            shape.append("d:" + key)
        return stored
    if isinstance(value, list):
        if not all(isinstance(v, str) for v in value):
            raise MetadataRejected(
                f"the list at {key} holds non-strings; Pinecone stores only lists of strings (declared "
                "deviation string-list-only): convert its items to strings or store them under separate keys"
            )
        shape.append("l:" + key)
        if value:
            out[key] = list(value)
        return True
    if isinstance(value, (bool, str)):
        out[key] = value
        return True
    if isinstance(value, int):
        if not in_int64(value):
            raise MetadataRejected(
                f"the integer at {key} is outside the signed 64-bit range (declared deviation int64-range); "
                "store it as a string or a float"
            )
        shape.append("n:" + key)
        if abs(value) > EXACT_FLOAT_LIMIT:
            shape += ["b:" + key, f"i:{value}:{key}"]
            out[key] = float(value)
        else:
            out[key] = value
        return True
    if isinstance(value, float):
        shape.append("n:" + key)
        if value.is_integer():
            shape.append("f:" + key)
        out[key] = value
        return True
    raise MetadataRejected(f"metadata value at {key} has unsupported type {type(value).__name__}")


def metadata_bytes(metadata: Mapping[str, Any]) -> int:
    """The size Pinecone's 40 KB limit is measured on: compact UTF-8 JSON."""
    return len(json.dumps(metadata, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def metadata_problem(metadata: Mapping[str, Any], record_id: str | None, limit: int) -> str | None:
    """Why Pinecone cannot store ``metadata`` as the metadata of record ``record_id``, or None.

    The one definition of the adapter's metadata rules (dotted keys, string-only lists, int64, ``limit``
    bytes as stored), used by the shared validation before any I/O and by every write. The size counts
    the reserved keys as written: ``_mastra_id`` when the id needs it (an unknown id, ``None``, counts
    none) and the zero-vector tag, whatever the vector, so a record the validation accepts is never
    refused later for the vector it carries (docs/spec.md §3.6, §5.4).
    """
    try:
        stored = encode(metadata, "" if record_id is None else record_id, zero=True)
    except MetadataRejected as exc:
        return str(exc)
    size = metadata_bytes(stored)
    if size > limit:
        return (
            f"the metadata takes {size:,} bytes as Pinecone stores it, above Pinecone's limit of "
            f"{limit:,} bytes (40 KB) per record (declared deviation metadata-40kb); keep large text out "
            "of the metadata or shorten it"
        )
    return None


def _set(document: dict[str, Any], path: list[str], value: Any) -> None:
    current = document
    for segment in path[:-1]:
        nxt = current.get(segment)
        if not isinstance(nxt, dict):
            nxt = {}
            current[segment] = nxt
        current = nxt
    current[path[-1]] = value


def decode(stored: Mapping[str, Any] | None, pinecone_id: str) -> tuple[str, dict[str, Any], bool]:
    """(original id, metadata, whether the vector is the zero stand-in) of a stored record."""
    stored = dict(stored or {})
    shape_list = stored.pop(SHAPE_KEY, None)
    original = stored.pop(RESERVED_ID, None)
    shape = [s for s in shape_list if isinstance(s, str)] if isinstance(shape_list, list) else []
    floats = {s[2:] for s in shape if s.startswith("f:")}
    exact: dict[str, int] = {}
    for entry in shape:
        if entry.startswith("i:"):
            number, _, path = entry[2:].partition(":")
            exact[path] = int(number)
    out: dict[str, Any] = {}
    for key, value in sorted(stored.items()):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if key in exact:
                value = exact[key]
            elif key in floats:
                value = float(value)
            elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
                value = int(value)
        _set(out, key.split("."), value)
    for entry in shape:
        if entry.startswith("l:") and entry[2:] not in stored:
            _set(out, entry[2:].split("."), [])
    return (original if isinstance(original, str) else pinecone_id), out, "z:" in shape
