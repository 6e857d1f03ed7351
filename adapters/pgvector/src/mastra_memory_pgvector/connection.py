"""The connection layer shared by the vector store and the storage: a lazily opened psycopg async pool,
one transaction per call, and retries of idempotent calls after a lost connection.

Nothing connects until the first call, so building a store is free and a store that is never used needs
no server. The first call opens one direct connection (so a wrong DSN fails fast with the server's own
message), runs the caller's one-time setup on it in a transaction, then opens the pool.

A pool belongs to the event loop that opened it, so there is one pool per loop the database is used from
(a script may call ``asyncio.run`` once per operation), and each is closed on its own loop before that
loop ends: see :class:`_LoopPool`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

import psycopg
from psycopg_pool import AsyncConnectionPool

from .settings import PgVectorSettings

__all__ = ["Connection", "PgDatabase", "is_transient", "quote_ident"]

logger = logging.getLogger("mastra_memory_pgvector")

T = TypeVar("T")
Connection = psycopg.AsyncConnection[Any]
Pool = AsyncConnectionPool[Connection]

# SQLSTATEs after which the whole transaction can simply be run again.
_TRANSIENT_STATES: Final = frozenset({"40001", "40P01", "57P01", "57P02", "57P03", "53300"})
# Seconds psycopg_pool waits for its tasks to stop when a pool closes (its own default).
_CLOSE_TIMEOUT: Final = 5.0
_POOL_NAME: Final = "mastra-memory-pgvector"
_pool_numbers = itertools.count(1)


class _QuietShutdown(logging.Filter):
    """Drops psycopg_pool's warnings about one of our pools whose error is a cancellation.

    When a loop ends while a pool's worker is opening a connection, psycopg_pool logs "error connecting in
    'mastra-memory-pgvector-1': " with an empty message: nothing failed, the loop's shutdown cancelled it.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        return not (
            isinstance(args, tuple)
            and len(args) == 2
            and isinstance(args[0], str)
            and args[0].startswith(_POOL_NAME)
            and isinstance(args[1], asyncio.CancelledError)
        )


logging.getLogger("psycopg.pool").addFilter(_QuietShutdown())


