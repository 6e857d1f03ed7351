"""The archive mark on thread metadata (docs/spec.md §4.2, §4.4): how a thread is marked archived.

:mod:`.thread_ops` sets and removes the mark; :mod:`.pages` leaves marked threads out of
``list_threads`` unless ``include_archived=True``.
"""

from __future__ import annotations

from .records import Thread

__all__ = ["ARCHIVED_AT_KEY", "ARCHIVED_KEY", "is_archived"]

#: Thread metadata key that marks an archived thread (``True``); docs/spec.md §4.4.
ARCHIVED_KEY = "archived"
#: Thread metadata key holding when the thread was archived (canonical timestamp).
ARCHIVED_AT_KEY = "archived_at"


def is_archived(thread: Thread) -> bool:
    """Whether the thread's metadata marks it archived: ``archived`` is exactly ``True`` (§4.6 equality)."""
    return (thread.metadata or {}).get(ARCHIVED_KEY) is True
