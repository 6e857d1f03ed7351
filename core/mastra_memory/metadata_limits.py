"""Size limits of stored metadata (docs/spec.md §3.6, §4.1), declared once, and the walk that checks them.

Two kinds of record carry free-form metadata: vector records (``MastraVector.upsert`` and
``update_vector``, docs/spec.md §3.6) and the memory records of a storage — threads, resources and a
message's ``content.metadata`` (docs/spec.md §4.1). Both are bounded in nesting depth, in keys and in
serialised size, and must be Unicode text throughout, checked by the shared validation of the templates
before any I/O, so every store gets the same limits.

:func:`shape_problem` walks a value with an explicit stack (metadata nested 100,000 levels deep or a
cyclic structure is refused at the depth limit, never a ``RecursionError``) and stops at the first
limit exceeded, so a huge value costs no more to refuse than a small one: every step adds at least one
byte to a lower bound of the serialised size, so it takes at most about ``limits.max_bytes`` steps. The
exact size is then measured on the JSON text (:func:`size_problem`).

Why these numbers:

* **depth 32** — Qdrant's engine reads a payload nested 126 levels or more as corrupt (a Rust panic on
  every filtered query, a write-ahead log that no longer reopens), and its adapter's filter document nests
  two levels for every array of objects; 32 levels keep the deepest payload near 70 levels. Application
  metadata rarely nests more than 5 levels, and the filter language has the same limit (§2.10).
* **1,000 keys / 64 KiB** for a memory record — the filter language's key limit (§2.10); far above what
  a thread, resource or message describes (a title, tags, a few ids), and small enough that reading a page
  of 100 threads stays in the megabytes.
* **128 levels** for a whole message (content, parts, tool arguments and results, which are stored as
  given and not otherwise bounded) — deeper than tool output gets, and half of where pydantic's JSON
  serialisation of a message stops (about 250 levels; Python's JSON encoder and SQLite's JSON functions
  give up near 1,000, and a message nested 10,000 levels raised ``RecursionError``).
* **1,024 keys / 256 KiB** for a vector record — ``Memory`` writes a thread's metadata (within the memory
  record limits) into every vector of that thread plus seven keys of its own and one chunk of message text
  (at most 16,384 characters, up to 96 KiB as JSON), so every thread the storage accepts can be indexed.
  Pinecone (40 KB) and S3 Vectors (2 KB filterable) declare lower limits of their own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from .timestamps import canonical_timestamp

__all__ = [
    "MAX_CONTENT_DEPTH",
    "MAX_METADATA_BYTES",
    "MAX_METADATA_DEPTH",
    "MAX_METADATA_KEYS",
    "MAX_VECTOR_METADATA_BYTES",
    "MAX_VECTOR_METADATA_KEYS",
    "RECORD_METADATA",
    "VECTOR_METADATA",
    "MetadataLimits",
    "is_unicode",
    "metadata_problem",
    "shape_problem",
    "shown",
    "size_problem",
    "text_problem",
]

#: Objects and lists nested inside one another; the metadata dict itself is level 1.
MAX_METADATA_DEPTH: Final = 32
#: Keys summed over every object of a thread's, resource's or message's metadata.
MAX_METADATA_KEYS: Final = 1_000
#: UTF-8 bytes of a thread's, resource's or message's metadata as compact JSON.
MAX_METADATA_BYTES: Final = 64 * 1024
#: Keys summed over every object of a vector record's metadata.
MAX_VECTOR_METADATA_KEYS: Final = 1_024
#: UTF-8 bytes of a vector record's metadata as compact JSON.
MAX_VECTOR_METADATA_BYTES: Final = 256 * 1024
#: Objects and lists nested inside one another in a message as given to ``save_messages`` (its content,
#: parts, tool arguments and results); the message itself is level 1.
MAX_CONTENT_DEPTH: Final = 128


@dataclass(frozen=True, slots=True)
class MetadataLimits:
    """The limits one kind of record's metadata is held to."""

    max_depth: int
    max_keys: int
    max_bytes: int


#: Threads, resources and ``content.metadata`` of messages (docs/spec.md §4.1).
RECORD_METADATA: Final = MetadataLimits(MAX_METADATA_DEPTH, MAX_METADATA_KEYS, MAX_METADATA_BYTES)
#: Vector records (docs/spec.md §3.6).
VECTOR_METADATA: Final = MetadataLimits(
    MAX_METADATA_DEPTH, MAX_VECTOR_METADATA_KEYS, MAX_VECTOR_METADATA_BYTES
)

# A location is a linked list (parent, key) built in O(1) per step and spelled out only for a message.
_Loc = tuple[Any, str] | None


def shown(text: str) -> str:
    """``text`` printable whatever it holds: unpaired surrogates are shown escaped (``\\ud800``)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def is_unicode(text: str) -> bool:
    """Whether ``text`` is Unicode text, i.e. holds no unpaired surrogate (it encodes as UTF-8)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _where(loc: _Loc) -> str:
    parts: list[str] = []
    while loc is not None:
        loc, key = loc
        parts.append(key)
    text = shown("".join(reversed(parts)).removeprefix(".")) or "<root>"
    return text if len(text) <= 120 else f"{text[:57]}...{text[-60:]}"


def _child(loc: _Loc, key: Any) -> _Loc:
    return (loc, f".{key}" if isinstance(key, str) else f".<{type(key).__name__}>")


