"""Which layout a SQLite/LibSQL file holds, judged read-only before any write (docs/spec.md §4.7).

Two layouts share the table names ``mastra_threads``, ``mastra_messages`` and ``mastra_resources``:

* ``mastra-memory``: the embedded default of this project (``resource_id``, ``created_at`` as epoch
  milliseconds, ``working_memory``, JSON text metadata);
* ``mastra``: the file Mastra's ``@mastra/libsql`` writes (``"resourceId"``, ``"createdAt"`` as ISO text,
  ``"workingMemory"``, JSONB thread and resource metadata), which the ``libsql`` store opens in place.

A storage opened on the other layout must refuse before it changes a byte: ``CREATE TABLE IF NOT EXISTS``
would pass over the foreign tables and the first query would fail part-way (issue 25). The check opens its
own read-only connection (``mode=ro``), so even the switch to WAL of the storage's own connection waits
until the layout is known to be the right one.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final

from ...storage.layouts import (
    MASTRA_ONLY_TABLE,
    MEMORY_TABLES,
    Layout,
    StorageLayoutError,
    layout_of_fields,
    wrong_layout,
)
from .connection import BUSY_TIMEOUT_MS

__all__ = ["LAYOUTS", "Layout", "StorageLayoutError", "check_layout", "file_layout"]

#: What each layout is, for error messages.
LAYOUTS: Final[dict[Layout, str]] = {
    "mastra-memory": "mastra-memory's embedded SQLite layout (columns resource_id, created_at as epoch "
    "milliseconds, working_memory)",
    "mastra": 'Mastra\'s LibSQL layout (@mastra/libsql: columns "resourceId", "createdAt" as ISO text, '
    '"workingMemory")',
}

#: The URL scheme of the store that opens each layout (what `mastra-memory migrate` reads and writes).
_SCHEME: Final[dict[Layout, str]] = {"mastra-memory": "sqlite:///", "mastra": "libsql:///"}

#: How to open a file of each layout from Python.
_OPEN_WITH: Final[dict[Layout, str]] = {
    "mastra-memory": "the embedded default (Memory(storage='sqlite:///<path>') or SQLiteStorage('<path>'))",
    "mastra": "the libsql store (pip install 'mastra-memory[libsql]'; Memory(storage='libsql:///<path>') or "
    "LibSQLStorage('<path>'))",
}


def file_layout(path: str) -> Layout | None:
    """The layout of the memory tables in the SQLite file at ``path``: ``None`` when the file does not
    exist or has none of them. Read through a read-only connection that changes nothing."""
    if path == ":memory:" or not Path(path).is_file():
        return None
    uri = f"{Path(path).resolve().as_uri()}?mode=ro"
    # Another process may hold the file's lock (a write, the switch of a new file to WAL): wait as the
    # storage's own connection would.
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        for table in MEMORY_TABLES:
            columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})").fetchall()}
            layout = layout_of_fields(columns)
            if layout is not None:
                return layout
        # A Mastra file whose memory tables are not there (yet): Mastra's init creates its workflow table
        # first. Memory tables of this project's layout there would break Mastra's next open.
        found = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (MASTRA_ONLY_TABLE,)
        ).fetchone()
        return "mastra" if found else None
    finally:
        conn.close()


def check_layout(path: str, expected: Layout, store: str) -> None:
    """Raise :class:`StorageLayoutError` (id ``MASTRA_STORAGE_<STORE>_INIT_WRONG_LAYOUT``) when the file at
    ``path`` holds the other layout; a new or empty file passes."""
    found = file_layout(path)
    if found is None or found == expected:
        return
    raise wrong_layout(
        store,
        path,
        found,
        expected,
        descriptions=LAYOUTS,
        open_with=_OPEN_WITH[found],
        convert=f"convert it into a new file with `mastra-memory migrate --from {_SCHEME[found]}{path} --to "
        f"{_SCHEME[expected]}<new file>`",
        details={"path": path},
    )
