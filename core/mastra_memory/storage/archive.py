"""The archive mark on thread metadata (docs/spec.md §4.2, §4.4): how a thread is marked archived.

:mod:`.thread_ops` sets and removes the mark; :mod:`.pages` leaves marked threads out of
``list_threads`` unless ``include_archived=True``; :mod:`.threads` keeps the mark storage-owned, so a
caller's metadata never sets, clears or collides with it.

The mark lives under namespaced keys (``mastraMemoryArchived``/``mastraMemoryArchivedAt``): a user's or a
Mastra app's own ``{"archived": true}`` is plain metadata. Rows archived by earlier versions carry the old
form, ``archived: true`` *with* ``archived_at`` (a canonical timestamp, which only ``archive_thread`` wrote
beside it); it is still read as archived, and archiving or unarchiving such a thread rewrites it in the new
form.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .records import Thread

__all__ = [
    "ARCHIVED_AT_KEY",
    "ARCHIVED_KEY",
    "LEGACY_ARCHIVED_KEY",
    "MARK_KEYS",
    "is_archived",
    "keep_mark",
    "marked",
    "without_mark",
]

#: Thread metadata key that marks an archived thread (``True``); docs/spec.md §4.4.
ARCHIVED_KEY = "mastraMemoryArchived"
#: Thread metadata key holding when the thread was archived (canonical timestamp).
ARCHIVED_AT_KEY = "mastraMemoryArchivedAt"
#: The keys of the mark; storage-owned (a caller's values for them are ignored).
MARK_KEYS = (ARCHIVED_KEY, ARCHIVED_AT_KEY)
#: The old form's keys (before the mark moved to its own keys).
LEGACY_ARCHIVED_KEY = "archived"
LEGACY_ARCHIVED_AT_KEY = "archived_at"
_CANONICAL = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


def _legacy(metadata: Mapping[str, Any]) -> bool:
    at = metadata.get(LEGACY_ARCHIVED_AT_KEY)
    return (
        metadata.get(LEGACY_ARCHIVED_KEY) is True
        and isinstance(at, str)
        and _CANONICAL.fullmatch(at) is not None
    )


def marked(metadata: Mapping[str, Any] | None) -> bool:
    """Whether ``metadata`` carries the archive mark (the new form, or the old one an earlier version
    wrote)."""
    md = metadata or {}
    return md.get(ARCHIVED_KEY) is True or _legacy(md)


def is_archived(thread: Thread) -> bool:
    """Whether the thread is archived (§4.4): its metadata carries the mark (``mastraMemoryArchived`` is
    exactly ``True``, or the old ``archived``/``archived_at`` pair)."""
    return marked(thread.metadata)


def without_mark(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """``metadata`` without the mark, in either form (the old keys only when they are the old mark)."""
    md = dict(metadata or {})
    drop = set(MARK_KEYS)
    if _legacy(md):
        drop |= {LEGACY_ARCHIVED_KEY, LEGACY_ARCHIVED_AT_KEY}
    return {k: v for k, v in md.items() if k not in drop}


def keep_mark(given: dict[str, Any] | None, stored: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``given`` metadata with the mark's keys as ``stored`` has them (absent for a new thread): only
    ``archive_thread``/``unarchive_thread`` change the archive state (docs/spec.md §4.4)."""
    own = {k: stored[k] for k in MARK_KEYS if stored and k in stored}
    if given is None:
        return own or None
    if not own and not any(k in given for k in MARK_KEYS):
        return given
    return {**{k: v for k, v in given.items() if k not in MARK_KEYS}, **own}
