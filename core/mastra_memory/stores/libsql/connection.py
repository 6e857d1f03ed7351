"""One libsql connection driven from a single worker thread, with an async front.

The same machinery as the embedded store's ``SQLiteConnection`` (both are a
:class:`~..sqlite.connection.WorkerConnection`): every call runs on one dedicated thread, so calls are
serialised and the event loop never blocks on disk; ``transaction`` wraps a callable in
``BEGIN IMMEDIATE ... COMMIT`` and rolls back on any exception, so a failed write leaves the file as it was.
The pragmas are the ones Mastra's ``LibSQLStore`` sets on a local file (WAL, a busy timeout), so opening a
file Mastra wrote changes nothing in its header.
"""

from __future__ import annotations

from typing import Any

from ..sqlite.connection import MEMORY, WorkerConnection

__all__ = ["BUSY_TIMEOUT_MS", "MEMORY", "LibSQLConnection"]

#: Milliseconds a statement waits for another connection's lock (Mastra waits 5,000).
BUSY_TIMEOUT_MS = 10_000


class LibSQLConnection(WorkerConnection[Any]):
    """A libsql connection owned by one worker thread. Opens lazily; close with :meth:`close`."""

    thread_name = "mastra-memory-libsql"

    def _open(self) -> Any:
        import libsql

        conn = libsql.connect(self.path, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if self.path != MEMORY:
            conn.execute("PRAGMA journal_mode = WAL")
        return conn
