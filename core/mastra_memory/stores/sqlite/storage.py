"""The embedded SQLite ``MemoryStorage`` (docs/spec.md §4): the reference implementation of the contract.

This module holds only SQL and connection handling; the contract itself (validation, merging, bumps,
clone, include windows, paging rules) is the :class:`~mastra_memory.storage.MemoryStorage` template.

Layout: tables ``mastra_threads``, ``mastra_messages`` and ``mastra_resources``. Timestamps are integer
epoch milliseconds, so ordering by ``(created_at, id)`` is exact; message content and metadata are JSON
text. Every call runs as one unit of work on the connection's single worker thread, which also serialises
concurrent tasks; a write is one ``BEGIN IMMEDIATE`` transaction (docs/spec.md §4.5). The hooks are
``async`` only to fit the template: they never suspend, so the whole unit runs synchronously on that
thread (:func:`_run_to_completion`), one thread hop per call.

The §4.6 metadata filter is evaluated in two steps: SQL narrows the candidates with typed JSON checks
(``json_type`` plus equality for strings; type only for numbers), then the template decides exactly with
:func:`~mastra_memory.storage.metadata_matches`. The SQL step only ever keeps a superset.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Coroutine, Mapping, Sequence
from sqlite3 import Connection
from typing import Any, TypeVar

from ...filters.numbers import EXACT_FLOAT_LIMIT
from ...messages import MastraDBMessage, epoch_ms
from ...storage import (
    BackendErrors,
    Candidate,
    ListMessagesQuery,
    ListThreadsQuery,
    MemoryStorage,
    MetadataScalar,
    Resource,
    Side,
    Thread,
    Work,
    codec,
)
from .connection import MEMORY, SQLiteConnection
from .layout import check_layout
from .settings import DEFAULT_URL, SQLiteSettings

__all__ = ["SQLiteStorage"]

T = TypeVar("T")

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
)

# Rows read back as records through the shared codec; epoch-millisecond timestamps validate as such.
_MESSAGE_COLUMNS = ", ".join(codec.MESSAGE_COLUMNS)
_THREAD_COLUMNS = ", ".join(codec.THREAD_COLUMNS)
_RESOURCE_COLUMNS = ", ".join(codec.RESOURCE_COLUMNS)
_IN_JSON = "IN (SELECT value FROM json_each(?))"


# ------------------------------------------------------------------------------------- SQL helpers


def _metadata_prefilter(
    column: str, path_prefix: str, flt: Mapping[str, MetadataScalar]
) -> tuple[str, list[Any]]:
    """SQL that keeps a superset of the rows matching a §4.6 filter (typed checks on the JSON column)."""
    clauses: list[str] = []
    params: list[Any] = []
    for key, value in flt.items():
        path = f'{path_prefix}."{key}"'  # keys are validated identifiers, and the path is bound anyway
        if value is None:
            clauses.append(f"json_type({column}, ?) = 'null'")
            params.append(path)
        elif isinstance(value, bool):
            clauses.append(f"json_type({column}, ?) = ?")
            params += [path, "true" if value else "false"]
        elif isinstance(value, str):
            clauses.append(f"json_type({column}, ?) = 'text' AND json_extract({column}, ?) = ?")
            params += [path, path, value]
        elif isinstance(value, int) and abs(value) > EXACT_FLOAT_LIMIT:
            clauses.append(f"json_type({column}, ?) IN ('integer', 'real')")
            params.append(path)
        else:
            clauses.append(f"json_type({column}, ?) IN ('integer', 'real') AND json_extract({column}, ?) = ?")
            params += [path, path, value]
    return " AND ".join(clauses) or "1", params


def _one_or_many(ids: Sequence[str]) -> tuple[str, str]:
    """``= ?`` for one id (a plain primary-key lookup), else ``IN`` over a JSON array of the ids."""
    return ("= ?", ids[0]) if len(ids) == 1 else (_IN_JSON, json.dumps(list(ids)))


def _count_rows(conn: Connection, table: str, where: tuple[str, list[Any]]) -> int:
    """The number of ``table``'s rows matching ``where`` (a clause and its parameters)."""
    clause, params = where
    count: int = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {clause}", params).fetchone()[0]
    return count


def _page_rows(
    conn: Connection, select: str, where: tuple[str, list[Any]], order_by: str, offset: int, limit: int | None
) -> list[Any]:
    """One page of ``select ... WHERE ... ORDER BY order_by``; ``limit=None`` reads to the end (SQLite's
    ``LIMIT -1``)."""
    clause, params = where
    return conn.execute(
        f"{select} WHERE {clause} ORDER BY {order_by} LIMIT ? OFFSET ?",
        [*params, -1 if limit is None else limit, offset],
    ).fetchall()


def _run_to_completion(work: Coroutine[Any, Any, T]) -> T:
    """The result of a unit of work whose awaits never suspend (every SQLite hook is synchronous inside)."""
    try:
        work.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    work.close()
    raise RuntimeError("a SQLite storage hook suspended; SQLite hooks must run synchronously on the worker")


# ----------------------------------------------------------------------------------------- storage


