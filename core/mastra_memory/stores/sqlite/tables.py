"""The memory tables' SQL for both layouts a SQLite-family file may hold (docs/spec.md §4, §4.7).

This project's embedded layout (``SQLiteStorage``) and Mastra's LibSQL layout (``LibSQLStorage``) keep the
same three tables with the same rows; they differ only in some column names (``resource_id`` or
``"resourceId"``), how a timestamp is stored (epoch milliseconds or ISO text) and how metadata is encoded
(JSON text or JSONB). :class:`TableLayout` holds those differences as data, and :class:`SQLiteTablesStorage`
writes every storage hook once over it. The contract itself (validation, merging, bumps, clone, include
windows, paging rules) stays the :class:`~mastra_memory.storage.MemoryStorage` template's.

Every call runs as one unit of work on the connection's single worker thread, which also serialises
concurrent tasks; a write is one ``BEGIN IMMEDIATE`` transaction (docs/spec.md §4.5). The hooks are
``async`` only to fit the template: they never suspend, so the whole unit runs synchronously on that
thread (:func:`_run_to_completion`), one thread hop per call.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, TypeVar

from ...filters.numbers import EXACT_FLOAT_LIMIT
from ...messages import MastraDBMessage
from ...storage import (
    BackendErrors,
    Candidate,
    ListMessagesQuery,
    ListThreadsQuery,
    MetadataScalar,
    Resource,
    Side,
    Thread,
    Work,
    codec,
)
from .connection import MEMORY, WorkerConnection
from .layout import Layout, check_layout
from .om_tables import SQLiteOMTables

__all__ = ["SQLiteTablesStorage", "TableLayout"]

T = TypeVar("T")

_IN_JSON = "IN (SELECT value FROM json_each(?))"


@dataclass(frozen=True)
class TableLayout:
    """One layout of ``mastra_threads``, ``mastra_messages`` and ``mastra_resources``, and its statements.

    Columns are named by the records' fields (:mod:`mastra_memory.storage.codec`'s ``*_COLUMNS``); a layout
    that names one otherwise lists it in ``renamed`` (the SQL spelling, quoted where it needs quotes).
    """

    #: Which layout this is, as :func:`~.layout.check_layout` judges a file.
    name: Layout
    #: The statements that create the tables and indexes (each ``IF NOT EXISTS``).
    schema: tuple[str, ...]
    #: How a timestamp is stored (also in the ``created_at`` comparisons, so it must sort as time does).
    timestamp: Callable[[datetime], Any]
    #: Record fields whose column this layout spells otherwise.
    renamed: Mapping[str, str] = field(default_factory=dict)
    #: The placeholder that writes thread and resource metadata given as JSON text.
    metadata_in: str = "?"
    #: The expression that reads that metadata back as JSON text.
    metadata_out: str = "metadata"
    #: Narrow §4.6 metadata filters in SQL (typed JSON checks) before the template decides exactly.
    narrow_in_sql: bool = False
    #: ``"+"`` keeps SQLite's planner on the thread index where a resource index would be wider.
    thread_index_hint: str = ""
    # The statements built from the above: ``SELECT``s read a row in the order of the codec's columns
    # (metadata as JSON text); upserts take their parameters in that order.
    thread_select: str = field(init=False)
    message_select: str = field(init=False)
    resource_select: str = field(init=False)
    thread_upsert: str = field(init=False)
    message_upsert: str = field(init=False)
    resource_upsert: str = field(init=False)

    def __post_init__(self) -> None:
        for table, fields, kind in (
            ("mastra_threads", codec.THREAD_COLUMNS, "thread"),
            ("mastra_messages", codec.MESSAGE_COLUMNS, "message"),
            ("mastra_resources", codec.RESOURCE_COLUMNS, "resource"),
        ):
            object.__setattr__(self, f"{kind}_select", self._select(table, fields))
            object.__setattr__(self, f"{kind}_upsert", self._upsert(table, fields))

    def column(self, name: str) -> str:
        """The SQL name of the column for the record field ``name``."""
        return self.renamed.get(name, name)

    def _select(self, table: str, fields: Sequence[str]) -> str:
        read = {"metadata": self.metadata_out}
        return f"SELECT {', '.join(read.get(f, self.column(f)) for f in fields)} FROM {table}"

    def _upsert(self, table: str, fields: Sequence[str]) -> str:
        columns = [self.column(f) for f in fields]
        values = ", ".join(self.metadata_in if f == "metadata" else "?" for f in fields)
        updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c != "id")
        return (
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({values}) "
            f"ON CONFLICT(id) DO UPDATE SET {updates}"
        )


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


def _count_rows(conn: Any, table: str, where: tuple[str, list[Any]]) -> int:
    """The number of ``table``'s rows matching ``where`` (a clause and its parameters)."""
    clause, params = where
    count: int = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {clause}", params).fetchone()[0]
    return count


