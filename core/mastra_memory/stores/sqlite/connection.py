"""One SQLite connection driven from a single worker thread, with an async front.

Every call runs on the same dedicated thread, so calls are serialised (safe for concurrent tasks) and
the event loop never blocks on disk. ``transaction`` wraps a callable in BEGIN IMMEDIATE ... COMMIT,
rolling back on any exception, so a failed write leaves the file as it was. :class:`WorkerConnection`
is that machinery for any DB-API driver; the ``libsql`` store's connection is one too.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

T = TypeVar("T")
C = TypeVar("C")

MEMORY = ":memory:"
#: Milliseconds a statement waits for another connection's lock.
BUSY_TIMEOUT_MS = 10_000


def sqlite_path(url_or_path: str | Path) -> str:
    """Accept ``./memory.db``, ``file:./memory.db``, ``sqlite:///memory.db`` or ``:memory:``."""
    text = str(url_or_path)
    for prefix in ("sqlite:///", "sqlite://", "file:"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
            break
    return text or MEMORY


def write_transaction(conn: Any, fn: Callable[[Any], T]) -> T:
    """``fn(conn)`` inside one ``BEGIN IMMEDIATE`` ... ``COMMIT`` transaction on an open connection; any
    exception (cancellation included) rolls it back and propagates."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = fn(conn)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return result


class WorkerConnection(Generic[C]):
    """A database connection owned by one worker thread. Opens lazily (:meth:`_open`); close with
    :meth:`close`. ``SQLiteConnection`` and the ``libsql`` store's connection differ only in how they open."""

    #: The worker thread's name prefix.
    thread_name: ClassVar[str]

    def __init__(self, path: str) -> None:
        self.path = path
        self._executor: ThreadPoolExecutor | None = None
        self._conn: C | None = None

    def _open(self) -> C:
        """A new connection to :attr:`path` (its parent directory exists), pragmas set."""
        raise NotImplementedError

    def _write_guard(self) -> AbstractContextManager[Any]:
        """Held around each write transaction, from ``BEGIN`` to ``COMMIT``/``ROLLBACK``. Nothing by default:
        a driver that keeps the GIL while it waits for a lock overrides it (the ``libsql`` store)."""
        return contextlib.nullcontext()

    def _connection(self) -> C:
        if self._conn is None:
            if self.path != MEMORY:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._conn = self._open()
        return self._conn

    async def run(self, fn: Callable[[C], T]) -> T:
        """Run ``fn(connection)`` on the worker thread (autocommit mode; use for reads)."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=self.thread_name)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(self._connection()))

    async def transaction(self, fn: Callable[[C], T]) -> T:
        """Run ``fn(connection)`` inside one write transaction; any exception rolls everything back."""

        def wrapped(conn: Any) -> T:
            with self._write_guard():
                return write_transaction(conn, fn)

        return await self.run(wrapped)

    async def close(self) -> None:
        """Close the connection and stop the worker thread. Safe to call twice."""
        if self._executor is None:
            return
        conn: Any = self._conn

        def _close() -> None:
            if conn is not None:
                conn.close()

        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, _close)
        self._executor.shutdown(wait=True)
        self._executor = None
        self._conn = None


class SQLiteConnection(WorkerConnection[sqlite3.Connection]):
    """An SQLite connection owned by one worker thread. Open lazily; close with :meth:`close`."""

    thread_name = "mastra-memory-sqlite"

    def __init__(self, path: str | Path) -> None:
        super().__init__(sqlite_path(path))

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if self.path != MEMORY:
            _enable_wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn


def _enable_wal(conn: sqlite3.Connection) -> None:
    """``PRAGMA journal_mode = WAL``, retried while another connection holds the lock it needs.

    Switching a file to WAL takes an exclusive lock, and SQLite reports "database is locked" for it at
    once rather than through the busy handler: two processes opening one fresh file together failed that
    way in 18 of 600 tries (tests/faults). The retry waits as long as any other statement would.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)
