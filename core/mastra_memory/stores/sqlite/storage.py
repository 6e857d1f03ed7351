"""The embedded SQLite ``MemoryStorage`` (docs/spec.md §4): the reference implementation of the contract.

This module holds only this layout's tables; the SQL over them is :mod:`.tables` (shared with the
``libsql`` store) and the contract itself (validation, merging, bumps, clone, include windows, paging
rules) is the :class:`~mastra_memory.storage.MemoryStorage` template.

Layout: tables ``mastra_threads``, ``mastra_messages``, ``mastra_resources`` and
``mastra_observational_memory`` (:mod:`.om_tables`). Timestamps are integer
epoch milliseconds, so ordering by ``(created_at, id)`` is exact; message content and metadata are JSON
text. Every call runs as one unit of work on the connection's single worker thread, which also serialises
concurrent tasks; a write is one ``BEGIN IMMEDIATE`` transaction (docs/spec.md §4.5).

The §4.6 metadata filter is evaluated in two steps: SQL narrows the candidates with typed JSON checks
(``json_type`` plus equality for strings; type only for numbers), then the template decides exactly with
:func:`~mastra_memory.storage.metadata_matches`. The SQL step only ever keeps a superset.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from ...messages import epoch_ms
from .connection import SQLiteConnection
from .om_tables import om_schema
from .settings import DEFAULT_URL, SQLiteSettings
from .tables import SQLiteTablesStorage, TableLayout

__all__ = ["SQLiteStorage"]

STORE = "SQLITE"

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS mastra_threads (
        id TEXT PRIMARY KEY,
        resource_id TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        metadata TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS mastra_threads_resource_idx ON mastra_threads (resource_id)",
    """CREATE TABLE IF NOT EXISTS mastra_messages (
        id TEXT PRIMARY KEY,
        thread_id TEXT NOT NULL,
        resource_id TEXT,
        role TEXT NOT NULL,
        type TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at INTEGER NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS mastra_messages_thread_idx ON mastra_messages (thread_id, created_at, id)",
    "CREATE INDEX IF NOT EXISTS mastra_messages_resource_idx "
    "ON mastra_messages (resource_id, created_at, id)",
    """CREATE TABLE IF NOT EXISTS mastra_resources (
        id TEXT PRIMARY KEY,
        working_memory TEXT,
        metadata TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    )""",
    # Observational memory (docs/spec.md §4.8): Mastra's columns under the records' field names.
    *om_schema(mastra=False),
)

#: Columns named as the records' fields; epoch-millisecond timestamps validate as such when read back.
OWN_LAYOUT: Final = TableLayout(
    name="mastra-memory",
    schema=_SCHEMA,
    timestamp=epoch_ms,
    narrow_in_sql=True,
    thread_index_hint="+",
)


class SQLiteStorage(SQLiteTablesStorage):
    """Threads, messages and resources in one SQLite file (default ``./memory.db``; ``:memory:`` works).

    Safe for concurrent tasks: every call runs on the connection's single worker thread, and every write
    is one transaction, so a failed call leaves the database as it was.
    """

    store_name = STORE
    layout = OWN_LAYOUT
    database = "SQLite"
    driver_errors = (sqlite3.Error,)

    def __init__(self, url: str | SQLiteSettings = DEFAULT_URL) -> None:
        settings = url if isinstance(url, SQLiteSettings) else SQLiteSettings(url=url)
        super().__init__(SQLiteConnection(settings.url))
        self.settings = settings

    @property
    def url(self) -> str:
        """The database location as configured (a path, ``file:`` / ``sqlite://`` URL, or ``:memory:``)."""
        return self.settings.url