def _page_rows(
    conn: Any, select: str, where: tuple[str, list[Any]], order_by: str, offset: int, limit: int | None
) -> list[Any]:
    """One page of ``select ... WHERE ... ORDER BY order_by``; ``limit=None`` reads to the end (SQLite's
    ``LIMIT -1``)."""
    clause, params = where
    rows: list[Any] = conn.execute(
        f"{select} WHERE {clause} ORDER BY {order_by} LIMIT ? OFFSET ?",
        [*params, -1 if limit is None else limit, offset],
    ).fetchall()
    return rows


def _run_to_completion(work: Coroutine[Any, Any, T], store: str) -> T:
    """The result of a unit of work whose awaits never suspend (every hook here is synchronous inside)."""
    try:
        work.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    work.close()
    raise RuntimeError(f"a {store} storage hook suspended; its hooks must run synchronously on the worker")


# ----------------------------------------------------------------------------------------- storage


class SQLiteTablesStorage(SQLiteOMTables):
    """The storage hooks over the memory tables of one SQLite-family file, in the subclass's ``layout``
    (observational memory's table too: :mod:`.om_tables`).

    A subclass sets ``store_name``, ``layout``, ``database`` and ``driver_errors`` and gives its connection.
    """

    layout: ClassVar[TableLayout]
    #: The database's name in error messages.
    database: ClassVar[str]
    #: What the driver raises for a failed statement (``OSError`` is always added).
    driver_errors: ClassVar[tuple[type[Exception], ...]]
    #: What a healthy file is, for the hint of a failure.
    healthy_file: ClassVar[str] = "writable and not corrupted"
    #: Whether the unit that creates the tables runs in a write transaction even when it only reads.
    schema_in_transaction: ClassVar[bool] = False

    def __init__(self, conn: WorkerConnection[Any]) -> None:
        self._conn = conn
        self._schema_ready = False

    # -- plumbing

    def _om_mastra_names(self) -> bool:
        return self.layout.name == "mastra"

    def _om_stamp(self, value: datetime) -> Any:
        return self.layout.timestamp(value)

    def _ensure_schema(self, conn: Any) -> None:
        # Runs on the worker thread, which serialises every call, so no lock is needed.
        if not self._schema_ready:
            for statement in self.layout.schema:
                conn.execute(statement)
            self._schema_ready = True

    async def _transaction(self, operation: str, work: Work[T], *, write: bool, idempotent: bool = True) -> T:
        if not self._schema_ready and self._conn.path != MEMORY:
            # Read-only, before the connection opens (it switches the file to WAL): a file in the other
            # layout is refused unchanged (docs/spec.md §4.7).
            await asyncio.to_thread(check_layout, self._conn.path, self.layout.name, self.store_name)

        def run(conn: Any) -> T:
            self._ensure_schema(conn)
            return _run_to_completion(work(conn), self.database)

        if write or (self.schema_in_transaction and not self._schema_ready):
            return await self._conn.transaction(run)
        return await self._conn.run(run)

    def _backend_errors(self) -> BackendErrors:
        # A file has no connection to lose: every failure is ..._FAILED (docs/spec.md §4.2).
        path = self._conn.path
        return BackendErrors(
            database=self.database,
            types=(*self.driver_errors, OSError),
            where=path,
            details={"path": path},
            hint=f"check that {path} is {self.healthy_file}",
        )

    async def close(self) -> None:
        """Close the connection. A closed storage reopens on next use (``:memory:`` starts empty)."""
        await self._conn.close()
        self._schema_ready = False

    # -- threads

    async def _load_threads(
        self, conn: Any, thread_ids: Sequence[str], *, lock: bool = False
    ) -> dict[str, Thread]:
        # No row locks in SQLite: the write transaction (BEGIN IMMEDIATE) already excludes other writers.
        where, param = _one_or_many(thread_ids)
        rows = conn.execute(f"{self.layout.thread_select} WHERE id {where}", (param,)).fetchall()
        return {row[0]: codec.thread_from_row(row) for row in rows}

    async def _write_thread(self, conn: Any, thread: Thread) -> None:
        stamp = self.layout.timestamp
        conn.execute(
            self.layout.thread_upsert,
            (
                thread.id,
                thread.resource_id,
                thread.title,
                codec.json_text_or_none(thread.metadata, f"metadata of thread {thread.id}"),
                stamp(thread.created_at),
                stamp(thread.updated_at),
            ),
        )

    async def _delete_thread(self, conn: Any, thread_id: str) -> None:
        conn.execute("DELETE FROM mastra_messages WHERE thread_id = ?", (thread_id,))
        conn.execute("DELETE FROM mastra_threads WHERE id = ?", (thread_id,))

    def _thread_where(self, q: ListThreadsQuery) -> tuple[str, list[Any]]:
        # Without the SQL narrowing, the template applies a metadata filter over every thread (§4.6).
        where, params = ["1"], []
        if q.resource_id is not None:
            where.append(f"{self.layout.column('resource_id')} = ?")
            params.append(q.resource_id)
        if q.metadata and self.layout.narrow_in_sql:
            clause, extra = _metadata_prefilter("metadata", "$", q.metadata)
            where.append(clause)
            params += extra
        return " AND ".join(where), params

    async def _count_threads(self, conn: Any, query: ListThreadsQuery) -> int:
        return _count_rows(conn, "mastra_threads", self._thread_where(query))

    async def _find_threads(
        self, conn: Any, query: ListThreadsQuery, offset: int, limit: int | None
    ) -> list[Thread]:
        direction = query.order.direction
        order_by = f"{self.layout.column(query.order.field)} {direction}, id {direction}"
        rows = _page_rows(conn, self.layout.thread_select, self._thread_where(query), order_by, offset, limit)
        return [codec.thread_from_row(row) for row in rows]

    # -- messages: reads

    def _base_where(self, q: ListMessagesQuery) -> tuple[str, list[Any]]:
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
            # With threads given, the hint keeps the planner on the thread index (the resource one is wider).
            hint = self.layout.thread_index_hint if q.thread_ids else ""
            clauses.append(f"{hint}{self.layout.column('resource_id')} = ?")
            params.append(q.resource_id)
        for comparison, stamp in q.created_at_bounds:
            # Both encodings sort as time does (ISO text with milliseconds and Z: docs/spec.md §4.7).
            clauses.append(f"{self.layout.column('created_at')} {comparison} ?")
            params.append(self.layout.timestamp(stamp))
        return " AND ".join(clauses) or "1", params

    def _message_order(self, direction: str) -> str:
        return f"{self.layout.column('created_at')} {direction}, id {direction}"

    async def _count_messages(self, conn: Any, query: ListMessagesQuery) -> int:
        return _count_rows(conn, "mastra_messages", self._base_where(query))

    async def _find_messages(
        self, conn: Any, query: ListMessagesQuery, offset: int, limit: int | None
    ) -> list[MastraDBMessage]:
        order_by = self._message_order(query.order.direction)
        rows = _page_rows(conn, self.layout.message_select, self._base_where(query), order_by, offset, limit)
        return [codec.message_from_row(row) for row in rows]

    async def _metadata_candidates(self, conn: Any, query: ListMessagesQuery) -> list[Candidate]:
        # A superset of the matches (every row of the base set without the SQL narrowing): the template
        # applies the §4.6 filter exactly.
        where, params = self._base_where(query)
        metadata = query.filter.metadata if query.filter else None
        if metadata and self.layout.narrow_in_sql:
            clause, extra = _metadata_prefilter("content", "$.metadata", metadata)
            where, params = f"{where} AND {clause}", [*params, *extra]
        rows = conn.execute(
            "SELECT id, json_extract(content, '$.metadata') FROM mastra_messages "
            f"WHERE {where} ORDER BY {self._message_order(query.order.direction)}",
            params,
        ).fetchall()
        return [(row[0], None if row[1] is None else json.loads(row[1])) for row in rows]

    async def _messages_by_id(
        self, conn: Any, message_ids: Sequence[str], *, lock: bool = False
    ) -> list[MastraDBMessage]:
        where, param = _one_or_many(message_ids)
        rows = conn.execute(
            f"{self.layout.message_select} WHERE id {where} ORDER BY {self.layout.column('created_at')}, id",
            (param,),
        ).fetchall()
        return [codec.message_from_row(row) for row in rows]

    async def _neighbours(
        self, conn: Any, anchor: MastraDBMessage, side: Side, limit: int, resource_id: str | None
    ) -> list[MastraDBMessage]:
        # One cursor query on the (thread_id, created_at, id) index; the hint keeps the planner on it.
        layout = self.layout
        scoped = f" AND {layout.thread_index_hint}{layout.column('resource_id')} = ?"
        scope, scope_params = ("", []) if resource_id is None else (scoped, [resource_id])
        comparison, order = ("<", "DESC") if side == "before" else (">", "ASC")
        rows = conn.execute(
            f"{layout.message_select} WHERE thread_id = ?{scope} "
            f"AND ({layout.column('created_at')}, id) {comparison} (?, ?) "
            f"ORDER BY {self._message_order(order)} LIMIT ?",
            [anchor.thread_id, *scope_params, layout.timestamp(anchor.created_at), anchor.id, limit],
        ).fetchall()
        return [codec.message_from_row(row) for row in rows]

    # -- messages: writes

    async def _write_messages(self, conn: Any, messages: Sequence[tuple[MastraDBMessage, Any]]) -> None:
        stamp = self.layout.timestamp
        conn.executemany(
            self.layout.message_upsert,
            [
                (m.id, m.thread_id, m.resource_id, m.role, m.type, content, stamp(m.created_at))
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
        row = conn.execute(f"{self.layout.resource_select} WHERE id = ?", (resource_id,)).fetchone()
        return None if row is None else codec.resource_from_row(row)

    async def _write_resource(self, conn: Any, resource: Resource) -> None:
        stamp = self.layout.timestamp
        conn.execute(
            self.layout.resource_upsert,
            (
                resource.id,
                resource.working_memory,
                codec.json_text_or_none(resource.metadata, f"metadata of resource {resource.id}"),
                stamp(resource.created_at),
                stamp(resource.updated_at),
            ),
        )