def quote_ident(name: str) -> str:
    """``name`` as a quoted SQL identifier (names are checked for NUL and length by their callers)."""
    if "\x00" in name:
        raise ValueError("identifiers cannot contain NUL")
    return '"' + name.replace('"', '""') + '"'


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` is a lost connection, a server shutdown, a serialization failure or a deadlock."""
    if not isinstance(exc, psycopg.OperationalError | psycopg.errors.SerializationFailure):
        return False
    state = getattr(exc, "sqlstate", None)
    return state is None or state.startswith("08") or state in _TRANSIENT_STATES


class _LoopPool:
    """The pool of one event loop, and the task that closes it on that loop before the loop ends.

    Why the watcher task: psycopg_pool runs its maintenance (filling the pool to ``min_size``, growing it,
    scheduling) in worker tasks of the loop that opened the pool, and a worker treats ``CancelledError``
    raised inside a maintenance task like any other failure: ``_add_connection`` logs "error connecting"
    and schedules a retry, and the worker goes back to ``await queue.get()``. When ``asyncio.run`` ends
    while a worker is still opening a connection, the cancellation it sends to every leftover task lands in
    that connect and is swallowed; the worker then waits on a queue that nothing feeds, and ``asyncio.run``,
    which waits for every task it cancelled, never returns. Only ``pool.close()`` ends such a worker (it
    queues a stop for each one). The loop's shutdown cancels the watcher like every other task, and the
    watcher closes the pool then and there, on its own loop; ``close()`` cancels it the same way.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        connect: Callable[[_LoopPool], Awaitable[Pool]],
        forget: Callable[[_LoopPool], None],
    ) -> None:
        self.loop = loop
        self.closed = False  # no new connections: the next call on this loop makes a new _LoopPool
        self._stopping = False  # the watcher is closing the pool (never interrupt it)
        self.pool: Pool | None = None
        # Every connection the pool opened (registered by its configure callback), so that none is left
        # open when psycopg_pool's close() stops early (see _shutdown) or the loop never shuts down.
        self.connections: weakref.WeakSet[Connection] = weakref.WeakSet()
        self.tasks: set[asyncio.Task[Any]] = set()  # the pool's workers and scheduler
        self._connect = connect
        self._forget = forget
        self._lock = asyncio.Lock()
        self._started = loop.create_future()
        self.watcher = loop.create_task(self._watch(), name="mastra-memory-pgvector-pool-watcher")

    async def open(self) -> Pool | None:
        """This loop's open pool, opened now if needed; None when it was closed meanwhile."""
        if self.pool is not None:
            return self.pool
        async with self._lock:
            if not self._started.done():  # so that no pool exists without its watcher running
                await asyncio.wait([self._started, self.watcher], return_when=asyncio.FIRST_COMPLETED)
            if self.closed or self.watcher.done():
                self.closed = True
                return None
            if self.pool is None:
                pool = await self._connect(self)
                before = asyncio.all_tasks(self.loop)
                await pool.open(wait=False)  # starts the workers and the scheduler, without yielding
                self.tasks = asyncio.all_tasks(self.loop) - before
                self.pool = pool
            return self.pool

    async def _watch(self) -> None:
        self._started.set_result(None)
        try:
            await self.loop.create_future()  # never resolved: only a cancellation ends the wait
        except asyncio.CancelledError:  # not GeneratorExit: a loop closed with this task pending
            await self._shutdown()
            raise

    async def _shutdown(self) -> None:
        self.closed = self._stopping = True
        async with self._lock:  # an open() in progress finishes (or is cancelled) first
            pool, self.pool = self.pool, None
        if pool is not None:
            # At the loop's shutdown the pool's own tasks were cancelled along with this one, and
            # psycopg_pool's close() re-raises that cancellation from its gather of them, after the
            # workers were told to stop but before the idle connections are closed. So wait here for its
            # tasks to end (a worker may still be cancelling a query on the server), then close what is
            # left open.
            with contextlib.suppress(asyncio.CancelledError):
                await pool.close(timeout=_CLOSE_TIMEOUT)
            if self.tasks:
                await asyncio.wait(self.tasks, timeout=_CLOSE_TIMEOUT)
        await self.close_connections()
        self._forget(self)

    async def close_connections(self) -> None:
        """Close every connection of this pool still open (closing does no I/O: libpq's PQfinish)."""
        self.closed = True
        for conn in list(self.connections):
            await conn.close()

    async def close(self, current: asyncio.AbstractEventLoop) -> None:
        """Close this pool from a task of the ``current`` loop."""
        if self.loop is current:
            self.closed = True
            if not self._stopping:
                self.watcher.cancel()
            await asyncio.wait([self.watcher])
        elif self.loop.is_running():  # in another thread: close it there, on its own loop
            done = asyncio.run_coroutine_threadsafe(self.close(self.loop), self.loop)
            try:
                await asyncio.wait_for(asyncio.wrap_future(done), 2 * _CLOSE_TIMEOUT)
            except TimeoutError:
                logger.warning("the event loop of a PostgreSQL pool did not close it in time")
        else:
            # A loop that is idle, or was closed without cancelling its tasks (asyncio.run and
            # asyncio.Runner do cancel them): nothing can run on it, so close what it left open from here.
            # Its watcher, if the loop ever shuts down properly, stops the pool's tasks then.
            await self.close_connections()


class PgDatabase:
    """Pools of connections to one PostgreSQL database, one for each event loop it is used from.

    Args:
        settings: where to connect and how big the pool is.
        setup: run once per pool, in a transaction on a fresh connection, before the pool opens (schema
            creation); it may return SQL ``SET`` statements that every pooled connection runs when it is
            created.
    """

    def __init__(
        self, settings: PgVectorSettings, setup: Callable[[Connection], Awaitable[list[str]]] | None = None
    ) -> None:
        self.settings = settings
        self._setup = setup
        self._session_sql: list[str] = []
        self._pools: dict[asyncio.AbstractEventLoop, _LoopPool] = {}
        self._pools_lock = threading.Lock()  # the loops may run in different threads

    @property
    def where(self) -> str:
        """``host:port/db`` for messages (never the password)."""
        return self.settings.describe()

    async def _configure(self, conn: Connection) -> None:
        for statement in ("SET TIME ZONE 'UTC'", *self._session_sql):
            await conn.execute(statement)

    async def _open(self) -> Pool:
        loop = asyncio.get_running_loop()
        while True:
            entry = self._pools.get(loop)
            if entry is None or entry.closed:
                entry = await self._new_entry(loop)
            pool = await entry.open()
            if pool is not None:
                return pool

    async def _new_entry(self, loop: asyncio.AbstractEventLoop) -> _LoopPool:
        with self._pools_lock:
            entry = self._pools.get(loop)
            if entry is not None and not entry.closed:
                return entry
            stale = [other for other in self._pools.values() if other.loop.is_closed()]
            for other in stale:
                del self._pools[other.loop]
            if any(other is not loop for other in self._pools):
                logger.info("PostgreSQL pool for %s opened on one more event loop", self.where)
            entry = self._pools[loop] = _LoopPool(loop, self._connect, self._forget)
        for other in stale:  # loops closed without a shutdown: nothing else closes what they left open
            await other.close_connections()
        return entry

    def _forget(self, entry: _LoopPool) -> None:
        with self._pools_lock:
            if self._pools.get(entry.loop) is entry:
                del self._pools[entry.loop]

    async def _connect(self, entry: _LoopPool) -> Pool:
        """Run the setup on a direct connection, then return a new pool (not opened yet)."""
        conninfo = self.settings.conninfo()
        conn = await psycopg.AsyncConnection.connect(conninfo, autocommit=True, prepare_threshold=None)
        try:
            await self._configure(conn)
            if self._setup is not None:
                async with conn.transaction():
                    self._session_sql = await self._setup(conn)
        finally:
            await conn.close()

        async def configure(pooled: Connection) -> None:
            entry.connections.add(pooled)
            await self._configure(pooled)

        pool: Pool = AsyncConnectionPool(
            conninfo,
            min_size=self.settings.pool_min_size,
            max_size=self.settings.pool_max_size,
            kwargs={"autocommit": True, "prepare_threshold": None},
            configure=configure,
            timeout=self.settings.connect_timeout,
            open=False,
            name=f"{_POOL_NAME}-{next(_pool_numbers)}",
        )
        return pool

    async def run(self, fn: Callable[[Connection], Awaitable[T]], *, idempotent: bool = True) -> T:
        """Run ``fn`` in one transaction; retry it (``settings.retries`` times) after a transient failure
        when ``idempotent``. Other errors propagate unchanged (the transaction is rolled back)."""
        attempts = 1 + (self.settings.retries if idempotent else 0)
        for attempt in range(attempts):
            try:
                pool = await self._open()
                async with pool.connection() as conn, conn.transaction():
                    return await fn(conn)
            except (psycopg.OperationalError, psycopg.errors.SerializationFailure) as exc:
                if attempt + 1 >= attempts or not is_transient(exc):
                    raise
                logger.warning(
                    "PostgreSQL at %s: %s; retrying (%d of %d)", self.where, exc, attempt + 1, attempts - 1
                )
                await asyncio.sleep(0.05 * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    async def close(self) -> None:
        """Close the pools, whichever event loop they belong to; the next call opens a new one."""
        current = asyncio.get_running_loop()
        with self._pools_lock:
            entries, self._pools = list(self._pools.values()), {}
        for entry in entries:
            await entry.close(current)
