"""One libsql connection driven from a single worker thread, with an async front.

The same machinery as the embedded store's ``SQLiteConnection`` (both are a
:class:`~..sqlite.connection.WorkerConnection`): every call runs on one dedicated thread, so calls are
serialised and the event loop never blocks on disk; ``transaction`` wraps a callable in
``BEGIN IMMEDIATE ... COMMIT`` and rolls back on any exception, so a failed write leaves the file as it was.
The pragmas are the ones Mastra's ``LibSQLStore`` sets on a local file (WAL, a busy timeout), so opening a
file Mastra wrote changes nothing in its header.

The libsql driver keeps the GIL while a statement waits for another connection's lock. Two connections of
one process on one file could then deadlock until the busy timeout: one holds the write lock and needs the
GIL for the Python between its statements, the other holds the GIL waiting for the lock. So the write
transactions of one process on one file take turns on a process-wide lock first (:func:`_file_lock`),
which waits with the GIL released; other processes are met by SQLite's own locking as before.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from typing import Any, Literal

from ...errors import ConfigError
from ..sqlite.connection import MEMORY, WorkerConnection

__all__ = ["BUSY_TIMEOUT_MS", "MEMORY", "LibSQLConnection", "require_libsql"]

#: Milliseconds a statement waits for another connection's lock (Mastra waits 5,000).
BUSY_TIMEOUT_MS = 10_000


_FILE_LOCKS: dict[str, threading.Lock] = {}
_FILE_LOCKS_GUARD = threading.Lock()


def _file_lock(path: str) -> threading.Lock:
    """The process-wide lock of the write transactions on one file (by its real path)."""
    key = os.path.realpath(path)
    with _FILE_LOCKS_GUARD:
        return _FILE_LOCKS.setdefault(key, threading.Lock())


class LibSQLConnection(WorkerConnection[Any]):
    """A libsql connection owned by one worker thread. Opens lazily; close with :meth:`close`."""

    thread_name = "mastra-memory-libsql"

    def _write_guard(self) -> threading.Lock:
        # A :memory: database is private to its connection: nothing to take turns on.
        return threading.Lock() if self.path == MEMORY else _file_lock(self.path)

    def _open(self) -> Any:
        import libsql

        conn = libsql.connect(self.path, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if self.path != MEMORY:
            conn.execute("PRAGMA journal_mode = WAL")
        return conn


def require_libsql(domain: Literal["STORAGE", "VECTOR"], needs: str) -> None:
    """Raise ``ConfigError`` (``MASTRA_<DOMAIN>_LIBSQL_MISSING_EXTRA``) when the libsql driver is not
    installed; ``needs`` says what of the libSQL engine Mastra's file uses that plain SQLite lacks."""
    if importlib.util.find_spec("libsql") is None:
        raise ConfigError(
            f"the libsql store needs the libSQL engine ({needs}, which Mastra's file uses): "
            "pip install 'mastra-memory[libsql]'",
            id=f"MASTRA_{domain}_LIBSQL_MISSING_EXTRA",
            domain=domain,
        )
