"""Whether a message's vector records can be written, decided before anything is stored (docs/spec.md §5.4).

The write path refuses a message the vector side cannot hold *before* the storage write, and reindex skips
such a message instead of abandoning its thread; both ask the functions here. They check what the shared
vector validation does not see: the vector ids derived from the message id, the text of the metadata keys
the message sets, and the thread metadata spread into every record, against what a store declares it
refuses (its manifest's deviations).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...filters.numbers import INT64_MAX, INT64_MIN
from ...messages import MastraDBMessage
from ...metadata_limits import is_unicode, shown
from ...vector import MAX_ID_LENGTH

#: How an error names the vector metadata keys the write path sets from the message itself (§5.4).
_FIXED_KEYS = {
    "message_id": "its id",
    "thread_id": "its thread id",
    "resource_id": "its resource id",
    "role": "its role",
    "content": "its text",
    "created_at": "its created_at",
    "chunk_index": "its chunk number",
}
#: The metadata keys the write path sets itself: thread metadata under these names is overridden.
FIXED_KEYS: frozenset[str] = frozenset(_FIXED_KEYS)


@dataclass(frozen=True, slots=True)
class Record:
    """One vector record of the write path: the message, the vector id, the chunk text, the metadata."""

    message: MastraDBMessage
    id: str
    text: str
    metadata: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StoreRules:
    """What a vector store declares it refuses beyond the shared validation (its manifest's deviations)."""

    nul: bool
    int64: bool
    store: str


#: What every store refuses in text: unpaired surrogates only.
_ANY_STORE = StoreRules(nul=False, int64=False, store="any")


def shown_id(message_id: str) -> str:
    """A message id for an error message: escaped, and cut to its start when it is long."""
    if len(message_id) <= 80:
        return repr(shown(message_id))
    return f"{shown(message_id[:40])!r}... ({len(message_id)} characters)"


def _string_issue(text: str, rules: StoreRules) -> str | None:
    """What a store with ``rules`` cannot hold in ``text`` (``"contains ..."``), or None."""
    if not is_unicode(text):
        return "contains an unpaired surrogate: it is not Unicode text, no vector store holds it"
    if rules.nul and "\x00" in text:
        return f"contains U+0000, which the {rules.store} vector store cannot hold"
    return None


def record_problem(rec: Record, rules: StoreRules) -> str | None:
    """Why the vector id or the fixed metadata keys of ``rec`` (those the message sets) cannot be written
    to a store with ``rules``, or None."""
    if len(rec.id) > MAX_ID_LENGTH:
        suffix = rec.id[len(rec.message.id) :]
        return (
            f"its vector id (the message id{' plus the chunk suffix ' + repr(suffix) if suffix else ''}) "
            f"has {len(rec.id)} characters, more than the {MAX_ID_LENGTH} every vector store accepts "
            f"(docs/spec.md §3.5); use a message id of at most {MAX_ID_LENGTH - len(suffix)} characters"
        )
    # Every store holds U+0000 in an id (docs/spec.md §3.5), so only surrogates are refused there; the
    # message id is also metadata (``message_id``), where the store's rules do apply.
    issue = _string_issue(rec.id, _ANY_STORE)
    if issue:
        return f"its vector id {issue}"
    for key, what in _FIXED_KEYS.items():
        value = rec.metadata.get(key)
        issue = _string_issue(value, rules) if isinstance(value, str) else None
        if issue:
            return f"{what} {issue}"
    return None


#: A place in nested metadata: (key or list index, the parent's place or None at the top).
_Place = tuple[str | int, Any]


def _path(place: _Place) -> str:
    """``a.b[0].c`` for a place (built only for an error message)."""
    parts: list[str] = []
    node: _Place | None = place
    while node is not None:
        key, node = node
        parts.append(f"[{key}]" if isinstance(key, int) else (f".{key}" if node is not None else key))
    path = shown("".join(reversed(parts)))
    return path if len(path) <= 120 else f"{path[:60]}...{path[-40:]}"


def thread_metadata_problem(metadata: Mapping[str, Any], rules: StoreRules) -> str | None:
    """Why the thread metadata spread into a record (its keys other than the fixed ones) cannot be written
    to a store with ``rules``, or None. Walks without recursion (stored metadata may be nested deeply) and
    reports the first problem in key order."""
    stack: list[tuple[Any, _Place]] = [(v, (k, None)) for k, v in metadata.items() if k not in _FIXED_KEYS]
    stack.reverse()
    while stack:
        value, place = stack.pop()
        key = place[0]
        issue = _string_issue(key, rules) if isinstance(key, str) else None
        if issue:  # the path is rendered only for the error: walking stays linear in the metadata size
            return f"its thread's metadata key {_path(place)!r} {issue}"
        if isinstance(value, str):
            issue = _string_issue(value, rules)
        elif isinstance(value, int) and not isinstance(value, bool):
            # The signed 64-bit range, for stores declaring the ``int64-range`` deviation.
            if rules.int64 and not INT64_MIN <= value <= INT64_MAX:
                issue = f"is an integer outside the signed 64-bit range the {rules.store} vector store holds"
        elif isinstance(value, Mapping):
            stack.extend((item, (str(k), place)) for k, item in list(value.items())[::-1])
        elif isinstance(value, list | tuple):
            stack.extend((item, (i, place)) for i, item in list(enumerate(value))[::-1])
        if issue:
            return f"its thread's metadata at {_path(place)!r} {issue}"
    return None