def shape_problem(value: Any, limits: MetadataLimits) -> str | None:
    """The first limit ``value`` exceeds, as a message fragment (``metadata ...``), or None.

    Checks nesting depth, the number of keys, a lower bound of the serialised size and that every key
    and string is Unicode text. Never recurses and stops at the first problem. Types are not judged
    here: what is not JSON data is refused when the metadata is normalised or encoded.
    """
    keys = 0
    size = 0  # a lower bound of the compact JSON text's UTF-8 bytes
    stack: list[tuple[Any, int, _Loc]] = [(value, 1, None)]
    while stack:
        item, depth, loc = stack.pop()
        if isinstance(item, str):
            size += len(item) + 2
            if size <= limits.max_bytes and not is_unicode(item):
                return (
                    f"metadata value at {_where(loc)} ({item[:40]!r}) contains an unpaired surrogate, "
                    "which is not Unicode text and cannot be stored; pass valid Unicode (e.g. decode bytes "
                    "with errors='replace')"
                )
        elif isinstance(item, Mapping | list | tuple):
            if depth > limits.max_depth:
                return (
                    f"metadata nested too deeply: more than {limits.max_depth} levels of objects and lists "
                    f"at {_where(loc)}; flatten it (e.g. dotted keys) or store the deep part as a JSON string"
                )
            size += 1 + max(len(item), 1)  # brackets and separators
            if isinstance(item, Mapping):
                keys += len(item)
                if keys > limits.max_keys:
                    return (
                        f"metadata too large: more than {limits.max_keys:,} keys (summed over all its "
                        "objects); keep fewer keys, e.g. store a large mapping as a list or a JSON string"
                    )
                for key in item:
                    if isinstance(key, str):
                        size += len(key) + 3  # quotes and colon
                        if size <= limits.max_bytes and not is_unicode(key):
                            return (
                                f"metadata key {key[:40]!r} at {_where(loc)} contains an unpaired "
                                "surrogate, which is not Unicode text and cannot be stored; use a valid "
                                "Unicode key"
                            )
            if size <= limits.max_bytes:
                if isinstance(item, Mapping):
                    stack.extend((sub, depth + 1, _child(loc, key)) for key, sub in item.items())
                else:
                    stack.extend((sub, depth + 1, (loc, f"[{i}]")) for i, sub in enumerate(item))
        elif isinstance(item, datetime):
            size += 26  # a canonical timestamp in quotes
        else:
            size += 1
        if size > limits.max_bytes:
            return _too_large(limits)
    return None


def _too_large(limits: MetadataLimits) -> str:
    return (
        f"metadata too large: more than {limits.max_bytes:,} bytes as JSON (UTF-8); keep large values "
        "elsewhere and store a reference to them (an id or a URL) in the metadata"
    )


def size_problem(json_text: str, limits: MetadataLimits) -> str | None:
    """The size problem of metadata whose compact JSON text is ``json_text``, or None."""
    if (
        len(json_text) > limits.max_bytes
        or len(json_text.encode("utf-8", "surrogatepass")) > limits.max_bytes
    ):
        return _too_large(limits)
    return None


def _timestamp(value: Any) -> Any:
    if isinstance(value, datetime):
        return canonical_timestamp(value)
    raise TypeError(f"{type(value).__name__} is not a JSON type")


def metadata_problem(value: Mapping[Any, Any], limits: MetadataLimits) -> str | None:
    """:func:`shape_problem`, then the exact size of the compact JSON text (datetimes as canonical
    timestamps), or None. Values that are not JSON data are left to the encoder to refuse."""
    problem = shape_problem(value, limits)
    if problem is not None:
        return problem
    try:
        text = json.dumps(
            value, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_timestamp
        )
    except (TypeError, ValueError, OverflowError):
        return None
    return size_problem(text, limits)


_UNPAIRED: Final = (
    "contains an unpaired surrogate, which is not Unicode text and cannot be stored; pass valid Unicode "
    "(e.g. decode bytes with errors='replace')"
)


def text_problem(value: Any, max_depth: int = MAX_CONTENT_DEPTH) -> str | None:
    """Where ``value`` holds a key or string that is not Unicode text (an unpaired surrogate), or is
    nested more than ``max_depth`` levels of objects and lists, or None.

    Walks without recursion; containers are Mappings, lists and tuples, and models are walked as their
    ``model_dump()``. A cyclic structure is refused at the depth limit.
    """
    stack: list[tuple[Any, int, _Loc]] = [(value, 1, None)]
    while stack:
        item, depth, loc = stack.pop()
        if hasattr(item, "model_dump") and callable(item.model_dump):
            item = item.model_dump()
        if isinstance(item, str):
            if not is_unicode(item):
                return f"the text at {_where(loc)} ({item[:40]!r}) {_UNPAIRED}"
        elif isinstance(item, Mapping | list | tuple):
            if depth > max_depth:
                return (
                    f"it is nested too deeply: more than {max_depth} levels of objects and lists at "
                    f"{_where(loc)}; store the deep part as a JSON string"
                )
            if isinstance(item, Mapping):
                for key, sub in item.items():
                    if isinstance(key, str) and not is_unicode(key):
                        return f"the key {key[:40]!r} at {_where(loc)} {_UNPAIRED}"
                    stack.append((sub, depth + 1, _child(loc, key)))
            else:
                stack.extend((sub, depth + 1, (loc, f"[{i}]")) for i, sub in enumerate(item))
    return None
