"""``LibSQLStorage``: the ``MemoryStorage`` of docs/spec.md §4 over Mastra's own LibSQL tables.

It opens the file a Mastra app writes with ``@mastra/libsql`` (``file:./local.db``) and works on it in
place: the columns, timestamps (ISO text) and metadata encoding (JSONB) of :mod:`.layout`, so that each
side reads what the other wrote (docs/spec.md §4.7). The SQL over them is the embedded store's
:mod:`..sqlite.tables`, given that layout; the contract itself (validation, merging, ``updated_at`` bumps,
clone, include windows, paging) is the template's.

Before its connection opens, the store checks the file's layout read-only and refuses one in this
project's embedded SQLite layout with ``StorageLayoutError``, changing nothing.
"""

from __future__ import annotations

from ..sqlite.tables import SQLiteTablesStorage
from .capabilities import LIBSQL_STORAGE_CAPABILITIES
from .connection import LibSQLConnection, require_libsql
from .layout import MASTRA_LAYOUT
from .settings import DEFAULT_URL, LibSQLSettings

__all__ = ["LibSQLStorage"]

STORE = "LIBSQL"


class LibSQLStorage(SQLiteTablesStorage):
    """Threads, messages and resources in Mastra's LibSQL file (``libsql:///path``, ``file:./local.db``).

    Safe for concurrent tasks: every call runs on the connection's single worker thread, and every write
    is one ``BEGIN IMMEDIATE`` transaction, so a failed call leaves the file as it was. A Mastra process
    may use the same file at the same time (both sides use WAL and wait for each other's locks).
    """

    store_name = STORE
    capabilities = LIBSQL_STORAGE_CAPABILITIES
    layout = MASTRA_LAYOUT
    database = "LibSQL"
    # The libsql driver raises ValueError for SQL errors (no DB-API hierarchy of its own).
    driver_errors = (ValueError,)
    healthy_file = "a LibSQL/SQLite file, writable and not corrupted"
    # The first unit may create the tables (a new file): it writes even when the call only reads.
    schema_in_transaction = True

    def __init__(self, url: str | LibSQLSettings = DEFAULT_URL) -> None:
        require_libsql("STORAGE", "JSONB")
        settings = url if isinstance(url, LibSQLSettings) else LibSQLSettings(url=url)
        super().__init__(LibSQLConnection(settings.path))
        self.settings = settings

    @property
    def path(self) -> str:
        """The file this storage works on (or ``:memory:``)."""
        return self._conn.path

    @property
    def url(self) -> str:
        """``libsql:///<path>``. Always this scheme, so that ``Memory`` never takes the file for one of its
        own SQLite files and puts the embedded vector store's tables into Mastra's file: with semantic recall
        on, it asks for ``vector=`` instead (docs/spec.md §4.7, §5.1)."""
        return f"libsql:///{self._conn.path}"
