"""``PgStorage``: the ``MemoryStorage`` contract (docs/spec.md §4) on PostgreSQL.

This module holds only SQL and connection handling; the contract itself (validation, merging, bumps,
clone, include windows, paging rules) is the :class:`~mastra_memory.storage.MemoryStorage` template.

Layout (in the configured schema): ``mastra_threads``, ``mastra_messages`` and ``mastra_resources`` (and
``mastra_observational_memory``, :mod:`.om_tables`), in
one of two table layouts (``settings.layout``, :mod:`.tables`): this project's own (described here), or
``@mastra/pg``'s (``layout="mastra"``, to share the database with a Mastra app). Before it creates
anything, the storage checks which layout the schema holds and refuses the other one with
``StorageLayoutError`` (docs/spec.md §4.7).

In this project's layout, ids are ``text COLLATE "C"`` so ``ORDER BY created_at, id`` is the spec's
``(created_at, id)`` order (code points); timestamps are ``timestamptz`` at millisecond precision.
Message content and every metadata dict are stored as JSON *text*: ``jsonb`` cannot hold U+0000, and
storage never rewrites what it is given.
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
from mastra_memory.errors import ValidationError
from mastra_memory.messages import MastraDBMessage
from mastra_memory.metadata_limits import is_unicode
from mastra_memory.storage import BackendErrors, codec
from mastra_memory.storage.hooks import Candidate, Side, Work
from mastra_memory.storage.records import ListMessagesQuery, ListThreadsQuery, Resource, Thread

from .connection import Connection, PgDatabase, is_transient, quote_ident
from .om_tables import OM_TABLE, PgOMTables, om_ddl
from .settings import PgVectorSettings
from .tables import LAYOUTS, check_schema

__all__ = ["PgStorage"]

T = TypeVar("T")

STORE: Final = "PGVECTOR"

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


def _one_or_many(ids: list[str]) -> tuple[str, str | list[str]]:
    """``= %s`` for one id (a plain primary-key lookup), else ``= ANY`` of a text array."""
    return ("= %s", ids[0]) if len(ids) == 1 else ("= ANY(%s::text[])", ids)


class PgStorage(PgOMTables):
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
        self._observations = f"{schema}.{OM_TABLE}"
        self._layout = LAYOUTS[self.settings.layout]
        self._db = PgDatabase(self.settings, self._setup)

    # -- plumbing

    async def _setup(self, conn: Connection) -> list[str]:
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext('mastra_memory_pgvector:storage'))")
        # Read-only, before anything is created: the other layout's tables are refused unchanged.
        await check_schema(conn, self.settings.schema_name, self.settings.layout, self._db.where)
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {self._schema}")
        for statement in self._layout.ddl(self._schema, self.settings.schema_name):
            await conn.execute(statement)
        # Observational memory's table (docs/spec.md §4.8; in Mastra's layout, @mastra/pg's own).
        for statement in om_ddl(self._observations, mastra=self._layout.name == "mastra"):
            await conn.execute(statement)
        return []

    def _om_table(self) -> str:
        return self._observations

    def _om_mastra(self) -> bool:
        return self._layout.name == "mastra"

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

    def _metadata(self, value: Mapping[str, Any] | None, what: str) -> str | None:
        """Metadata as JSON text; in Mastra's layout it goes into a jsonb column, which cannot hold U+0000."""
        text = codec.json_text_or_none(value, what)
        if text is not None and self._layout.name == "mastra" and "\\u0000" in text:
            raise ValidationError(
                f"{what} contains U+0000, which Mastra's PostgreSQL layout (a jsonb column) cannot hold; "
                "remove the character (this project's own layout stores it)"
            )
        return text

    # -- threads

    async def _load_threads(
        self, conn: Connection, thread_ids: Sequence[str], *, lock: bool = False
    ) -> dict[str, Thread]:
        ids = self._existing(thread_ids)
        layout = self._layout
        rows = await self._by_id(conn, layout.thread_columns, self._threads, ids, layout.id_order, lock=lock)
        return {row[0]: codec.thread_from_row(row) for row in rows}

    async def _write_thread(self, conn: Connection, thread: Thread) -> None:
        await conn.execute(
            self._layout.thread_upsert(self._threads),
            {
                "id": thread.id,
                "resource_id": thread.resource_id,
                "title": thread.title,
                "metadata": self._metadata(thread.metadata, f"metadata of thread {thread.id}"),
                "created_at": thread.created_at,
                "updated_at": thread.updated_at,
            },
        )

    async def _delete_thread(self, conn: Connection, thread_id: str) -> None:
        await conn.execute(f"DELETE FROM {self._messages} WHERE thread_id = %s", (thread_id,))
        await conn.execute(f"DELETE FROM {self._threads} WHERE id = %s", (thread_id,))

    def _thread_where(self, q: ListThreadsQuery) -> Where:
        resource = self._layout.resource_id
        clauses, params = (["TRUE"], []) if q.resource_id is None else ([f"{resource} = %s"], [q.resource_id])
        # jsonb's text form spaces its keys and values differently: there the template filters alone.
        fragments = metadata_fragments(q.metadata) if self._layout.name == "mastra-memory" else []
        for fragment in fragments:
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
        layout = self._layout
        field = layout.created_at if query.order.field == "created_at" else layout.updated_at
        order = f"{field} {direction}, {layout.id_order} {direction}"
        rows = await self._page(conn, layout.thread_columns, self._threads, where, order, offset, limit)
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
            clauses.append(f"{self._layout.resource_id} = %s")
            params.append(q.resource_id if self._existing([q.resource_id]) else "")
        for comparison, stamp in q.created_at_bounds:
            clauses.append(f"{self._layout.created_at} {comparison} %s")
            params.append(stamp)
        return " AND ".join(clauses) or "TRUE", params

    async def _count_messages(self, conn: Connection, query: ListMessagesQuery) -> int:
        return await self._count(conn, self._messages, self._base_where(query))

    async def _find_messages(
        self, conn: Connection, query: ListMessagesQuery, offset: int, limit: int | None
    ) -> list[MastraDBMessage]:
        direction = query.order.direction
        layout = self._layout
        order = f"{layout.created_at} {direction}, {layout.id_order} {direction}"
        rows = await self._page(
            conn, layout.message_columns, self._messages, self._base_where(query), order, offset, limit
        )
        return [codec.message_from_row(row) for row in rows]

    async def _metadata_candidates(self, conn: Connection, query: ListMessagesQuery) -> list[Candidate]:
        # In this project's layout the metadata column holds content.metadata alone, so candidates never
        # load whole messages; Mastra's has no such column and the content is read instead.
        layout = self._layout
        where, params = self._base_where(query)
        order = query.order.direction
        column = "metadata" if layout.message_metadata_column else "content"
        rows = await self._rows(
            conn,
            f"SELECT id, {column} FROM {self._messages} WHERE {where} "
            f"ORDER BY {layout.created_at} {order}, {layout.id_order} {order}",
            params,
        )
        if layout.message_metadata_column:
            return [(row[0], None if row[1] is None else json.loads(row[1])) for row in rows]
        candidates: list[Candidate] = []
        for message_id, content in rows:
            parsed = json.loads(content)
            candidates.append((message_id, parsed.get("metadata") if isinstance(parsed, dict) else None))
        return candidates

    async def _messages_by_id(
        self, conn: Connection, message_ids: Sequence[str], *, lock: bool = False
    ) -> list[MastraDBMessage]:
        ids = self._existing(message_ids)
        layout = self._layout
        order = f"{layout.created_at}, {layout.id_order}"
        rows = await self._by_id(conn, layout.message_columns, self._messages, ids, order, lock=lock)
        return [codec.message_from_row(row) for row in rows]

    async def _neighbours(
        self, conn: Connection, anchor: MastraDBMessage, side: Side, limit: int, resource_id: str | None
    ) -> list[MastraDBMessage]:
        comparison, order = ("<", "DESC") if side == "before" else (">", "ASC")
        layout = self._layout
        scope, scoped = (
            ("", []) if resource_id is None else (f" AND {layout.resource_id} = %s", [resource_id])
        )
        # One cursor query on the (thread_id, created_at, id) index, in the row-comparison form it serves.
        created, ident = layout.created_at, layout.id_order
        rows = await self._rows(
            conn,
            f"SELECT {layout.message_columns} FROM {self._messages} WHERE thread_id = %s{scope} "
            f"AND ({created}, {ident}) {comparison} (%s, %s) "
            f"ORDER BY {created} {order}, {ident} {order} LIMIT %s",
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
                {
                    "id": message.id,
                    "thread_id": message.thread_id,
                    "resource_id": message.resource_id,
                    "role": message.role,
                    "type": message.type,
                    "content": content,
                    "created_at": message.created_at,
                    # Kept in content too; only this project's layout has a column for it.
                    "metadata": codec.json_text_or_none(metadata, f"metadata of message {message.id}"),
                }
            )
        async with conn.cursor() as cursor:
            await cursor.executemany(self._layout.message_upsert(self._messages), rows)

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
        columns = self._layout.resource_columns
        rows = await self._by_id(conn, columns, self._resources, [resource_id], "id", lock=lock)
        return codec.resource_from_row(rows[0]) if rows else None

    async def _write_resource(self, conn: Connection, resource: Resource) -> None:
        await conn.execute(
            self._layout.resource_upsert(self._resources),
            {
                "id": resource.id,
                "working_memory": resource.working_memory,
                "metadata": self._metadata(resource.metadata, f"metadata of resource {resource.id}"),
                "created_at": resource.created_at,
                "updated_at": resource.updated_at,
            },
        )
