"""``LibSQLStorage``: the ``MemoryStorage`` of docs/spec.md §4 over Mastra's own LibSQL tables.

It opens the file a Mastra app writes with ``@mastra/libsql`` (``file:./local.db``) and works on it in
place: the columns, timestamps (ISO text) and metadata encoding (JSONB) of :mod:`.layout`, so that each
side reads what the other wrote (docs/spec.md §4.7). The contract itself (validation, merging,
``updated_at`` bumps, clone, include windows, paging) is the template's; this module holds only SQL.

Before its connection opens, the store checks the file's layout read-only and refuses one in this
project's embedded SQLite layout with ``StorageLayoutError``, changing nothing.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from ...errors import ConfigError
from ...messages import MastraDBMessage
from ...storage import (
    BackendErrors,
    Candidate,
    ListMessagesQuery,
    ListThreadsQuery,
    MemoryStorage,
    Resource,
    Side,
    Thread,
    Work,
    codec,
)
from ..sqlite.layout import check_layout
from .capabilities import LIBSQL_STORAGE_CAPABILITIES
from .connection import MEMORY, LibSQLConnection
from .layout import MESSAGE_SELECT, RESOURCE_SELECT, SCHEMA, THREAD_SELECT, iso
from .settings import DEFAULT_URL, LibSQLSettings

__all__ = ["LibSQLStorage"]

T = TypeVar("T")

STORE = "LIBSQL"
_IN_JSON = "IN (SELECT value FROM json_each(?))"
#: The records' sort fields as Mastra's columns.
_COLUMN_OF = {"created_at": '"createdAt"', "updated_at": '"updatedAt"'}


def _one_or_many(ids: Sequence[str]) -> tuple[str, str]:
    """``= ?`` for one id, else ``IN`` over a JSON array of the ids."""
    return ("= ?", ids[0]) if len(ids) == 1 else (_IN_JSON, json.dumps(list(ids)))


def _run_to_completion(work: Coroutine[Any, Any, T]) -> T:
    """The result of a unit of work whose awaits never suspend (every hook here is synchronous inside)."""
    try:
        work.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    work.close()
    raise RuntimeError("a LibSQL storage hook suspended; its hooks must run synchronously on the worker")


class LibSQLStorage(MemoryStorage):
    """Threads, messages and resources in Mastra's LibSQL file (``libsql:///path``, ``file:./local.db``).

    Safe for concurrent tasks: every call runs on the connection's single worker thread, and every write
    is one ``BEGIN IMMEDIATE`` transaction, so a failed call leaves the file as it was. A Mastra process
    may use the same file at the same time (both sides use WAL and wait for each other's locks).
    """

    store_name = STORE
    capabilities = LIBSQL_STORAGE_CAPABILITIES

    def __init__(self, url: str | LibSQLSettings = DEFAULT_URL) -> None:
        if importlib.util.find_spec("libsql") is None:
            raise ConfigError(
                "the libsql store needs the libSQL engine (JSONB, which Mastra's file uses): "
                "pip install 'mastra-memory[libsql]'",
                id="MASTRA_STORAGE_LIBSQL_MISSING_EXTRA",
                domain="STORAGE",
            )
        settings = url if isinstance(url, LibSQLSettings) else LibSQLSettings(url=url)
        self.settings = settings
        self._conn = LibSQLConnection(settings.path)
        self._schema_ready = False

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

    # -- plumbing

    async def _transaction(self, operation: str, work: Work[T], *, write: bool, idempotent: bool = True) -> T:
        if not self._schema_ready and self._conn.path != MEMORY:
            # Read-only, before the connection opens: a file in this project's own layout is refused
            # unchanged (docs/spec.md §4.7).
            await asyncio.to_thread(check_layout, self._conn.path, "mastra", STORE)

        def run(conn: Any) -> T:
            if not self._schema_ready:
                for statement in SCHEMA:
                    conn.execute(statement)
                self._schema_ready = True
            return _run_to_completion(work(conn))

        if write or not self._schema_ready:  # the first unit may create the tables (a new file)
            return await self._conn.transaction(run)
        return await self._conn.run(run)

    def _backend_errors(self) -> BackendErrors:
        # The libsql driver raises ValueError for SQL errors (no DB-API hierarchy of its own).
        path = self._conn.path
        return BackendErrors(
            database="LibSQL",
            types=(ValueError, OSError),
            where=path,
            details={"path": path},
            hint=f"check that {path} is a LibSQL/SQLite file, writable and not corrupted",
        )

    async def close(self) -> None:
        """Close the connection. A closed storage reopens on next use (``:memory:`` starts empty)."""
        await self._conn.close()
        self._schema_ready = False

    # -- threads

    async def _load_threads(
        self, conn: Any, thread_ids: Sequence[str], *, lock: bool = False
    ) -> dict[str, Thread]:
        # No row locks: the write transaction (BEGIN IMMEDIATE) already excludes other writers.
        where, param = _one_or_many(thread_ids)
        rows = conn.execute(f"{THREAD_SELECT} WHERE id {where}", (param,)).fetchall()
        return {row[0]: codec.thread_from_row(row) for row in rows}

    async def _write_thread(self, conn: Any, thread: Thread) -> None:
        conn.execute(
            'INSERT INTO mastra_threads (id, "resourceId", title, metadata, "createdAt", "updatedAt") '
            "VALUES (?, ?, ?, jsonb(?), ?, ?) ON CONFLICT(id) DO UPDATE SET "
            '"resourceId" = excluded."resourceId", title = excluded.title, metadata = excluded.metadata, '
            '"createdAt" = excluded."createdAt", "updatedAt" = excluded."updatedAt"',
            (
                thread.id,
                thread.resource_id,
                thread.title,
                codec.json_text_or_none(thread.metadata, f"metadata of thread {thread.id}"),
                iso(thread.created_at),
                iso(thread.updated_at),
            ),
        )

    async def _delete_thread(self, conn: Any, thread_id: str) -> None:
        conn.execute("DELETE FROM mastra_messages WHERE thread_id = ?", (thread_id,))
        conn.execute("DELETE FROM mastra_threads WHERE id = ?", (thread_id,))

    @staticmethod
    def _thread_where(q: ListThreadsQuery) -> tuple[str, list[Any]]:
        # A metadata filter is applied by the template over every thread of the resource (§4.6).
        if q.resource_id is None:
            return "1", []
        return '"resourceId" = ?', [q.resource_id]

    async def _count_threads(self, conn: Any, query: ListThreadsQuery) -> int:
        clause, params = self._thread_where(query)
        count: int = conn.execute(f"SELECT COUNT(*) FROM mastra_threads WHERE {clause}", params).fetchone()[0]
        return count

    async def _find_threads(
        self, conn: Any, query: ListThreadsQuery, offset: int, limit: int | None
    ) -> list[Thread]:
        direction = query.order.direction
        clause, params = self._thread_where(query)
        rows = conn.execute(
            f"{THREAD_SELECT} WHERE {clause} ORDER BY {_COLUMN_OF[query.order.field]} {direction}, "
            f"id {direction} LIMIT ? OFFSET ?",
            [*params, -1 if limit is None else limit, offset],
        ).fetchall()
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
            clauses.append('"resourceId" = ?')
            params.append(q.resource_id)
        for comparison, stamp in q.created_at_bounds:
            # ISO text with milliseconds and Z sorts as time does (docs/spec.md §4.7).
            clauses.append(f'"createdAt" {comparison} ?')
            params.append(iso(stamp))
        return " AND ".join(clauses) or "1", params

    async def _count_messages(self, conn: Any, query: ListMessagesQuery) -> int:
        clause, params = self._base_where(query)
        count: int = conn.execute(f"SELECT COUNT(*) FROM mastra_messages WHERE {clause}", params).fetchone()[
            0
        ]
        return count

    async def _find_messages(
        self, conn: Any, query: ListMessagesQuery, offset: int, limit: int | None
    ) -> list[MastraDBMessage]:
        order = query.order.direction
        clause, params = self._base_where(query)
        rows = conn.execute(
            f'{MESSAGE_SELECT} WHERE {clause} ORDER BY "createdAt" {order}, id {order} LIMIT ? OFFSET ?',
            [*params, -1 if limit is None else limit, offset],
        ).fetchall()
        return [codec.message_from_row(row) for row in rows]

    async def _metadata_candidates(self, conn: Any, query: ListMessagesQuery) -> list[Candidate]:
        # Every row of the base set: the template applies the §4.6 filter exactly.
        clause, params = self._base_where(query)
        order = query.order.direction
        rows = conn.execute(
            "SELECT id, json_extract(content, '$.metadata') FROM mastra_messages "
            f'WHERE {clause} ORDER BY "createdAt" {order}, id {order}',
            params,
        ).fetchall()
        return [(row[0], None if row[1] is None else json.loads(row[1])) for row in rows]

    async def _messages_by_id(
        self, conn: Any, message_ids: Sequence[str], *, lock: bool = False
    ) -> list[MastraDBMessage]:
        where, param = _one_or_many(message_ids)
        rows = conn.execute(
            f'{MESSAGE_SELECT} WHERE id {where} ORDER BY "createdAt", id', (param,)
        ).fetchall()
        return [codec.message_from_row(row) for row in rows]

    async def _neighbours(
        self, conn: Any, anchor: MastraDBMessage, side: Side, limit: int, resource_id: str | None
    ) -> list[MastraDBMessage]:
        scope, scoped = ("", []) if resource_id is None else (' AND "resourceId" = ?', [resource_id])
        comparison, order = ("<", "DESC") if side == "before" else (">", "ASC")
        rows = conn.execute(
            f'{MESSAGE_SELECT} WHERE thread_id = ?{scope} AND ("createdAt", id) {comparison} (?, ?) '
            f'ORDER BY "createdAt" {order}, id {order} LIMIT ?',
            [anchor.thread_id, *scoped, iso(anchor.created_at), anchor.id, limit],
        ).fetchall()
        return [codec.message_from_row(row) for row in rows]

    # -- messages: writes

    async def _write_messages(self, conn: Any, messages: Sequence[tuple[MastraDBMessage, Any]]) -> None:
        conn.executemany(
            'INSERT INTO mastra_messages (id, thread_id, content, role, type, "createdAt", "resourceId") '
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET thread_id = excluded.thread_id, "
            "content = excluded.content, role = excluded.role, type = excluded.type, "
            '"createdAt" = excluded."createdAt", "resourceId" = excluded."resourceId"',
            [
                (m.id, m.thread_id, content, m.role, m.type, iso(m.created_at), m.resource_id)
                for m, content in messages
            ],
        )

    async def _delete_messages(self, conn: Any, message_ids: Sequence[str]) -> set[str]:
        payload = json.dumps(list(message_ids))
        owners = conn.execute(
            f"SELECT DISTINCT thread_id FROM mastra_messages WHERE id {_IN_JSON}", (payload,)
        ).fetchall()
        conn.execute(f"DELETE FROM mastra_messages WHERE id {_IN_JSON}", (payload,))
        return {row[0] for row in owners}

    # -- resources

    async def _load_resource(self, conn: Any, resource_id: str, *, lock: bool = False) -> Resource | None:
        row = conn.execute(f"{RESOURCE_SELECT} WHERE id = ?", (resource_id,)).fetchone()
        return None if row is None else codec.resource_from_row(row)

    async def _write_resource(self, conn: Any, resource: Resource) -> None:
        conn.execute(
            'INSERT INTO mastra_resources (id, "workingMemory", metadata, "createdAt", "updatedAt") '
            "VALUES (?, ?, jsonb(?), ?, ?) ON CONFLICT(id) DO UPDATE SET "
            '"workingMemory" = excluded."workingMemory", metadata = excluded.metadata, '
            '"createdAt" = excluded."createdAt", "updatedAt" = excluded."updatedAt"',
            (
                resource.id,
                resource.working_memory,
                codec.json_text_or_none(resource.metadata, f"metadata of resource {resource.id}"),
                iso(resource.created_at),
                iso(resource.updated_at),
            ),
        )
