"""The connection layer shared by the vector store and the storage: a lazily opened psycopg async pool,
one transaction per call, and retries of idempotent calls after a lost connection.

Nothing connects until the first call, so building a store is free and a store that is never used needs
no server. The first call opens one direct connection (so a wrong DSN fails fast with the server's own
message), runs the caller's one-time setup on it in a transaction, then opens the pool.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

import psycopg
from psycopg_pool import AsyncConnectionPool

from .settings import PgVectorSettings

__all__ = ["Connection", "PgDatabase", "is_transient", "quote_ident"]

logger = logging.getLogger("mastra_memory_pgvector")

T = TypeVar("T")
Connection = psycopg.AsyncConnection[Any]

# SQLSTATEs after which the whole transaction can simply be run again.
_TRANSIENT_STATES: Final = frozenset({"40001", "40P01", "57P01", "57P02", "57P03", "53300"})


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


class PgDatabase:
    """A pool of connections to one PostgreSQL database.

    Args:
        settings: where to connect and how big the pool is.
        setup: run once, in a transaction on a fresh connection, before the pool opens (schema creation);
            it may return SQL ``SET`` statements that every pooled connection runs when it is created.
    """

    def __init__(
        self, settings: PgVectorSettings, setup: Callable[[Connection], Awaitable[list[str]]] | None = None
    ) -> None:
        self.settings = settings
        self._setup = setup
        self._pool: AsyncConnectionPool[Connection] | None = None
        self._session_sql: list[str] = []
        self._opening: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def where(self) -> str:
        """``host:port/db`` for messages (never the password)."""
        return self.settings.describe()

    async def _configure(self, conn: Connection) -> None:
        for statement in ("SET TIME ZONE 'UTC'", *self._session_sql):
            await conn.execute(statement)

    async def _open(self) -> AsyncConnectionPool[Connection]:
        loop = asyncio.get_running_loop()
        if self._pool is not None and self._loop is not loop:
            # Used from another event loop (e.g. a second asyncio.run): the pool belongs to the old one.
            logger.info("PostgreSQL pool for %s reopened on a new event loop", self.where)
            self._pool, self._opening = None, None
        if self._pool is not None:
            return self._pool
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._pool is not None:
                return self._pool
            conninfo = self.settings.conninfo()
            conn = await psycopg.AsyncConnection.connect(conninfo, autocommit=True, prepare_threshold=None)
            try:
                await self._configure(conn)
                if self._setup is not None:
                    async with conn.transaction():
                        self._session_sql = await self._setup(conn)
            finally:
                await conn.close()
            pool: AsyncConnectionPool[Connection] = AsyncConnectionPool(
                conninfo,
                min_size=self.settings.pool_min_size,
                max_size=self.settings.pool_max_size,
                kwargs={"autocommit": True, "prepare_threshold": None},
                configure=self._configure,
                timeout=self.settings.connect_timeout,
                open=False,
                name="mastra-memory-pgvector",
            )
            await pool.open(wait=False)
            self._pool, self._loop = pool, loop
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
        """Close the pool; the next call opens a new one."""
        pool, self._pool = self._pool, None
        if pool is not None and self._loop is asyncio.get_running_loop():
            await pool.close()
