"""How a LangGraph item is kept in a ``MemoryStorage``: one thread record per (namespace, key).

A storage already holds threads by id, lists them by resource and by exact §4.6 metadata equality
(docs/spec.md §4.4, §4.6) and keeps ``created_at``/``updated_at``, which is everything a key-value store
needs, on every backend we ship. So an item is a thread of the store's *scope* resource:

* its id is ``lg-`` + the SHA-256 of (scope, namespace, key): fixed length and plain ASCII whatever the
  labels and key hold (quotes, ``%``, ``*``, slashes, 10,000 characters), so no label or key is ever
  spliced into an id, a path or a query;
* its metadata has one key per namespace label, ``lg_ns_0`` … ``lg_ns_<n-1>``, compared by the storage
  with strict equality, so a namespace prefix is an exact match on those keys and never a text prefix
  (``("a",)`` never reaches ``("ab",)``; the wildcard ``*`` and ``%`` are plain characters);
* the namespace, key and value themselves are one JSON text with every non-ASCII character escaped
  (``lg_item``), so no backend sees a key of the user's value as a metadata key (MongoDB refuses ``$``
  and ``.`` in keys) and a NUL in a key is stored as the six characters ``\\u0000``.

Every record read back is checked against the namespace and key it was asked for, so a hash collision
could never return another namespace's item.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langgraph.store.base import MatchCondition
from mastra_memory import ValidationError
from mastra_memory.metadata_limits import RECORD_METADATA, metadata_problem
from mastra_memory.storage.records import Thread

__all__ = [
    "DEPTH_KEY",
    "EXPIRES_KEY",
    "ITEM_KEY",
    "TTL_KEY",
    "VECTORS_KEY",
    "StoredItem",
    "decode",
    "encode_metadata",
    "item_id",
    "label_key",
    "matches_condition",
    "prefix_metadata",
]

ITEM_KEY = "lg_item"
DEPTH_KEY = "lg_depth"
TTL_KEY = "lg_ttl_minutes"
EXPIRES_KEY = "lg_expires_at"
VECTORS_KEY = "lg_vectors"
_LABEL_PREFIX = "lg_ns_"


def label_key(position: int) -> str:
    """The metadata key holding the namespace label at ``position``."""
    return f"{_LABEL_PREFIX}{position}"


def item_id(scope: str, namespace: Sequence[str], key: str) -> str:
    """The thread id of one item: a digest, so hostile labels and keys never shape an id."""
    text = json.dumps([scope, list(namespace), key], ensure_ascii=True, separators=(",", ":"))
    return "lg-" + hashlib.sha256(text.encode("ascii")).hexdigest()


def prefix_metadata(prefix: Sequence[str], wildcards: bool) -> dict[str, Any]:
    """The §4.6 metadata filter that selects a namespace prefix; with ``wildcards`` (namespace listing)
    a ``*`` label is left to Python, otherwise (search, as LangGraph's stores) it is a plain label."""
    return {label_key(i): label for i, label in enumerate(prefix) if not (wildcards and label == "*")}


def _json_value(value: Mapping[str, Any], namespace: Sequence[str], key: str) -> str:
    try:
        return json.dumps(
            {"namespace": list(namespace), "key": key, "value": dict(value)},
            ensure_ascii=True,
            allow_nan=False,
            separators=(",", ":"),
        )
    except (TypeError, ValueError) as exc:
        raise ValidationError(
            f"the value of item {key!r} in namespace {tuple(namespace)!r} is not JSON ({exc}); "
            "MastraStore keeps values as JSON (dicts, lists, strings, finite numbers, booleans, None)",
            domain="LANGGRAPH",
        ) from exc


def encode_metadata(
    namespace: Sequence[str],
    key: str,
    value: Mapping[str, Any],
    *,
    ttl_minutes: float | None,
    expires_at_ms: int | None,
    vectors: int,
) -> dict[str, Any]:
    """The thread metadata of one item (see the module docstring)."""
    metadata: dict[str, Any] = {label_key(i): label for i, label in enumerate(namespace)}
    metadata[DEPTH_KEY] = len(namespace)
    metadata[ITEM_KEY] = _json_value(value, namespace, key)
    metadata[VECTORS_KEY] = vectors
    if ttl_minutes is not None:
        if not (isinstance(ttl_minutes, int | float) and math.isfinite(ttl_minutes) and ttl_minutes > 0):
            raise ValidationError(
                f"ttl must be a positive number of minutes or None, got {ttl_minutes!r}", domain="LANGGRAPH"
            )
        metadata[TTL_KEY] = float(ttl_minutes)
        metadata[EXPIRES_KEY] = expires_at_ms
    # The storage's own limits on a record's metadata (docs/spec.md §4.1), checked before anything is
    # embedded or written, so a value too large leaves nothing behind.
    problem = metadata_problem(metadata, RECORD_METADATA)
    if problem is not None:
        raise ValidationError(
            f"item {key!r} in namespace {tuple(namespace)!r} cannot be stored: {problem} (a value's JSON "
            f"text, non-ASCII escaped, may take up to about {RECORD_METADATA.max_bytes // 1024} KiB)",
            domain="LANGGRAPH",
        )
    return metadata


@dataclass(frozen=True)
class StoredItem:
    """One item as read back from its thread record."""

    id: str
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    ttl_minutes: float | None
    expires_at_ms: int | None
    vectors: int
    thread: Thread

    def expired(self, now_ms: int) -> bool:
        """Past its TTL (an item without one never expires)."""
        return self.expires_at_ms is not None and self.expires_at_ms <= now_ms


def decode(thread: Thread) -> StoredItem | None:
    """The item a thread record holds, or None for a record that is not an item of this integration."""
    metadata = thread.metadata or {}
    text = metadata.get(ITEM_KEY)
    if not isinstance(text, str):
        return None
    try:
        body = json.loads(text)
        namespace = tuple(body["namespace"])
        key = body["key"]
        value = body["value"]
    except (ValueError, KeyError, TypeError):
        return None
    if not all(isinstance(label, str) for label in namespace) or not isinstance(key, str):
        return None
    ttl = metadata.get(TTL_KEY)
    expires = metadata.get(EXPIRES_KEY)
    vectors = metadata.get(VECTORS_KEY)
    return StoredItem(
        id=thread.id,
        namespace=namespace,
        key=key,
        value=value if isinstance(value, dict) else {},
        created_at=thread.created_at,
        updated_at=thread.updated_at,
        ttl_minutes=float(ttl) if isinstance(ttl, int | float) and not isinstance(ttl, bool) else None,
        expires_at_ms=int(expires)
        if isinstance(expires, int | float) and not isinstance(expires, bool)
        else None,
        vectors=vectors if isinstance(vectors, int) and not isinstance(vectors, bool) else 0,
        thread=thread,
    )


def _labels_match(labels: Sequence[str], pattern: Sequence[str]) -> bool:
    return all(p == "*" or label == p for label, p in zip(labels, pattern, strict=True))


def matches_condition(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    """LangGraph's prefix/suffix match with ``*`` wildcards, label by label (never text)."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        return _labels_match(namespace[: len(path)], path)
    if condition.match_type == "suffix":
        return _labels_match(namespace[len(namespace) - len(path) :], path)
    raise ValidationError(f"unsupported namespace match type {condition.match_type!r}", domain="LANGGRAPH")