class SQLiteStorage(MemoryStorage):
    """Threads, messages and resources in one SQLite file (default ``./memory.db``; ``:memory:`` works).

    Safe for concurrent tasks: every call runs on the connection's single worker thread, and every write
    is one transaction, so a failed call leaves the database as it was.
    """

    store_name = STORE

    def __init__(self, url: str | SQLiteSettings = DEFAULT_URL) -> None:
        settings = url if isinstance(url, SQLiteSettings) else SQLiteSettings(url=url)
        self.settings = settings
        self._conn = SQLiteConnection(settings.url)
        self._schema_ready = False

    @property
    def url(self) -> str:
        """The database location as configured (a path, ``file:`` / ``sqlite://`` URL, or ``:memory:``)."""
        return self.settings.url

    # -- plumbing

    def _ensure_schema(self, conn: Connection) -> None:
        # Runs on the worker thread, which serialises every call, so no lock is needed.
        if not self._schema_ready:
            for statement in _SCHEMA:
                conn.execute(statement)
            self._schema_ready = True

    async def _transaction(self, operation: str, work: Work[T], *, write: bool, idempotent: bool = True) -> T:
        if not self._schema_ready and self._conn.path != MEMORY:
            # Before the connection opens (it switches the file to WAL): a file in Mastra's LibSQL layout
            # is refused unchanged (docs/spec.md §4.7).
            await asyncio.to_thread(check_layout, self._conn.path, "mastra-memory", STORE)

        def run(conn: Connection) -> T:
            self._ensure_schema(conn)
            return _run_to_completion(work(conn))

        if write:
            return await self._conn.transaction(run)
        return await self._conn.run(run)

    def _backend_errors(self) -> BackendErrors:
        # A file has no connection to lose: every failure is ..._FAILED (docs/spec.md §4.2).
        path = self._conn.path
        return BackendErrors(
            database="SQLite",
            types=(sqlite3.Error, OSError),
            where=path,
            details={"path": path},
            hint=f"check that {path} is writable and not corrupted",
        )

    async def close(self) -> None:
        """Close the connection. A closed storage reopens on next use (``:memory:`` starts empty)."""
        await self._conn.close()
        self._schema_ready = False

    # -- threads

    async def _load_threads(
        self, conn: Connection, thread_ids: Sequence[str], *, lock: bool = False
    ) -> dict[str, Thread]:
        # No row locks in SQLite: the write transaction (BEGIN IMMEDIATE) already excludes other writers.
        where, param = _one_or_many(thread_ids)
        sql = f"SELECT {_THREAD_COLUMNS} FROM mastra_threads WHERE id {where}"
        return {row[0]: codec.thread_from_row(row) for row in conn.execute(sql, (param,)).fetchall()}

    async def _write_thread(self, conn: Connection, thread: Thread) -> None:
        conn.execute(
            f"INSERT INTO mastra_threads ({_THREAD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET resource_id = excluded.resource_id, title = excluded.title, "
            "metadata = excluded.metadata, created_at = excluded.created_at, "
            "updated_at = excluded.updated_at",
            (
                thread.id,
                thread.resource_id,
                thread.title,
                codec.json_text_or_none(thread.metadata, f"metadata of thread {thread.id}"),
                epoch_ms(thread.created_at),
                epoch_ms(thread.updated_at),
            ),
        )

    async def _delete_thread(self, conn: Connection, thread_id: str) -> None:
        conn.execute("DELETE FROM mastra_messages WHERE thread_id = ?", (thread_id,))
        conn.execute("DELETE FROM mastra_threads WHERE id = ?", (thread_id,))

    @staticmethod
    def _thread_where(q: ListThreadsQuery) -> tuple[str, list[Any]]:
        where, params = ["1"], []
        if q.resource_id is not None:
            where.append("resource_id = ?")
            params.append(q.resource_id)
        if q.metadata:
            clause, extra = _metadata_prefilter("metadata", "$", q.metadata)
            where.append(clause)
            params += extra
        return " AND ".join(where), params

    async def _count_threads(self, conn: Connection, query: ListThreadsQuery) -> int:
        return _count_rows(conn, "mastra_threads", self._thread_where(query))

    async def _find_threads(
        self, conn: Connection, query: ListThreadsQuery, offset: int, limit: int | None
    ) -> list[Thread]:
        direction = query.order.direction
        order_by = f"{query.order.field} {direction}, id {direction}"
        select = f"SELECT {_THREAD_COLUMNS} FROM mastra_threads"
        rows = _page_rows(conn, select, self._thread_where(query), order_by, offset, limit)
        return [codec.thread_from_row(row) for row in rows]

    # -- messages: reads

    @staticmethod
    def _base_where(q: ListMessagesQuery) -> tuple[str, list[Any]]:
        """The §4.3 step 3 predicate without the metadata filter."""
        clauses: list[str] = []
        params: list[Any] = []
        if len(q.thread_ids) == 1:
            clauses.append("thread_id = ?")
            params.append(q.thread_ids[0])
        elif q.thread_ids:
            clauses.append(f"thread_id {_IN_JSON}")
            params.append(json.dumps(list(q.thread_ids)))
        if q.resource_id is not None:
            # With threads given, "+" keeps the planner on the thread index (the resource one is wider).
            clauses.append("+resource_id = ?" if q.thread_ids else "resource_id = ?")
            params.append(q.resource_id)
        for comparison, stamp in q.created_at_bounds:
            clauses.append(f"created_at {comparison} ?")
            params.append(epoch_ms(stamp))
        return " AND ".join(clauses) or "1", params

    async def _count_messages(self, conn: Connection, query: ListMessagesQuery) -> int:
        return _count_rows(conn, "mastra_messages", self._base_where(query))

    async def _find_messages(
        self, conn: Connection, query: ListMessagesQuery, offset: int, limit: int | None
    ) -> list[MastraDBMessage]:
        order = query.order.direction
        order_by = f"created_at {order}, id {order}"
        select = f"SELECT {_MESSAGE_COLUMNS} FROM mastra_messages"
        rows = _page_rows(conn, select, self._base_where(query), order_by, offset, limit)
        return [codec.message_from_row(row) for row in rows]

    async def _metadata_candidates(self, conn: Connection, query: ListMessagesQuery) -> list[Candidate]:
        where, params = self._base_where(query)
        order = query.order.direction
        metadata = query.filter.metadata if query.filter else None
        clause, extra = _metadata_prefilter("content", "$.metadata", metadata or {})
        rows = conn.execute(
            "SELECT id, json_extract(content, '$.metadata') FROM mastra_messages "
            f"WHERE {where} AND {clause} ORDER BY created_at {order}, id {order}",
            [*params, *extra],
        ).fetchall()
        return [(row[0], None if row[1] is None else json.loads(row[1])) for row in rows]

    async def _messages_by_id(
        self, conn: Connection, message_ids: Sequence[str], *, lock: bool = False
    ) -> list[MastraDBMessage]:
        where, param = _one_or_many(message_ids)
        rows = conn.execute(
            f"SELECT {_MESSAGE_COLUMNS} FROM mastra_messages WHERE id {where} ORDER BY created_at, id",
            (param,),
        ).fetchall()
        return [codec.message_from_row(row) for row in rows]

    async def _neighbours(
        self, conn: Connection, anchor: MastraDBMessage, side: Side, limit: int, resource_id: str | None
    ) -> list[MastraDBMessage]:
        # One cursor query on the (thread_id, created_at, id) index; "+" keeps the planner on it.
        scope, scoped = ("", []) if resource_id is None else (" AND +resource_id = ?", [resource_id])
        comparison, order = ("<", "DESC") if side == "before" else (">", "ASC")
        rows = conn.execute(
            f"SELECT {_MESSAGE_COLUMNS} FROM mastra_messages WHERE thread_id = ?{scope} "
            f"AND (created_at, id) {comparison} (?, ?) ORDER BY created_at {order}, id {order} LIMIT ?",
            [anchor.thread_id, *scoped, epoch_ms(anchor.created_at), anchor.id, limit],
        ).fetchall()
        return [codec.message_from_row(row) for row in rows]

    # -- messages: writes

    async def _write_messages(
        self, conn: Connection, messages: Sequence[tuple[MastraDBMessage, Any]]
    ) -> None:
        conn.executemany(
            f"INSERT INTO mastra_messages ({_MESSAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET thread_id = excluded.thread_id, "
            "resource_id = excluded.resource_id, role = excluded.role, type = excluded.type, "
            "content = excluded.content, created_at = excluded.created_at",
            [
                (m.id, m.thread_id, m.resource_id, m.role, m.type, content, epoch_ms(m.created_at))
                for m, content in messages
            ],
        )

    async def _delete_messages(self, conn: Connection, message_ids: Sequence[str]) -> set[str]:
        payload = json.dumps(list(message_ids))
        owners = conn.execute(
            f"SELECT DISTINCT thread_id FROM mastra_messages WHERE id {_IN_JSON}", (payload,)
        ).fetchall()
        conn.execute(f"DELETE FROM mastra_messages WHERE id {_IN_JSON}", (payload,))
        return {row[0] for row in owners}

    # -- resources

    async def _load_resource(
        self, conn: Connection, resource_id: str, *, lock: bool = False
    ) -> Resource | None:
        row = conn.execute(
            f"SELECT {_RESOURCE_COLUMNS} FROM mastra_resources WHERE id = ?", (resource_id,)
        ).fetchone()
        return None if row is None else codec.resource_from_row(row)

    async def _write_resource(self, conn: Connection, resource: Resource) -> None:
        conn.execute(
            f"INSERT INTO mastra_resources ({_RESOURCE_COLUMNS}) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET working_memory = excluded.working_memory, "
            "metadata = excluded.metadata, created_at = excluded.created_at, "
            "updated_at = excluded.updated_at",
            (
                resource.id,
                resource.working_memory,
                codec.json_text_or_none(resource.metadata, f"metadata of resource {resource.id}"),
                epoch_ms(resource.created_at),
                epoch_ms(resource.updated_at),
            ),
        )
