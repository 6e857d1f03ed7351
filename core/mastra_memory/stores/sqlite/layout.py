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
from typing import Final, Literal

from ...errors import StorageError
from .connection import BUSY_TIMEOUT_MS

__all__ = ["LAYOUTS", "Layout", "StorageLayoutError", "check_layout", "file_layout", "layout_of_columns"]

Layout = Literal["mastra-memory", "mastra"]

#: The three memory tables both layouts name alike.
MEMORY_TABLES: Final = ("mastra_threads", "mastra_messages", "mastra_resources")

#: What each layout is, for error messages.
LAYOUTS: Final[dict[Layout, str]] = {
    "mastra-memory": "mastra-memory's embedded SQLite layout (columns resource_id, created_at as epoch "
    "milliseconds, working_memory)",
    "mastra": 'Mastra\'s LibSQL layout (@mastra/libsql: columns "resourceId", "createdAt" as ISO text, '
    '"workingMemory")',
}

#: How to open a file of each layout from Python.
#: The URL scheme of the store that opens each layout (what `mastra-memory migrate` reads and writes).
_SCHEME: Final[dict[Layout, str]] = {"mastra-memory": "sqlite:///", "mastra": "libsql:///"}

_OPEN_WITH: Final[dict[Layout, str]] = {
    "mastra-memory": "the embedded default (Memory(storage='sqlite:///<path>') or SQLiteStorage('<path>'))",
    "mastra": "the libsql store (pip install 'mastra-memory[libsql]'; Memory(storage='libsql:///<path>') or "
    "LibSQLStorage('<path>'))",
}

# Columns only one layout has; a table with either set tells its layout.
_MASTRA_COLUMNS: Final = frozenset({"resourceId", "createdAt", "updatedAt", "workingMemory"})
_OWN_COLUMNS: Final = frozenset({"resource_id", "created_at", "updated_at", "working_memory"})
#: A table only Mastra's LibSQLStore creates (before its memory tables).
_MASTRA_ONLY_TABLE: Final = "mastra_workflow_snapshot"


class StorageLayoutError(StorageError):
    """The file holds the other layout of the memory tables; nothing was written (docs/spec.md §4.7).

    ``details`` has ``path``, ``found`` and ``expected`` (``"mastra-memory"`` or ``"mastra"``).
    """

    default_category = "USER"


def layout_of_columns(columns: set[str]) -> Layout | None:
    """The layout a memory table with these columns belongs to, or ``None`` when they tell neither."""
    if columns & _MASTRA_COLUMNS:
        return "mastra"
    if columns & _OWN_COLUMNS:
        return "mastra-memory"
    return None


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
            layout = layout_of_columns(columns)
            if layout is not None:
                return layout
        # A Mastra file whose memory tables are not there (yet): Mastra's init creates its workflow table
        # first. Memory tables of this project's layout there would break Mastra's next open.
        found = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (_MASTRA_ONLY_TABLE,)
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
    raise StorageLayoutError(
        f"{path} holds {LAYOUTS[found]}, not {LAYOUTS[expected]}; nothing was written. Open it with "
        f"{_OPEN_WITH[found]}, or convert it into a new file with `mastra-memory migrate --from "
        f"{_SCHEME[found]}{path} --to {_SCHEME[expected]}<new file>` (docs/sharing-memory-with-mastra.md, "
        "'Converting').",
        id=f"MASTRA_STORAGE_{store}_INIT_WRONG_LAYOUT",
        details={"path": path, "found": found, "expected": expected},
    )
