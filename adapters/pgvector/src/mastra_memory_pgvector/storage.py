"""``PgStorage``: the ``MemoryStorage`` contract (docs/spec.md §4) on PostgreSQL.

This module holds only SQL and connection handling; the contract itself (validation, merging, bumps,
clone, include windows, paging rules) is the :class:`~mastra_memory.storage.MemoryStorage` template.

Layout (in the configured schema): ``mastra_threads``, ``mastra_messages`` and ``mastra_resources``.
Ids are ``text COLLATE "C"`` so ``ORDER BY created_at, id`` is the spec's ``(created_at, id)`` order (code
points); timestamps are ``timestamptz`` at millisecond precision. Message content and every metadata dict
are stored as JSON *text*: ``jsonb`` cannot hold U+0000, and storage never rewrites what it is given.
Text columns hold neither U+0000 nor lone surrogates, so such ids and names are refused on write and
cannot exist on read (:meth:`PgStorage._text_problem`).

Indexes: messages on ``(thread_id, created_at, id)`` (pages and the two cursor queries of each include
window, docs/spec.md §4.3 step 5) and ``(resource_id, created_at, id)`` (listing by resource); threads on
``(resource_id, created_at, id)``.

Every call is one transaction. Writes lock the rows of the threads they bump (``FOR UPDATE``, in id
order), so ``updated_at`` bumps are strictly increasing under concurrent writers. The §4.6 metadata filter
is decided by the template over the candidate rows SQL selects (thread, resource, date range), exactly as
the reference storage does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeVar

import psycopg
from mastra_memory.messages import MastraDBMessage
from mastra_memory.metadata_limits import is_unicode
from mastra_memory.storage import BackendErrors, MemoryStorage, codec
from mastra_memory.storage.hooks import Candidate, Side, Work
from mastra_memory.storage.records import ListMessagesQuery, ListThreadsQuery, Resource, Thread

from .connection import Connection, PgDatabase, is_transient, quote_ident
from .settings import PgVectorSettings

__all__ = ["PgStorage"]

T = TypeVar("T")

STORE: Final = "PGVECTOR"
_MESSAGE_COLUMNS: Final = ", ".join(codec.MESSAGE_COLUMNS)
_THREAD_COLUMNS: Final = ", ".join(codec.THREAD_COLUMNS)
_RESOURCE_COLUMNS: Final = ", ".join(codec.RESOURCE_COLUMNS)

_TEXT_LIMIT: Final = "cannot contain U+0000 or unpaired surrogates in PostgreSQL"

Row = tuple[Any, ...]
#: An SQL condition and its parameters.
Where = tuple[str, list[Any]]


def metadata_fragments(flt: Mapping[str, Any] | None) -> list[str]:
    """LIKE patterns that every thread matching the §4.6 filter ``flt`` satisfies (docs/spec.md §4.4).

    Metadata is stored as compact JSON text (``codec.json_text``; jsonb cannot hold U+0000), so a top-level
    ``key: value`` is the substring ``"key":<value as JSON>`` of every matching row. Only values whose JSON
    is spelled one way are used: booleans, null and ASCII strings (a number may be stored as ``2`` or
    ``2.0``, and non-ASCII text is ASCII-escaped in rows holding unpaired surrogates). The patterns narrow
    the candidates (a superset: a nested key can match too); the template's §4.6 rule decides. This keeps
    ``list_threads`` from reading every thread of a resource to find the archived ones.
    """
    patterns = []
    for key, value in (flt or {}).items():
        if not (value is None or isinstance(value, bool | str)):
            continue
        fragment = f"{json.dumps(key)}:{json.dumps(value, ensure_ascii=False)}"
        if not fragment.isascii():
            continue
        escaped = fragment.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        patterns.append(f"%{escaped}%")
    return patterns


def _upsert(table: str, columns: Sequence[str]) -> str:
    """The statement writing a row of ``columns`` (``id`` first): inserted, or replacing the other columns
    of the row with that id."""
    updates = ", ".join(f"{column} = EXCLUDED.{column}" for column in columns[1:])
    placeholders = ", ".join(["%s"] * len(columns))
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({placeholders}) "
        f"ON CONFLICT (id) DO UPDATE SET {updates}"
    )


def _one_or_many(ids: list[str]) -> tuple[str, str | list[str]]:
    """``= %s`` for one id (a plain primary-key lookup), else ``= ANY`` of a text array."""
    return ("= %s", ids[0]) if len(ids) == 1 else ("= ANY(%s::text[])", ids)


class PgStorage(MemoryStorage):
    """Threads, messages and resources in PostgreSQL (any server; pgvector is not needed for storage).

    Args:
        settings: :class:`PgVectorSettings`, a DSN/URL string, or ``None`` to read the environment.

    Safe for concurrent tasks and processes: every call is one transaction on a pooled connection.
    """

    store_name = STORE

    def __init__(self, settings: PgVectorSettings | str | None = None) -> None:
        self.settings = PgVectorSettings.given(settings)
        schema = quote_ident(self.settings.schema_name)
        self._schema = schema
        self._threads = f"{schema}.mastra_threads"
        self._messages = f"{schema}.mastra_messages"
        self._resources = f"{schema}.mastra_resources"
        self._db = PgDatabase(self.settings, self._setup)

    # -- plumbing

    async def _setup(self, conn: Connection) -> list[str]:
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext('mastra_memory_pgvector:storage'))")
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {self._schema}")
        for statement in (
            f"""CREATE TABLE IF NOT EXISTS {self._threads} (
                id text COLLATE "C" PRIMARY KEY,
                resource_id text COLLATE "C" NOT NULL,
                title text NOT NULL DEFAULT '',
                metadata text,
                created_at timestamptz(3) NOT NULL,
                updated_at timestamptz(3) NOT NULL)""",
            f"CREATE INDEX IF NOT EXISTS mastra_threads_resource_idx ON {self._threads} (resource_id, "
            "created_at, id)",
            f"""CREATE TABLE IF NOT EXISTS {self._messages} (
                id text COLLATE "C" PRIMARY KEY,
                thread_id text COLLATE "C" NOT NULL,
                resource_id text COLLATE "C",
                role text NOT NULL,
                type text NOT NULL,
                content text NOT NULL,
                metadata text,
                created_at timestamptz(3) NOT NULL)""",
            f"CREATE INDEX IF NOT EXISTS mastra_messages_thread_idx ON {self._messages} (thread_id, "
            "created_at, id)",
            f"CREATE INDEX IF NOT EXISTS mastra_messages_resource_idx ON {self._messages} (resource_id, "
            "created_at, id)",
            f"""CREATE TABLE IF NOT EXISTS {self._resources} (
                id text COLLATE "C" PRIMARY KEY,
                working_memory text,
                metadata text,
                created_at timestamptz(3) NOT NULL,
                updated_at timestamptz(3) NOT NULL)""",
        ):
            await conn.execute(statement)
        return []

    async def _transaction(self, operation: str, work: Work[T], *, write: bool, idempotent: bool = True) -> T:
        # Reads are a transaction too; idempotent work is retried after a lost connection (PgDatabase.run).
        return await self._db.run(work, idempotent=idempotent)

    def _backend_errors(self) -> BackendErrors:
        return BackendErrors(
            database="PostgreSQL",
            types=(psycopg.Error,),
            where=self._db.where,
            is_connection_lost=is_transient,
            connection_hint="check that the server is running and the DSN is right",
        )

    async def close(self) -> None:
        """Close the connection pool. A closed storage reopens on next use."""
        await self._db.close()

    def _text_problem(self, text: str) -> str | None:
        """PostgreSQL text holds neither U+0000 nor unpaired surrogates."""
        return _TEXT_LIMIT if "\x00" in text or not is_unicode(text) else None

    @staticmethod
    async def _rows(conn: Connection, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[Row]:
        cursor = await conn.execute(sql, params)
        return list(await cursor.fetchall())

    @staticmethod
    async def _count(conn: Connection, table: str, where: Where) -> int:
        condition, params = where
        cursor = await conn.execute(f"SELECT count(*) FROM {table} WHERE {condition}", params)
        row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def _page(
        self,
        conn: Connection,
        columns: str,
        table: str,
        where: Where,
        order: str,
        offset: int,
        limit: int | None,
    ) -> list[Row]:
        """The rows of ``table`` matching ``where`` in ``order``, from ``offset`` (``LIMIT NULL``: all)."""
        condition, params = where
        return await self._rows(
            conn,
            f"SELECT {columns} FROM {table} WHERE {condition} ORDER BY {order} LIMIT %s OFFSET %s",
            [*params, limit, offset],
        )

    async def _by_id(
        self, conn: Connection, columns: str, table: str, ids: list[str], order: str, *, lock: bool
    ) -> list[Row]:
        """The rows of ``table`` with these ids in ``order``, locked for the transaction when ``lock``."""
        match, param = _one_or_many(ids)
        return await self._rows(
            conn,
            f"SELECT {columns} FROM {table} WHERE id {match} ORDER BY {order}"
            + (" FOR UPDATE" if lock else ""),
            (param,),
        )

    # -- threads

    async def _load_threads(
        self, conn: Connection, thread_ids: Sequence[str], *, lock: bool = False
    ) -> dict[str, Thread]:
        ids = self._existing(thread_ids)
        rows = await self._by_id(conn, _THREAD_COLUMNS, self._threads, ids, "id", lock=lock)
        return {row[0]: codec.thread_from_row(row) for row in rows}

    async def _write_thread(self, conn: Connection, thread: Thread) -> None:
        await conn.execute(
            _upsert(self._threads, codec.THREAD_COLUMNS),
            (
                thread.id,
                thread.resource_id,
                thread.title,
                codec.json_text_or_none(thread.metadata, f"metadata of thread {thread.id}"),
                thread.created_at,
                thread.updated_at,
            ),
        )

    async def _delete_thread(self, conn: Connection, thread_id: str) -> None:
        await conn.execute(f"DELETE FROM {self._messages} WHERE thread_id = %s", (thread_id,))
        await conn.execute(f"DELETE FROM {self._threads} WHERE id = %s", (thread_id,))

    @staticmethod
    def _thread_where(q: ListThreadsQuery) -> Where:
        clauses, params = (["TRUE"], []) if q.resource_id is None else (["resource_id = %s"], [q.resource_id])
        for fragment in metadata_fragments(q.metadata):
            clauses.append("metadata LIKE %s ESCAPE '\\'")
            params.append(fragment)
        return " AND ".join(clauses), params

    async def _count_threads(self, conn: Connection, query: ListThreadsQuery) -> int:
        return await self._count(conn, self._threads, self._thread_where(query))

    async def _find_threads(
        self, conn: Connection, query: ListThreadsQuery, offset: int, limit: int | None
    ) -> list[Thread]:
        where = self._thread_where(query)
        direction = query.order.direction
        order = f"{query.order.field} {direction}, id {direction}"
        rows = await self._page(conn, _THREAD_COLUMNS, self._threads, where, order, offset, limit)
        return [codec.thread_from_row(row) for row in rows]

    # -- messages: reads

    def _base_where(self, q: ListMessagesQuery) -> Where:
        """The §4.3 step 3 predicate without the metadata filter."""
        clauses: list[str] = []
        params: list[Any] = []
        threads = self._existing(q.thread_ids)
        if len(threads) == 1:
            clauses.append("thread_id = %s")  # keeps the (thread_id, created_at, id) index order usable
            params.append(threads[0])
        elif q.thread_ids:
            clauses.append("thread_id = ANY(%s::text[])")
            params.append(threads)
        if q.resource_id is not None:
            clauses.append("resource_id = %s")
            params.append(q.resource_id if self._existing([q.resource_id]) else "")
        for comparison, stamp in q.created_at_bounds:
            clauses.append(f"created_at {comparison} %s")
            params.append(stamp)
        return " AND ".join(clauses) or "TRUE", params

    async def _count_messages(self, conn: Connection, query: ListMessagesQuery) -> int:
        return await self._count(conn, self._messages, self._base_where(query))

    async def _find_messages(
        self, conn: Connection, query: ListMessagesQuery, offset: int, limit: int | None
    ) -> list[MastraDBMessage]:
        direction = query.order.direction
        order = f"created_at {direction}, id {direction}"
        rows = await self._page(
            conn, _MESSAGE_COLUMNS, self._messages, self._base_where(query), order, offset, limit
        )
        return [codec.message_from_row(row) for row in rows]

    async def _metadata_candidates(self, conn: Connection, query: ListMessagesQuery) -> list[Candidate]:
        # The metadata column holds content.metadata alone, so candidates never load whole messages.
        where, params = self._base_where(query)
        order = query.order.direction
        rows = await self._rows(
            conn,
            f"SELECT id, metadata FROM {self._messages} WHERE {where} "
            f"ORDER BY created_at {order}, id {order}",
            params,
        )
        return [(row[0], None if row[1] is None else json.loads(row[1])) for row in rows]

    async def _messages_by_id(
        self, conn: Connection, message_ids: Sequence[str], *, lock: bool = False
    ) -> list[MastraDBMessage]:
        ids = self._existing(message_ids)
        rows = await self._by_id(conn, _MESSAGE_COLUMNS, self._messages, ids, "created_at, id", lock=lock)
        return [codec.message_from_row(row) for row in rows]

    async def _neighbours(
        self, conn: Connection, anchor: MastraDBMessage, side: Side, limit: int, resource_id: str | None
    ) -> list[MastraDBMessage]:
        comparison, order = ("<", "DESC") if side == "before" else (">", "ASC")
        scope, scoped = ("", []) if resource_id is None else (" AND resource_id = %s", [resource_id])
        # One cursor query on the (thread_id, created_at, id) index, in the row-comparison form it serves.
        rows = await self._rows(
            conn,
            f"SELECT {_MESSAGE_COLUMNS} FROM {self._messages} WHERE thread_id = %s{scope} "
            f"AND (created_at, id) {comparison} (%s, %s) ORDER BY created_at {order}, id {order} LIMIT %s",
            [anchor.thread_id, *scoped, anchor.created_at, anchor.id, limit],
        )
        return [codec.message_from_row(row) for row in rows]

    # -- messages: writes

    async def _write_messages(
        self, conn: Connection, messages: Sequence[tuple[MastraDBMessage, Any]]
    ) -> None:
        rows = []
        for message, content in messages:
            metadata = message.content.metadata
            rows.append(
                (
                    *(message.id, message.thread_id, message.resource_id, message.role, message.type),
                    *(content, message.created_at),
                    codec.json_text_or_none(metadata, f"metadata of message {message.id}"),
                )
            )
        async with conn.cursor() as cursor:
            await cursor.executemany(_upsert(self._messages, (*codec.MESSAGE_COLUMNS, "metadata")), rows)

    async def _delete_messages(self, conn: Connection, message_ids: Sequence[str]) -> set[str]:
        owners = await self._rows(
            conn,
            f"DELETE FROM {self._messages} WHERE id = ANY(%s::text[]) RETURNING thread_id",
            (list(message_ids),),
        )
        return {row[0] for row in owners}

    # -- resources

    async def _load_resource(
        self, conn: Connection, resource_id: str, *, lock: bool = False
    ) -> Resource | None:
        if lock:
            # Serialise concurrent first writes of the same resource (there is no row to lock yet).
            await conn.execute(
                "SELECT pg_advisory_xact_lock(hashtext(%s))", (f"mastra_resource:{resource_id}",)
            )
        rows = await self._by_id(conn, _RESOURCE_COLUMNS, self._resources, [resource_id], "id", lock=lock)
        return codec.resource_from_row(rows[0]) if rows else None

    async def _write_resource(self, conn: Connection, resource: Resource) -> None:
        await conn.execute(
            _upsert(self._resources, codec.RESOURCE_COLUMNS),
            (
                resource.id,
                resource.working_memory,
                codec.json_text_or_none(resource.metadata, f"metadata of resource {resource.id}"),
                resource.created_at,
                resource.updated_at,
            ),
        )
