"""``PgStorage``: the ``MemoryStorage`` contract (docs/spec.md §4) on PostgreSQL.

Layout (in the configured schema): ``mastra_threads``, ``mastra_messages`` and ``mastra_resources``.
Ids are ``text COLLATE "C"`` so ``ORDER BY created_at, id`` is the spec's ``(created_at, id)`` order (code
points); timestamps are ``timestamptz`` at millisecond precision. Message content and every metadata dict
are stored as JSON *text*: ``jsonb`` cannot hold U+0000, and storage never rewrites what it is given.

Indexes: messages on ``(thread_id, created_at, id)`` (pages and the two cursor queries of each include
window, docs/spec.md §4.3 step 5) and ``(resource_id, created_at, id)`` (listing by resource); threads on
``(resource_id, created_at, id)``.

Every call is one transaction. Writes lock the rows of the threads they bump (``FOR UPDATE``), so
``updated_at`` bumps are strictly increasing under concurrent writers. The §4.6 metadata filter is decided
in Python by :func:`mastra_memory.storage.metadata_matches` over the candidate rows SQL selects (thread,
resource, date range), exactly as the reference storage does.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Final, TypeVar

import psycopg
from mastra_memory.capabilities import StorageCapabilities
from mastra_memory.errors import (
    MastraMemoryError,
    StorageError,
    ThreadNotFoundError,
    ValidationError,
    error_id,
)
from mastra_memory.messages import MastraDBMessage, MessageContentV2, MessageInput, normalize_messages
from mastra_memory.storage import (
    CloneArgs,
    CloneMessageFilterInput,
    CloneResult,
    IncludeInput,
    ListMessagesQuery,
    ListThreadsQuery,
    MessageFilterInput,
    MessagePage,
    MessageUpdate,
    MessageUpdateInput,
    OrderByInput,
    PerPage,
    Resource,
    ResourceInput,
    Thread,
    ThreadFilterInput,
    ThreadInput,
    ThreadOrderByInput,
    ThreadPage,
    message_sort_key,
    metadata_matches,
    validate_clone_args,
    validate_list_messages_args,
    validate_list_messages_by_resource_args,
    validate_list_threads_args,
    validate_message_ids,
    validate_resource_id,
)
from mastra_memory.timestamps import canonical_timestamp, next_after, utc_now
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError
from pydantic.alias_generators import to_camel

from .connection import Connection, PgDatabase, is_transient, quote_ident
from .settings import PgVectorSettings

__all__ = ["PgStorage"]

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

STORE: Final = "PGVECTOR"
_MESSAGE_COLUMNS: Final = "id, thread_id, resource_id, role, type, content, created_at"
_THREAD_COLUMNS: Final = "id, resource_id, title, metadata, created_at, updated_at"
_RESOURCE_COLUMNS: Final = "id, working_memory, metadata, created_at, updated_at"

Row = tuple[Any, ...]


# ------------------------------------------------------------------------------------- conversions


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return canonical_timestamp(value)
    raise TypeError(f"{type(value).__name__} is not a JSON type")


def _json(value: Any, what: str) -> str:
    """JSON text of plain data: datetimes become canonical timestamps; NaN, infinities and objects are
    refused. U+0000 travels escaped; text that is not valid Unicode is written ASCII-escaped."""
    try:
        text = json.dumps(
            value, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_json_default
        )
    except (TypeError, ValueError) as exc:
        raise ValidationError(
            f"{what} is not JSON-serialisable (no NaN, infinities or objects): {exc}"
        ) from None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(
            value, ensure_ascii=True, allow_nan=False, separators=(",", ":"), default=_json_default
        )
    return text


def _json_or_null(value: Mapping[str, Any] | None, what: str) -> str | None:
    return None if value is None else _json(dict(value), what)


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _content_json(content: MessageContentV2, message_id: str) -> str:
    # Python mode, not JSON mode: JSON mode would silently turn NaN into null.
    return _json(content.model_dump(), f"content of message {message_id}")


def _message(row: Row) -> MastraDBMessage:
    return MastraDBMessage.model_validate(
        {
            "id": row[0],
            "thread_id": row[1],
            "resource_id": row[2],
            "role": row[3],
            "type": row[4],
            "content": json.loads(row[5]),
            "created_at": row[6],
        }
    )


def _thread(row: Row) -> Thread:
    return Thread(
        id=row[0],
        resource_id=row[1],
        title=row[2],
        metadata=_loads(row[3]),
        created_at=row[4],
        updated_at=row[5],
    )


def _resource(row: Row) -> Resource:
    return Resource(
        id=row[0], working_memory=row[1], metadata=_loads(row[2]), created_at=row[3], updated_at=row[4]
    )


def _model(model: type[M], raw: Any, what: str, status_id: str) -> M:
    """Validate input into ``model``, turning pydantic errors into our ValidationError."""
    if isinstance(raw, model):
        return raw
    try:
        return model.model_validate(raw)
    except PydanticValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors()
        )
        raise ValidationError(f"invalid {what}: {problems}", id=status_id, domain="STORAGE") from None


def _error_id(operation: str, status: str) -> str:
    return error_id("STORAGE", STORE, operation, status)


def _text_ok(value: str | None, what: str, operation: str) -> None:
    """PostgreSQL text holds neither U+0000 nor unpaired surrogates."""
    if value is None:
        return
    problem = "\x00" in value
    if not problem:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            problem = True
    if problem:
        raise ValidationError(
            f"{what} cannot contain U+0000 or unpaired surrogates in PostgreSQL",
            id=_error_id(operation, "INVALID_ARGS"),
            domain="STORAGE",
        )


def _non_blank(value: Any, name: str, operation: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(
            f"{name} must be a non-empty string", id=_error_id(operation, "INVALID_ARGS"), domain="STORAGE"
        )
    return value


def _storable_ids(ids: Iterable[str]) -> list[str]:
    """The ids that can exist in PostgreSQL (others are unknown by construction)."""
    out = []
    for value in ids:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            continue
        if "\x00" not in value:
            out.append(value)
    return out


def _check_message_text(message: MastraDBMessage, operation: str) -> None:
    for value, what in (
        (message.id, "message id"),
        (message.thread_id, "thread_id"),
        (message.resource_id, "resource_id"),
        (message.role, "role"),
        (message.type, "type"),
    ):
        _text_ok(value, what, operation)


# ----------------------------------------------------------------------------------------- storage


class PgStorage:
    """Threads, messages and resources in PostgreSQL (any server; pgvector is not needed for storage).

    Args:
        settings: :class:`PgVectorSettings`, a DSN/URL string, or ``None`` to read the environment.

    Safe for concurrent tasks and processes: every call is one transaction on a pooled connection.
    """

    capabilities = StorageCapabilities(resource_scope=True, list_by_resource=True, clone_thread=True)

    def __init__(self, settings: PgVectorSettings | str | None = None) -> None:
        if isinstance(settings, str):
            settings = PgVectorSettings(url=settings)
        self.settings = settings if settings is not None else PgVectorSettings()
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

    async def _call(self, operation: str, fn: Any, *, idempotent: bool = True) -> Any:
        try:
            return await self._db.run(fn, idempotent=idempotent)
        except MastraMemoryError:
            raise
        except psycopg.Error as exc:
            what = operation.lower().replace("_", " ")
            if is_transient(exc):
                message = (
                    f"PostgreSQL at {self._db.where} is unreachable or closed the connection during "
                    f"{what}: {exc}; "
                    "check that the server is running and the DSN is right"
                )
                status = "CONNECTION_FAILED"
            else:
                message, status = f"PostgreSQL {what} failed: {exc}", "FAILED"
            raise StorageError(
                message, id=_error_id(operation, status), details={"where": self._db.where}
            ) from exc

    async def init(self) -> None:
        """Create the schema idempotently (every other method also does this on first use)."""

        async def nothing(conn: Connection) -> None:
            return None

        await self._call("INIT", nothing)

    async def close(self) -> None:
        """Close the connection pool. A closed storage reopens on next use."""
        await self._db.close()

    @staticmethod
    async def _rows(conn: Connection, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[Row]:
        cursor = await conn.execute(sql, params)
        return list(await cursor.fetchall())

    @staticmethod
    async def _row(conn: Connection, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Row | None:
        cursor = await conn.execute(sql, params)
        return await cursor.fetchone()

    # -- threads

    async def get_thread_by_id(self, thread_id: str, resource_id: str | None = None) -> Thread | None:
        """The thread, or ``None`` if it is missing or ``resource_id`` is given and differs."""
        operation = "GET_THREAD_BY_ID"
        _non_blank(thread_id, "thread_id", operation)
        resource = validate_resource_id(resource_id, store=STORE, operation=operation)
        if not _storable_ids([thread_id]):
            return None

        async def read(conn: Connection) -> Thread | None:
            return await self._load_thread(conn, thread_id)

        thread: Thread | None = await self._call(operation, read)
        if thread is None or (resource is not None and thread.resource_id != resource):
            return None
        return thread

    async def _load_thread(self, conn: Connection, thread_id: str, *, lock: bool = False) -> Thread | None:
        row = await self._row(
            conn,
            f"SELECT {_THREAD_COLUMNS} FROM {self._threads} WHERE id = %s" + (" FOR UPDATE" if lock else ""),
            (thread_id,),
        )
        return None if row is None else _thread(row)

    async def _write_thread(self, conn: Connection, thread: Thread) -> None:
        await conn.execute(
            f"INSERT INTO {self._threads} ({_THREAD_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (id) DO UPDATE SET resource_id = EXCLUDED.resource_id, title = EXCLUDED.title, "
            "metadata = EXCLUDED.metadata, created_at = EXCLUDED.created_at, updated_at = "
            "EXCLUDED.updated_at",
            (
                thread.id,
                thread.resource_id,
                thread.title,
                _json_or_null(thread.metadata, f"metadata of thread {thread.id}"),
                thread.created_at,
                thread.updated_at,
            ),
        )

    async def save_thread(self, thread: ThreadInput) -> Thread:
        """Insert or replace a thread by id; returns it as stored."""
        operation = "SAVE_THREAD"
        parsed = _model(Thread, thread, "thread", _error_id(operation, "INVALID_ARGS"))
        for value, what in (
            (parsed.id, "thread id"),
            (parsed.resource_id, "resource_id"),
            (parsed.title, "title"),
        ):
            _text_ok(value, what, operation)
        _json_or_null(parsed.metadata, f"metadata of thread {parsed.id}")

        async def write(conn: Connection) -> None:
            await self._write_thread(conn, parsed)

        await self._call(operation, write)
        return parsed

    async def update_thread(
        self, id: str, title: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Thread:
        """Replace the title when given, shallow-merge ``metadata``, and bump ``updated_at``.

        A missing thread raises ThreadNotFoundError.
        """
        operation = "UPDATE_THREAD"
        _non_blank(id, "id", operation)
        if title is not None and not isinstance(title, str):
            raise ValidationError("title must be a string", id=_error_id(operation, "INVALID_ARGS"))
        if metadata is not None and not isinstance(metadata, Mapping):
            raise ValidationError("metadata must be a dict", id=_error_id(operation, "INVALID_ARGS"))
        _text_ok(title, "title", operation)
        _json_or_null(metadata, "metadata")
        missing = ThreadNotFoundError(
            f"thread {id} does not exist; create it with save_thread first",
            id=_error_id(operation, "THREAD_NOT_FOUND"),
        )
        if not _storable_ids([id]):
            raise missing

        async def write(conn: Connection) -> Thread:
            current = await self._load_thread(conn, id, lock=True)
            if current is None:
                raise missing
            updated = current.model_copy(
                update={
                    "title": current.title if title is None else title,
                    "metadata": current.metadata
                    if metadata is None
                    else {**(current.metadata or {}), **metadata},
                    "updated_at": next_after(current.updated_at),
                }
            )
            await self._write_thread(conn, updated)
            return updated

        result: Thread = await self._call(operation, write)
        return result

    async def delete_thread(self, thread_id: str) -> None:
        """Delete the thread and all its messages in one transaction; a missing thread is a no-op."""
        operation = "DELETE_THREAD"
        _non_blank(thread_id, "thread_id", operation)
        if not _storable_ids([thread_id]):
            return

        async def write(conn: Connection) -> None:
            await conn.execute(f"DELETE FROM {self._messages} WHERE thread_id = %s", (thread_id,))
            await conn.execute(f"DELETE FROM {self._threads} WHERE id = %s", (thread_id,))

        await self._call(operation, write)

    async def list_threads(
        self,
        filter: ThreadFilterInput | None = None,
        page: int = 0,
        per_page: PerPage | None = 100,
        order_by: ThreadOrderByInput | None = None,
    ) -> ThreadPage:
        """Threads matching ``filter`` (resource and/or §4.6 metadata), ordered and paged (docs/spec.md
        §4.4)."""
        query = validate_list_threads_args(filter, page, per_page, order_by, store=STORE)

        async def read(conn: Connection) -> ThreadPage:
            return await self._list_threads(conn, query)

        result: ThreadPage = await self._call("LIST_THREADS", read)
        return result

    async def _list_threads(self, conn: Connection, q: ListThreadsQuery) -> ThreadPage:
        where, params = ["TRUE"], []
        if q.resource_id is not None:
            if not _storable_ids([q.resource_id]):
                return ThreadPage(threads=[], total=0, page=q.page, per_page=q.per_page, has_more=False)
            where.append("resource_id = %s")
            params.append(q.resource_id)
        direction = q.order.direction
        sql = (
            f"SELECT {_THREAD_COLUMNS} FROM {self._threads} WHERE {' AND '.join(where)} "
            f"ORDER BY {q.order.field} {direction}, id {direction}"
        )
        if q.metadata:
            rows = await self._rows(conn, sql, params)
            matching = [t for t in map(_thread, rows) if metadata_matches(q.metadata, t.metadata)]
            total = len(matching)
            end = None if q.per_page is False else q.offset + q.per_page
            threads = matching[q.offset : end]
        else:
            count = await self._row(
                conn, f"SELECT count(*) FROM {self._threads} WHERE {' AND '.join(where)}", params
            )
            total = int(count[0]) if count else 0
            limit = None if q.per_page is False else q.per_page
            rows = await self._rows(conn, f"{sql} LIMIT %s OFFSET %s", [*params, limit, q.offset])
            threads = [_thread(r) for r in rows]
        return ThreadPage(
            threads=threads, total=total, page=q.page, per_page=q.per_page, has_more=q.has_more(total)
        )

    # -- messages: reads

    async def list_messages(
        self,
        thread_id: str | Sequence[str],
        resource_id: str | None = None,
        include: Sequence[IncludeInput] | None = None,
        per_page: PerPage | None = None,
        page: int = 0,
        filter: MessageFilterInput | None = None,
        order_by: OrderByInput | None = None,
        include_total: bool = True,
    ) -> MessagePage:
        """Messages of one or more threads plus include windows, exactly as docs/spec.md §4.3 describes."""
        query = validate_list_messages_args(
            thread_id, resource_id, include, per_page, page, filter, order_by, include_total, store=STORE
        )

        async def read(conn: Connection) -> MessagePage:
            return await self._list_messages(conn, query)

        result: MessagePage = await self._call("LIST_MESSAGES", read)
        return result

    async def list_messages_by_resource_id(
        self,
        resource_id: str,
        include: Sequence[IncludeInput] | None = None,
        per_page: PerPage | None = None,
        page: int = 0,
        filter: MessageFilterInput | None = None,
        order_by: OrderByInput | None = None,
        include_total: bool = True,
    ) -> MessagePage:
        """As :meth:`list_messages`, over every thread of the resource."""
        query = validate_list_messages_by_resource_args(
            resource_id, include, per_page, page, filter, order_by, include_total, store=STORE
        )

        async def read(conn: Connection) -> MessagePage:
            return await self._list_messages(conn, query)

        result: MessagePage = await self._call("LIST_MESSAGES_BY_RESOURCE_ID", read)
        return result

    async def list_messages_by_id(self, message_ids: Sequence[str]) -> list[MastraDBMessage]:
        """Those messages in ascending ``(created_at, id)`` order; unknown ids are skipped."""
        operation = "LIST_MESSAGES_BY_ID"
        ids = _storable_ids(validate_message_ids(message_ids, store=STORE, operation=operation))
        if not ids:
            return []

        async def read(conn: Connection) -> list[MastraDBMessage]:
            return await self._messages_by_id(conn, ids)

        result: list[MastraDBMessage] = await self._call(operation, read)
        return result

    async def _messages_by_id(self, conn: Connection, ids: Sequence[str]) -> list[MastraDBMessage]:
        rows = await self._rows(
            conn,
            f"SELECT {_MESSAGE_COLUMNS} FROM {self._messages} WHERE id = ANY(%s::text[]) ORDER BY "
            "created_at, id",
            (list(ids),),
        )
        return [_message(r) for r in rows]

    @staticmethod
    def _base_where(q: ListMessagesQuery) -> tuple[str, list[Any]]:
        """The §4.3 step 3 predicate without the metadata filter."""
        clauses: list[str] = []
        params: list[Any] = []
        threads = _storable_ids(q.thread_ids)
        if len(threads) == 1:
            clauses.append("thread_id = %s")  # keeps the (thread_id, created_at, id) index order usable
            params.append(threads[0])
        elif q.thread_ids:
            clauses.append("thread_id = ANY(%s::text[])")
            params.append(threads)
        if q.resource_id is not None:
            clauses.append("resource_id = %s")
            params.append(q.resource_id if _storable_ids([q.resource_id]) else "")
        date_range = q.filter.date_range if q.filter else None
        if date_range is not None and date_range.start is not None:
            clauses.append("created_at > %s" if date_range.start_exclusive else "created_at >= %s")
            params.append(date_range.start)
        if date_range is not None and date_range.end is not None:
            clauses.append("created_at < %s" if date_range.end_exclusive else "created_at <= %s")
            params.append(date_range.end)
        return " AND ".join(clauses) or "TRUE", params

    async def _list_messages(self, conn: Connection, q: ListMessagesQuery) -> MessagePage:
        if q.per_page is not False and q.per_page == 0:  # False == 0 in Python, and False means "all"
            # Fast path: include windows only (what semantic recall uses).
            found = await self._windows(conn, q)
            windows = sorted(found.values(), key=message_sort_key, reverse=q.descending)
            return MessagePage(messages=windows, total=0, page=q.page, per_page=q.per_page, has_more=False)
        where, params = self._base_where(q)
        direction = "DESC" if q.descending else "ASC"
        order = f"ORDER BY created_at {direction}, id {direction}"
        metadata = q.filter.metadata if q.filter else None
        total: int | None
        if metadata:
            candidates = await self._rows(
                conn, f"SELECT id, metadata FROM {self._messages} WHERE {where} {order}", params
            )
            matching = [row[0] for row in candidates if metadata_matches(metadata, _loads(row[1]))]
            total = len(matching)
            end = None if q.per_page is False else q.offset + q.per_page
            page_rows = sorted(
                await self._messages_by_id(conn, matching[q.offset : end]),
                key=message_sort_key,
                reverse=q.descending,
            )
            more_rows = q.offset + len(page_rows) < total
        else:
            total = None
            # The has_more rule with include compares against the total, so it is counted even when the
            # caller asked not to receive it.
            if q.include_total or q.include:
                count = await self._row(conn, f"SELECT count(*) FROM {self._messages} WHERE {where}", params)
                total = int(count[0]) if count else 0
            # Without a count, one extra row tells whether more rows follow.
            limit = None if q.per_page is False else q.per_page + (0 if total is not None else 1)
            rows = await self._rows(
                conn,
                f"SELECT {_MESSAGE_COLUMNS} FROM {self._messages} WHERE {where} {order} LIMIT %s OFFSET %s",
                [*params, limit, q.offset],
            )
            if q.per_page is not False and len(rows) > q.per_page:
                rows = rows[: q.per_page]
                more_rows = True
            else:
                more_rows = total is not None and q.offset + len(rows) < total
            page_rows = [_message(r) for r in rows]
        merged = {m.id: m for m in page_rows}
        if q.include:
            for message_id, message in (await self._windows(conn, q)).items():
                merged.setdefault(message_id, message)
        messages = sorted(merged.values(), key=message_sort_key, reverse=q.descending)
        has_more = False
        if q.per_page is not False and more_rows:
            has_more = True
            if q.include and total is not None:
                has_more = sum(1 for m in messages if q.in_scope(m)) < total
        return MessagePage(
            messages=messages,
            total=total if q.include_total else None,
            page=q.page,
            per_page=q.per_page,
            has_more=has_more,
        )

    async def _windows(self, conn: Connection, q: ListMessagesQuery) -> dict[str, MastraDBMessage]:
        """Resolve include items (§4.3 step 5): windows from each target's own thread, deduplicated by id.

        Two indexed cursor queries per item on ``(thread_id, created_at, id)``: up to ``prev`` messages at
        or before the target (the target included), and up to ``next`` after it.
        """
        found: dict[str, MastraDBMessage] = {}
        resource_clause = "" if q.resource_id is None else " AND resource_id = %s"
        resource_params: list[Any] = [] if q.resource_id is None else [q.resource_id]
        for item in q.include:
            if not _storable_ids([item.id]):
                continue
            target = await self._row(
                conn,
                f"SELECT thread_id, resource_id, created_at FROM {self._messages} WHERE id = %s",
                (item.id,),
            )
            if target is None or (q.resource_id is not None and target[1] != q.resource_id):
                continue
            thread_id, _, created_at = target
            before = await self._rows(
                conn,
                f"SELECT {_MESSAGE_COLUMNS} FROM {self._messages} WHERE thread_id = %s{resource_clause} "
                "AND (created_at, id) <= (%s, %s) ORDER BY created_at DESC, id DESC LIMIT %s",
                [thread_id, *resource_params, created_at, item.id, item.with_previous_messages + 1],
            )
            after: list[Row] = []
            if item.with_next_messages:
                after = await self._rows(
                    conn,
                    f"SELECT {_MESSAGE_COLUMNS} FROM {self._messages} WHERE thread_id = %s{resource_clause} "
                    "AND (created_at, id) > (%s, %s) ORDER BY created_at ASC, id ASC LIMIT %s",
                    [thread_id, *resource_params, created_at, item.id, item.with_next_messages],
                )
            for row in (*before, *after):
                if row[0] not in found:
                    found[row[0]] = _message(row)
        return found

    # -- messages: writes

    async def _lock_threads(self, conn: Connection, thread_ids: Iterable[str]) -> dict[str, str]:
        """``id -> resource_id`` of the threads that exist, locked for this transaction (sorted: no
        deadlocks)."""
        wanted = sorted(set(_storable_ids(thread_ids)))
        if not wanted:
            return {}
        rows = await self._rows(
            conn,
            f"SELECT id, resource_id FROM {self._threads} WHERE id = ANY(%s::text[]) ORDER BY id FOR UPDATE",
            (wanted,),
        )
        return {r[0]: r[1] for r in rows}

    async def _bump(self, conn: Connection, thread_ids: Iterable[str]) -> None:
        """Set ``updated_at = max(now, previous + 1 ms)`` on each existing thread (docs/spec.md §4.5)."""
        wanted = sorted(set(thread_ids))
        if not wanted:
            return
        now = utc_now()
        rows = await self._rows(
            conn,
            f"SELECT id, updated_at FROM {self._threads} WHERE id = ANY(%s::text[]) ORDER BY id FOR UPDATE",
            (wanted,),
        )
        for thread_id, updated_at in rows:
            await conn.execute(
                f"UPDATE {self._threads} SET updated_at = %s WHERE id = %s",
                (next_after(updated_at, now), thread_id),
            )

    async def _upsert_message(self, conn: Connection, message: MastraDBMessage, content: str) -> None:
        metadata = message.content.metadata
        await conn.execute(
            f"INSERT INTO {self._messages} ({_MESSAGE_COLUMNS}, metadata) VALUES (%s, %s, %s, %s, %s, %s, "
            "%s, %s) "
            "ON CONFLICT (id) DO UPDATE SET thread_id = EXCLUDED.thread_id, resource_id = "
            "EXCLUDED.resource_id, "
            "role = EXCLUDED.role, type = EXCLUDED.type, content = EXCLUDED.content, "
            "created_at = EXCLUDED.created_at, metadata = EXCLUDED.metadata",
            (
                message.id,
                message.thread_id,
                message.resource_id,
                message.role,
                message.type,
                content,
                message.created_at,
                None if metadata is None else _json(metadata, f"metadata of message {message.id}"),
            ),
        )

    async def save_messages(self, messages: Sequence[MessageInput]) -> list[MastraDBMessage]:
        """Upsert messages by id in one transaction (docs/spec.md §4.5) and return them as stored.

        Input may be v2, legacy v1 or camelCase (see :func:`normalize_messages`). Each message needs an
        existing thread (ThreadNotFoundError); a missing ``resource_id`` is taken from the thread and a
        different one is a ValidationError. An existing id is replaced, moving it if its thread changed.
        If anything is invalid, nothing is saved.
        """
        operation = "SAVE_MESSAGES"
        if isinstance(messages, str | Mapping) or not isinstance(messages, Iterable):
            raise ValidationError(
                "messages must be a list of messages", id=_error_id(operation, "INVALID_ARGS")
            )
        try:
            normalized = normalize_messages(messages)
        except ValidationError as exc:
            exc.id, exc.domain = _error_id(operation, "INVALID_MESSAGE"), "STORAGE"
            raise
        if not normalized:
            return []
        for message in normalized:
            if not message.thread_id.strip():
                raise ThreadNotFoundError(
                    f"message {message.id} has no thread_id; every message must belong to an existing thread",
                    id=_error_id(operation, "THREAD_NOT_FOUND"),
                )
            _check_message_text(message, operation)
        contents = [_content_json(m.content, m.id) for m in normalized]

        async def write(conn: Connection) -> list[MastraDBMessage]:
            threads = await self._lock_threads(conn, (m.thread_id for m in normalized))
            stored: list[MastraDBMessage] = []
            for message in normalized:
                if message.thread_id not in threads:
                    raise ThreadNotFoundError(
                        f"thread {message.thread_id} does not exist; create it before saving messages to it",
                        id=_error_id(operation, "THREAD_NOT_FOUND"),
                        details={"thread_id": message.thread_id, "message_id": message.id},
                    )
                owner = threads[message.thread_id]
                if message.resource_id is None:
                    message = message.model_copy(update={"resource_id": owner})
                elif message.resource_id != owner:
                    raise ValidationError(
                        f"message {message.id} has resource_id {message.resource_id!r} but thread "
                        f"{message.thread_id} belongs to another resource; omit resource_id or use the "
                        "thread's",
                        id=_error_id(operation, "RESOURCE_MISMATCH"),
                    )
                stored.append(message)
            previous = await self._rows(
                conn,
                f"SELECT thread_id FROM {self._messages} WHERE id = ANY(%s::text[])",
                ([m.id for m in stored],),
            )
            for message, content in zip(stored, contents, strict=True):
                await self._upsert_message(conn, message, content)
            await self._bump(conn, {m.thread_id for m in stored} | {r[0] for r in previous})
            return list({m.id: m for m in stored}.values())

        result: list[MastraDBMessage] = await self._call(operation, write)
        return result

    async def update_messages(self, updates: Sequence[MessageUpdateInput]) -> list[MastraDBMessage]:
        """Apply partial updates in one transaction and return the updated messages (docs/spec.md §4.5).

        Only given fields change. ``content`` is merged one level (given keys replace stored ones) and
        ``content.metadata`` one level deeper. A new ``thread_id`` moves the message and takes the new
        thread's ``resource_id``. Unknown ids are ignored.
        """
        operation = "UPDATE_MESSAGES"
        if isinstance(updates, str | Mapping) or not isinstance(updates, Iterable):
            raise ValidationError(
                "updates must be a list of updates", id=_error_id(operation, "INVALID_ARGS")
            )
        parsed = [
            _model(MessageUpdate, u, f"update [{i}]", _error_id(operation, "INVALID_ARGS"))
            for i, u in enumerate(updates)
        ]
        if not parsed:
            return []
        for update in parsed:
            _text_ok(update.role, "role", operation)
            _text_ok(update.type, "type", operation)
            _text_ok(update.thread_id, "thread_id", operation)

        async def write(conn: Connection) -> list[MastraDBMessage]:
            updated: dict[str, MastraDBMessage] = {}
            bumped: set[str] = set()
            for update in parsed:
                if not _storable_ids([update.id]):
                    continue
                row = await self._row(
                    conn,
                    f"SELECT {_MESSAGE_COLUMNS} FROM {self._messages} WHERE id = %s FOR UPDATE",
                    (update.id,),
                )
                if row is None:
                    continue
                message = await self._apply_update(conn, _message(row), json.loads(row[5]), update, operation)
                await self._upsert_message(conn, message, _content_json(message.content, message.id))
                bumped |= {row[1], message.thread_id}
                updated[message.id] = message
            await self._bump(conn, bumped)
            return list(updated.values())

        result: list[MastraDBMessage] = await self._call(operation, write)
        return result

    async def _apply_update(
        self,
        conn: Connection,
        current: MastraDBMessage,
        stored_content: dict[str, Any],
        update: MessageUpdate,
        operation: str,
    ) -> MastraDBMessage:
        changes: dict[str, Any] = {}
        if update.content is not None:
            changes["content"] = _merge_content(stored_content, update.content, update.id, operation)
        if update.role is not None:
            changes["role"] = update.role
        if update.type is not None:
            changes["type"] = update.type
        if update.created_at is not None:
            changes["created_at"] = update.created_at
        if update.thread_id is not None and update.thread_id != current.thread_id:
            thread = await self._load_thread(conn, update.thread_id)
            if thread is None:
                raise ThreadNotFoundError(
                    f"thread {update.thread_id} does not exist; cannot move message {update.id} to it",
                    id=_error_id(operation, "THREAD_NOT_FOUND"),
                )
            changes["thread_id"] = thread.id
            changes["resource_id"] = thread.resource_id
        return current.model_copy(update=changes)

    async def delete_messages(self, message_ids: Sequence[str]) -> None:
        """Delete messages in one transaction and bump each thread that lost one; unknown ids are ignored."""
        operation = "DELETE_MESSAGES"
        ids = _storable_ids(validate_message_ids(message_ids, store=STORE, operation=operation))
        if not ids:
            return

        async def write(conn: Connection) -> None:
            owners = await self._rows(
                conn, f"DELETE FROM {self._messages} WHERE id = ANY(%s::text[]) RETURNING thread_id", (ids,)
            )
            await self._bump(conn, (r[0] for r in owners))

        await self._call(operation, write)

    # -- resources

    async def _load_resource(
        self, conn: Connection, resource_id: str, *, lock: bool = False
    ) -> Resource | None:
        row = await self._row(
            conn,
            f"SELECT {_RESOURCE_COLUMNS} FROM {self._resources} WHERE id = %s"
            + (" FOR UPDATE" if lock else ""),
            (resource_id,),
        )
        return None if row is None else _resource(row)

    async def _write_resource(self, conn: Connection, resource: Resource) -> None:
        await conn.execute(
            f"INSERT INTO {self._resources} ({_RESOURCE_COLUMNS}) VALUES (%s, %s, %s, %s, %s) "
            "ON CONFLICT (id) DO UPDATE SET working_memory = EXCLUDED.working_memory, "
            "metadata = EXCLUDED.metadata, created_at = EXCLUDED.created_at, updated_at = "
            "EXCLUDED.updated_at",
            (
                resource.id,
                resource.working_memory,
                _json_or_null(resource.metadata, f"metadata of resource {resource.id}"),
                resource.created_at,
                resource.updated_at,
            ),
        )

    async def get_resource_by_id(self, resource_id: str) -> Resource | None:
        """The resource, or ``None``."""
        operation = "GET_RESOURCE_BY_ID"
        _non_blank(resource_id, "resource_id", operation)
        if not _storable_ids([resource_id]):
            return None

        async def read(conn: Connection) -> Resource | None:
            return await self._load_resource(conn, resource_id)

        result: Resource | None = await self._call(operation, read)
        return result

    async def save_resource(self, resource: ResourceInput) -> Resource:
        """Insert or replace a resource by id; returns it as stored."""
        operation = "SAVE_RESOURCE"
        parsed = _model(Resource, resource, "resource", _error_id(operation, "INVALID_ARGS"))
        _text_ok(parsed.id, "resource id", operation)
        _text_ok(parsed.working_memory, "working_memory", operation)
        _json_or_null(parsed.metadata, f"metadata of resource {parsed.id}")

        async def write(conn: Connection) -> None:
            await self._write_resource(conn, parsed)

        await self._call(operation, write)
        return parsed

    async def update_resource(
        self, resource_id: str, working_memory: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Resource:
        """Create the resource if missing; else replace ``working_memory`` when given, shallow-merge
        ``metadata``, and bump ``updated_at``.
        """
        operation = "UPDATE_RESOURCE"
        _non_blank(resource_id, "resource_id", operation)
        if working_memory is not None and not isinstance(working_memory, str):
            raise ValidationError("working_memory must be a string", id=_error_id(operation, "INVALID_ARGS"))
        if metadata is not None and not isinstance(metadata, Mapping):
            raise ValidationError("metadata must be a dict", id=_error_id(operation, "INVALID_ARGS"))
        _text_ok(resource_id, "resource_id", operation)
        _text_ok(working_memory, "working_memory", operation)
        _json_or_null(metadata, "metadata")

        async def write(conn: Connection) -> Resource:
            # Serialise concurrent first writes of the same resource (there is no row to lock yet).
            await conn.execute(
                "SELECT pg_advisory_xact_lock(hashtext(%s))", (f"mastra_resource:{resource_id}",)
            )
            current = await self._load_resource(conn, resource_id, lock=True)
            if current is None:
                now = utc_now()
                resource = Resource(
                    id=resource_id,
                    working_memory=working_memory,
                    metadata=None if metadata is None else dict(metadata),
                    created_at=now,
                    updated_at=now,
                )
            else:
                resource = current.model_copy(
                    update={
                        "working_memory": current.working_memory
                        if working_memory is None
                        else working_memory,
                        "metadata": current.metadata
                        if metadata is None
                        else {**(current.metadata or {}), **metadata},
                        "updated_at": next_after(current.updated_at),
                    }
                )
            await self._write_resource(conn, resource)
            return resource

        result: Resource = await self._call(operation, write)
        return result

    # -- clone

    async def clone_thread(
        self,
        source_thread_id: str,
        new_thread_id: str | None = None,
        resource_id: str | None = None,
        title: str | None = None,
        message_limit: int | None = None,
        message_filter: CloneMessageFilterInput | None = None,
    ) -> CloneResult:
        """Copy a thread and its messages under new ids, in one transaction.

        ``message_filter`` keeps messages within ``start_date``..``end_date`` (inclusive) and/or listed in
        ``message_ids``; ``message_limit`` then keeps the newest N. The new thread's metadata is the
        source's plus ``source_thread_id``, ``cloned_at`` (canonical timestamp) and ``last_message_id``
        (the source id of the newest copied message, or ``None``). The title defaults to
        ``"Clone of <source title>"``. Messages keep their ``created_at``.
        """
        operation = "CLONE_THREAD"
        args = validate_clone_args(
            source_thread_id, new_thread_id, resource_id, title, message_limit, message_filter, store=STORE
        )
        for value, what in ((source_thread_id, "source_thread_id"), (args.new_thread_id, "new_thread_id"),
                            (args.resource_id, "resource_id"), (args.title, "title")):  # fmt: skip
            _text_ok(value, what, operation)

        async def write(conn: Connection) -> CloneResult:
            return await self._clone(conn, source_thread_id, args)

        # Not retried: a clone creates new ids, so running it twice would create two clones.
        result: CloneResult = await self._call(operation, write, idempotent=False)
        return result

    async def _clone(self, conn: Connection, source_id: str, args: CloneArgs) -> CloneResult:
        operation = "CLONE_THREAD"
        source = await self._load_thread(conn, source_id)
        if source is None:
            raise ThreadNotFoundError(
                f"thread {source_id} does not exist; nothing to clone",
                id=_error_id(operation, "THREAD_NOT_FOUND"),
            )
        new_id = args.new_thread_id or str(uuid.uuid4())
        if await self._load_thread(conn, new_id) is not None:
            raise ValidationError(
                f"thread {new_id} already exists; pass another new_thread_id or omit it",
                id=_error_id(operation, "THREAD_EXISTS"),
            )
        where: list[str] = ["thread_id = %s"]
        params: list[Any] = [source_id]
        flt = args.message_filter
        if flt is not None and flt.start_date is not None:
            where.append("created_at >= %s")
            params.append(flt.start_date)
        if flt is not None and flt.end_date is not None:
            where.append("created_at <= %s")
            params.append(flt.end_date)
        if flt is not None and flt.message_ids is not None:
            where.append("id = ANY(%s::text[])")
            params.append(_storable_ids(flt.message_ids))
        rows = await self._rows(
            conn,
            f"SELECT {_MESSAGE_COLUMNS} FROM {self._messages} WHERE {' AND '.join(where)} ORDER BY "
            "created_at, id",
            params,
        )
        if args.message_limit is not None:
            rows = rows[len(rows) - args.message_limit :] if args.message_limit else []
        now = utc_now()
        owner = args.resource_id or source.resource_id
        thread = Thread(
            id=new_id,
            resource_id=owner,
            title=args.title
            if args.title is not None
            else (f"Clone of {source.title}" if source.title else ""),
            metadata={
                **(source.metadata or {}),
                "source_thread_id": source.id,
                "cloned_at": canonical_timestamp(now),
                "last_message_id": rows[-1][0] if rows else None,
            },
            created_at=now,
            updated_at=now,
        )
        await self._write_thread(conn, thread)
        id_map: dict[str, str] = {}
        copies: list[MastraDBMessage] = []
        for row in rows:
            copy = _message(row).model_copy(
                update={"id": str(uuid.uuid4()), "thread_id": new_id, "resource_id": owner}
            )
            await self._upsert_message(conn, copy, row[5])
            id_map[row[0]] = copy.id
            copies.append(copy)
        return CloneResult(thread=thread, messages=copies, message_id_map=id_map)


def _content_field_names() -> dict[str, str]:
    """camelCase alias -> field name of MessageContentV2, so content patches may use either spelling."""
    return {to_camel(name): name for name in MessageContentV2.model_fields}


_CONTENT_ALIASES: Final = _content_field_names()


def _merge_content(stored: dict[str, Any], patch: Mapping[str, Any], message_id: str, operation: str) -> Any:
    """Merge a content patch one level deep, and ``metadata`` one level deeper (docs/spec.md §4.5)."""
    merged = dict(stored)
    for key, value in patch.items():
        name = _CONTENT_ALIASES.get(key, key)
        if name == "metadata" and isinstance(value, Mapping) and isinstance(merged.get("metadata"), Mapping):
            merged["metadata"] = {**merged["metadata"], **value}
        else:
            merged[name] = value
    return _model(
        MessageContentV2, merged, f"content of message {message_id}", _error_id(operation, "INVALID_ARGS")
    )
