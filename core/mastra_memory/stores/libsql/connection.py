"""One libsql connection driven from a single worker thread, with an async front.

The same shape as the embedded store's ``SQLiteConnection``: every call runs on one dedicated thread, so
calls are serialised and the event loop never blocks on disk; ``transaction`` wraps a callable in
``BEGIN IMMEDIATE ... COMMIT`` and rolls back on any exception, so a failed write leaves the file as it
was. The pragmas are the ones Mastra's ``LibSQLStore`` sets on a local file (WAL, a busy timeout), so
opening a file Mastra wrote changes nothing in its header.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

MEMORY = ":memory:"
#: Milliseconds a statement waits for another connection's lock (Mastra waits 5,000).
BUSY_TIMEOUT_MS = 10_000


class LibSQLConnection:
    """A libsql connection owned by one worker thread. Opens lazily; close with :meth:`close`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._executor: ThreadPoolExecutor | None = None
        self._conn: Any = None

    def _connection(self) -> Any:
        if self._conn is None:
            import libsql

            if self.path != MEMORY:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            conn = libsql.connect(self.path, isolation_level=None)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if self.path != MEMORY:
                conn.execute("PRAGMA journal_mode = WAL")
            self._conn = conn
        return self._conn

    async def run(self, fn: Callable[[Any], T]) -> T:
        """Run ``fn(connection)`` on the worker thread (autocommit mode; use for reads)."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mastra-memory-libsql")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(self._connection()))

    async def transaction(self, fn: Callable[[Any], T]) -> T:
        """Run ``fn(connection)`` inside one write transaction; any exception rolls everything back."""

        def wrapped(conn: Any) -> T:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

        return await self.run(wrapped)

    async def close(self) -> None:
        """Close the connection and stop the worker thread. Safe to call twice."""
        if self._executor is None:
            return
        conn = self._conn

        def _close() -> None:
            if conn is not None:
                conn.close()

        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, _close)
        self._executor.shutdown(wait=True)
        self._executor = None
        self._conn = None
