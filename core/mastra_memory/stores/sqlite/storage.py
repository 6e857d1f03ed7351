"""The embedded SQLite ``MemoryStorage`` (docs/spec.md §4): the reference implementation of the contract.

Layout: tables ``mastra_threads``, ``mastra_messages`` and ``mastra_resources``. Timestamps are integer
epoch milliseconds, so ordering by ``(created_at, id)`` is exact; message content and metadata are JSON
text. Every write runs in one ``BEGIN IMMEDIATE`` transaction on the connection's single worker thread,
which also serialises concurrent tasks.

The §4.6 metadata filter is evaluated in two steps: SQL narrows the candidates with typed JSON checks
(``json_type`` plus equality for strings; type only for numbers), then :func:`metadata_matches` decides
exactly in Python. The SQL step only ever keeps a superset, so the result is exactly the spec's.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError
from pydantic.alias_generators import to_camel

from ...capabilities import StorageCapabilities
from ...errors import (
    MastraMemoryError,
    StorageError,
    ThreadNotFoundError,
    ValidationError,
    error_id,
)
from ...messages import (
    MastraDBMessage,
    MessageContentV2,
    MessageInput,
    epoch_ms,
    from_epoch_ms,
    normalize_messages,
)
from ...storage import (
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
    MetadataScalar,
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
from ...timestamps import canonical_timestamp, next_after, utc_now
from .connection import SQLiteConnection
from .settings import DEFAULT_URL, SQLiteSettings

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

STORE = "SQLITE"
_INT53 = 2**53

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

_MESSAGE_COLUMNS = "id, thread_id, resource_id, role, type, content, created_at"
_THREAD_COLUMNS = "id, resource_id, title, metadata, created_at, updated_at"
_RESOURCE_COLUMNS = "id, working_memory, metadata, created_at, updated_at"
_IN_JSON = "IN (SELECT value FROM json_each(?))"

Row = tuple[Any, ...]


# ------------------------------------------------------------------------------------- conversions


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return canonical_timestamp(value)
    raise TypeError(f"{type(value).__name__} is not a JSON type")


def _json(value: Any, what: str) -> str:
    """JSON text of plain data; datetimes become canonical timestamps, NaN/infinities/objects are refused."""
    try:
        return json.dumps(
            value, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_json_default
        )
    except (TypeError, ValueError) as exc:
        raise ValidationError(
            f"{what} is not JSON-serialisable (no NaN, infinities or objects): {exc}"
        ) from None


def _json_or_null(value: Mapping[str, Any] | None, what: str) -> str | None:
    return None if value is None else _json(dict(value), what)


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
            "created_at": from_epoch_ms(row[6]),
        }
    )


def _thread(row: Row) -> Thread:
    return Thread(
        id=row[0],
        resource_id=row[1],
        title=row[2],
        metadata=None if row[3] is None else json.loads(row[3]),
        created_at=from_epoch_ms(row[4]),
        updated_at=from_epoch_ms(row[5]),
    )


def _resource(row: Row) -> Resource:
    return Resource(
        id=row[0],
        working_memory=row[1],
        metadata=None if row[2] is None else json.loads(row[2]),
        created_at=from_epoch_ms(row[3]),
        updated_at=from_epoch_ms(row[4]),
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


def _non_blank(value: Any, name: str, operation: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(
            f"{name} must be a non-empty string",
            id=error_id("STORAGE", STORE, operation, "INVALID_ARGS"),
            domain="STORAGE",
        )
    return value


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
        elif isinstance(value, int) and abs(value) > _INT53:
            clauses.append(f"json_type({column}, ?) IN ('integer', 'real')")
            params.append(path)
        else:
            clauses.append(f"json_type({column}, ?) IN ('integer', 'real') AND json_extract({column}, ?) = ?")
            params += [path, path, value]
    return " AND ".join(clauses) or "1", params


# ----------------------------------------------------------------------------------------- storage


class SQLiteStorage:
    """Threads, messages and resources in one SQLite file (default ``./memory.db``; ``:memory:`` works).

    Safe for concurrent tasks: every call runs on the connection's single worker thread, and every write
    is one transaction, so a failed call leaves the database as it was.
    """

    capabilities = StorageCapabilities(resource_scope=True, list_by_resource=True, clone_thread=True)

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

    def _ensure_schema(self, conn: sqlite3.Connection) -> None:
        # Runs on the worker thread, which serialises every call, so no lock is needed.
        if not self._schema_ready:
            for statement in _SCHEMA:
                conn.execute(statement)
            self._schema_ready = True

    async def _call(self, operation: str, fn: Callable[[sqlite3.Connection], T], *, write: bool) -> T:
        def run(conn: sqlite3.Connection) -> T:
            self._ensure_schema(conn)
            return fn(conn)

        try:
            if write:
                return await self._conn.transaction(run)
            return await self._conn.run(run)
        except MastraMemoryError:
            raise
        except (sqlite3.Error, OSError) as exc:
            raise StorageError(
                f"SQLite {operation.lower().replace('_', ' ')} failed: {exc}; check that {self._conn.path} "
                "is writable and not corrupted",
                id=error_id("STORAGE", STORE, operation, "FAILED"),
                details={"path": self._conn.path},
            ) from exc

    def _error_id(self, operation: str, status: str) -> str:
        return error_id("STORAGE", STORE, operation, status)

    async def init(self) -> None:
        """Create the schema idempotently (every other method also does this on first use)."""
        await self._call("INIT", lambda conn: None, write=True)

    async def close(self) -> None:
        """Close the connection. A closed storage reopens on next use (``:memory:`` starts empty)."""
        await self._conn.close()
        self._schema_ready = False

    # -- threads

    async def get_thread_by_id(self, thread_id: str, resource_id: str | None = None) -> Thread | None:
        """The thread, or ``None`` if it is missing or ``resource_id`` is given and differs."""
        operation = "GET_THREAD_BY_ID"
        _non_blank(thread_id, "thread_id", operation)
        resource = validate_resource_id(resource_id, store=STORE, operation=operation)
        thread = await self._call(operation, lambda conn: self._load_thread(conn, thread_id), write=False)
        if thread is None or (resource is not None and thread.resource_id != resource):
            return None
        return thread

    @staticmethod
    def _load_thread(conn: sqlite3.Connection, thread_id: str) -> Thread | None:
        row = conn.execute(
            f"SELECT {_THREAD_COLUMNS} FROM mastra_threads WHERE id = ?", (thread_id,)
        ).fetchone()
        return None if row is None else _thread(row)

    @staticmethod
    def _write_thread(conn: sqlite3.Connection, thread: Thread) -> None:
        conn.execute(
            f"INSERT INTO mastra_threads ({_THREAD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET resource_id = excluded.resource_id, title = excluded.title, "
            "metadata = excluded.metadata, created_at = excluded.created_at, "
            "updated_at = excluded.updated_at",
            (
                thread.id,
                thread.resource_id,
                thread.title,
                _json_or_null(thread.metadata, f"metadata of thread {thread.id}"),
                epoch_ms(thread.created_at),
                epoch_ms(thread.updated_at),
            ),
        )

    async def save_thread(self, thread: ThreadInput) -> Thread:
        """Insert or replace a thread by id; returns it as stored."""
        operation = "SAVE_THREAD"
        parsed = _model(Thread, thread, "thread", self._error_id(operation, "INVALID_ARGS"))
        _json_or_null(parsed.metadata, f"metadata of thread {parsed.id}")
        await self._call(operation, lambda conn: self._write_thread(conn, parsed), write=True)
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
            raise ValidationError("title must be a string", id=self._error_id(operation, "INVALID_ARGS"))
        if metadata is not None and not isinstance(metadata, Mapping):
            raise ValidationError("metadata must be a dict", id=self._error_id(operation, "INVALID_ARGS"))
        _json_or_null(metadata, "metadata")

        def write(conn: sqlite3.Connection) -> Thread:
            current = self._load_thread(conn, id)
            if current is None:
                raise ThreadNotFoundError(
                    f"thread {id} does not exist; create it with save_thread first",
                    id=self._error_id(operation, "THREAD_NOT_FOUND"),
                )
            updated = current.model_copy(
                update={
                    "title": current.title if title is None else title,
                    "metadata": current.metadata
                    if metadata is None
                    else {**(current.metadata or {}), **metadata},
                    "updated_at": next_after(current.updated_at),
                }
            )
            self._write_thread(conn, updated)
            return updated

        return await self._call(operation, write, write=True)

    async def delete_thread(self, thread_id: str) -> None:
        """Delete the thread and all its messages in one transaction; a missing thread is a no-op."""
        operation = "DELETE_THREAD"
        _non_blank(thread_id, "thread_id", operation)

        def write(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM mastra_messages WHERE thread_id = ?", (thread_id,))
            conn.execute("DELETE FROM mastra_threads WHERE id = ?", (thread_id,))

        await self._call(operation, write, write=True)

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
        return await self._call("LIST_THREADS", lambda conn: self._list_threads(conn, query), write=False)

    @staticmethod
    def _list_threads(conn: sqlite3.Connection, q: ListThreadsQuery) -> ThreadPage:
        where, params = ["1"], []
        if q.resource_id is not None:
            where.append("resource_id = ?")
            params.append(q.resource_id)
        if q.metadata:
            clause, extra = _metadata_prefilter("metadata", "$", q.metadata)
            where.append(clause)
            params += extra
        direction = q.order.direction
        sql = (
            f"SELECT {_THREAD_COLUMNS} FROM mastra_threads WHERE {' AND '.join(where)} "
            f"ORDER BY {q.order.field} {direction}, id {direction}"
        )
        if q.metadata:
            rows = conn.execute(sql, params).fetchall()
            matching = [t for t in map(_thread, rows) if metadata_matches(q.metadata, t.metadata)]
            total = len(matching)
            end = None if q.per_page is False else q.offset + q.per_page
            threads = matching[q.offset : end]
        else:
            total = conn.execute(
                f"SELECT COUNT(*) FROM mastra_threads WHERE {' AND '.join(where)}", params
            ).fetchone()[0]
            limit = -1 if q.per_page is False else q.per_page
            rows = conn.execute(f"{sql} LIMIT ? OFFSET ?", [*params, limit, q.offset]).fetchall()
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
        return await self._call("LIST_MESSAGES", lambda conn: self._list_messages(conn, query), write=False)

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
        return await self._call(
            "LIST_MESSAGES_BY_RESOURCE_ID", lambda conn: self._list_messages(conn, query), write=False
        )

    async def list_messages_by_id(self, message_ids: Sequence[str]) -> list[MastraDBMessage]:
        """Those messages in ascending ``(created_at, id)`` order; unknown ids are skipped."""
        operation = "LIST_MESSAGES_BY_ID"
        ids = validate_message_ids(message_ids, store=STORE, operation=operation)
        if not ids:
            return []
        return await self._call(operation, lambda conn: self._messages_by_id(conn, ids), write=False)

    @staticmethod
    def _messages_by_id(conn: sqlite3.Connection, ids: Iterable[str]) -> list[MastraDBMessage]:
        rows = conn.execute(
            f"SELECT {_MESSAGE_COLUMNS} FROM mastra_messages WHERE id {_IN_JSON} ORDER BY created_at, id",
            (json.dumps(list(ids)),),
        ).fetchall()
        return [_message(r) for r in rows]

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
        date_range = q.filter.date_range if q.filter else None
        if date_range is not None and date_range.start is not None:
            clauses.append("created_at > ?" if date_range.start_exclusive else "created_at >= ?")
            params.append(epoch_ms(date_range.start))
        if date_range is not None and date_range.end is not None:
            clauses.append("created_at < ?" if date_range.end_exclusive else "created_at <= ?")
            params.append(epoch_ms(date_range.end))
        return " AND ".join(clauses), params

    def _list_messages(self, conn: sqlite3.Connection, q: ListMessagesQuery) -> MessagePage:
        if q.per_page is not False and q.per_page == 0:  # False == 0 in Python, and False means "all"
            # Fast path: include windows only (what semantic recall uses).
            windows = sorted(self._windows(conn, q).values(), key=message_sort_key, reverse=q.descending)
            return MessagePage(messages=windows, total=0, page=q.page, per_page=q.per_page, has_more=False)
        where, params = self._base_where(q)
        direction = "DESC" if q.descending else "ASC"
        order = f"ORDER BY created_at {direction}, id {direction}"
        metadata = q.filter.metadata if q.filter else None
        total: int | None
        if metadata:
            clause, extra = _metadata_prefilter("content", "$.metadata", metadata)
            candidates = conn.execute(
                "SELECT id, json_extract(content, '$.metadata') FROM mastra_messages "
                f"WHERE {where} AND {clause} {order}",
                [*params, *extra],
            ).fetchall()
            matching = [
                row[0]
                for row in candidates
                if metadata_matches(metadata, None if row[1] is None else json.loads(row[1]))
            ]
            total = len(matching)
            end = None if q.per_page is False else q.offset + q.per_page
            page_rows = sorted(
                self._messages_by_id(conn, matching[q.offset : end]),
                key=message_sort_key,
                reverse=q.descending,
            )
            more_rows = q.offset + len(page_rows) < total
        else:
            total = None
            # The has_more rule with include compares against the total, so it is counted even when the
            # caller asked not to receive it.
            if q.include_total or q.include:
                total = conn.execute(
                    f"SELECT COUNT(*) FROM mastra_messages WHERE {where}", params
                ).fetchone()[0]
            # Without a count, one extra row tells whether more rows follow.
            limit = -1 if q.per_page is False else q.per_page + (0 if total is not None else 1)
            rows = conn.execute(
                f"SELECT {_MESSAGE_COLUMNS} FROM mastra_messages WHERE {where} {order} LIMIT ? OFFSET ?",
                [*params, limit, q.offset],
            ).fetchall()
            if q.per_page is not False and len(rows) > q.per_page:
                rows = rows[: q.per_page]
                more_rows = True
            else:
                more_rows = total is not None and q.offset + len(rows) < total
            page_rows = [_message(r) for r in rows]
        merged = {m.id: m for m in page_rows}
        if q.include:
            for message_id, message in self._windows(conn, q).items():
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

    @staticmethod
    def _windows(conn: sqlite3.Connection, q: ListMessagesQuery) -> dict[str, MastraDBMessage]:
        """Resolve include items (§4.3 step 5): windows from each target's own thread, deduplicated by id."""
        found: dict[str, MastraDBMessage] = {}
        # "+" keeps both cursor queries on the (thread_id, created_at, id) index.
        resource_clause = "" if q.resource_id is None else " AND +resource_id = ?"
        resource_params: list[Any] = [] if q.resource_id is None else [q.resource_id]
        for item in q.include:
            target = conn.execute(
                "SELECT thread_id, resource_id, created_at FROM mastra_messages WHERE id = ?", (item.id,)
            ).fetchone()
            if target is None or (q.resource_id is not None and target[1] != q.resource_id):
                continue
            thread_id, _, created_at = target
            before = conn.execute(
                f"SELECT {_MESSAGE_COLUMNS} FROM mastra_messages WHERE thread_id = ?{resource_clause} "
                "AND (created_at, id) <= (?, ?) ORDER BY created_at DESC, id DESC LIMIT ?",
                [thread_id, *resource_params, created_at, item.id, item.with_previous_messages + 1],
            ).fetchall()
            after: list[Row] = []
            if item.with_next_messages:
                after = conn.execute(
                    f"SELECT {_MESSAGE_COLUMNS} FROM mastra_messages WHERE thread_id = ?{resource_clause} "
                    "AND (created_at, id) > (?, ?) ORDER BY created_at ASC, id ASC LIMIT ?",
                    [thread_id, *resource_params, created_at, item.id, item.with_next_messages],
                ).fetchall()
            for row in (*before, *after):
                if row[0] not in found:
                    found[row[0]] = _message(row)
        return found

    # -- messages: writes

    @staticmethod
    def _thread_rows(conn: sqlite3.Connection, thread_ids: Iterable[str]) -> dict[str, Row]:
        """``id -> (resource_id, updated_at_ms)`` for the threads that exist."""
        rows = conn.execute(
            f"SELECT id, resource_id, updated_at FROM mastra_threads WHERE id {_IN_JSON}",
            (json.dumps(sorted(set(thread_ids))),),
        ).fetchall()
        return {r[0]: (r[1], r[2]) for r in rows}

    @staticmethod
    def _bump(conn: sqlite3.Connection, thread_ids: Iterable[str]) -> None:
        """Set ``updated_at = max(now, previous + 1 ms)`` on each existing thread (docs/spec.md §4.5)."""
        now = utc_now()
        for thread_id in sorted(set(thread_ids)):
            row = conn.execute("SELECT updated_at FROM mastra_threads WHERE id = ?", (thread_id,)).fetchone()
            if row is not None:
                stamp = next_after(from_epoch_ms(row[0]), now)
                conn.execute(
                    "UPDATE mastra_threads SET updated_at = ? WHERE id = ?", (epoch_ms(stamp), thread_id)
                )

    @staticmethod
    def _upsert_message(conn: sqlite3.Connection, message: MastraDBMessage, content: str) -> None:
        conn.execute(
            f"INSERT INTO mastra_messages ({_MESSAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET thread_id = excluded.thread_id, "
            "resource_id = excluded.resource_id, role = excluded.role, type = excluded.type, "
            "content = excluded.content, created_at = excluded.created_at",
            (
                message.id,
                message.thread_id,
                message.resource_id,
                message.role,
                message.type,
                content,
                epoch_ms(message.created_at),
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
                "messages must be a list of messages", id=self._error_id(operation, "INVALID_ARGS")
            )
        try:
            normalized = normalize_messages(messages)
        except ValidationError as exc:
            exc.id, exc.domain = self._error_id(operation, "INVALID_MESSAGE"), "STORAGE"
            raise
        if not normalized:
            return []
        for message in normalized:
            if not message.thread_id.strip():
                raise ThreadNotFoundError(
                    f"message {message.id} has no thread_id; every message must belong to an existing thread",
                    id=self._error_id(operation, "THREAD_NOT_FOUND"),
                )
        contents = [_content_json(m.content, m.id) for m in normalized]

        def write(conn: sqlite3.Connection) -> list[MastraDBMessage]:
            threads = self._thread_rows(conn, (m.thread_id for m in normalized))
            stored: list[MastraDBMessage] = []
            for message in normalized:
                if message.thread_id not in threads:
                    raise ThreadNotFoundError(
                        f"thread {message.thread_id} does not exist; create it before saving messages to it",
                        id=self._error_id(operation, "THREAD_NOT_FOUND"),
                        details={"thread_id": message.thread_id, "message_id": message.id},
                    )
                owner = threads[message.thread_id][0]
                if message.resource_id is None:
                    message = message.model_copy(update={"resource_id": owner})
                elif message.resource_id != owner:
                    raise ValidationError(
                        f"message {message.id} has resource_id {message.resource_id!r} but thread "
                        f"{message.thread_id} belongs to another resource; "
                        "omit resource_id or use the thread's",
                        id=self._error_id(operation, "RESOURCE_MISMATCH"),
                    )
                stored.append(message)
            previous = conn.execute(
                f"SELECT thread_id FROM mastra_messages WHERE id {_IN_JSON}",
                (json.dumps([m.id for m in stored]),),
            ).fetchall()
            for message, content in zip(stored, contents, strict=True):
                self._upsert_message(conn, message, content)
            self._bump(conn, {m.thread_id for m in stored} | {r[0] for r in previous})
            return list({m.id: m for m in stored}.values())

        return await self._call(operation, write, write=True)

    async def update_messages(self, updates: Sequence[MessageUpdateInput]) -> list[MastraDBMessage]:
        """Apply partial updates in one transaction and return the updated messages (docs/spec.md §4.5).

        Only given fields change. ``content`` is merged one level (given keys replace stored ones) and
        ``content.metadata`` one level deeper. A new ``thread_id`` moves the message and takes the new
        thread's ``resource_id``. Unknown ids are ignored.
        """
        operation = "UPDATE_MESSAGES"
        if isinstance(updates, str | Mapping) or not isinstance(updates, Iterable):
            raise ValidationError(
                "updates must be a list of updates", id=self._error_id(operation, "INVALID_ARGS")
            )
        parsed = [
            _model(MessageUpdate, u, f"update [{i}]", self._error_id(operation, "INVALID_ARGS"))
            for i, u in enumerate(updates)
        ]
        if not parsed:
            return []

        def write(conn: sqlite3.Connection) -> list[MastraDBMessage]:
            updated: dict[str, MastraDBMessage] = {}
            bumped: set[str] = set()
            for update in parsed:
                row = conn.execute(
                    f"SELECT {_MESSAGE_COLUMNS} FROM mastra_messages WHERE id = ?", (update.id,)
                ).fetchone()
                if row is None:
                    continue
                message = self._apply_update(conn, _message(row), json.loads(row[5]), update, operation)
                self._upsert_message(conn, message, _content_json(message.content, message.id))
                bumped |= {row[1], message.thread_id}
                updated[message.id] = message
            self._bump(conn, bumped)
            return list(updated.values())

        return await self._call(operation, write, write=True)

    def _apply_update(
        self,
        conn: sqlite3.Connection,
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
            thread = self._load_thread(conn, update.thread_id)
            if thread is None:
                raise ThreadNotFoundError(
                    f"thread {update.thread_id} does not exist; cannot move message {update.id} to it",
                    id=self._error_id(operation, "THREAD_NOT_FOUND"),
                )
            changes["thread_id"] = thread.id
            changes["resource_id"] = thread.resource_id
        return current.model_copy(update=changes)

    async def delete_messages(self, message_ids: Sequence[str]) -> None:
        """Delete messages in one transaction and bump each thread that lost one; unknown ids are ignored."""
        operation = "DELETE_MESSAGES"
        ids = validate_message_ids(message_ids, store=STORE, operation=operation)
        if not ids:
            return

        def write(conn: sqlite3.Connection) -> None:
            payload = json.dumps(ids)
            owners = conn.execute(
                f"SELECT DISTINCT thread_id FROM mastra_messages WHERE id {_IN_JSON}", (payload,)
            ).fetchall()
            conn.execute(f"DELETE FROM mastra_messages WHERE id {_IN_JSON}", (payload,))
            self._bump(conn, (r[0] for r in owners))

        await self._call(operation, write, write=True)

    # -- resources

    @staticmethod
    def _load_resource(conn: sqlite3.Connection, resource_id: str) -> Resource | None:
        row = conn.execute(
            f"SELECT {_RESOURCE_COLUMNS} FROM mastra_resources WHERE id = ?", (resource_id,)
        ).fetchone()
        return None if row is None else _resource(row)

    @staticmethod
    def _write_resource(conn: sqlite3.Connection, resource: Resource) -> None:
        conn.execute(
            f"INSERT INTO mastra_resources ({_RESOURCE_COLUMNS}) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET working_memory = excluded.working_memory, "
            "metadata = excluded.metadata, created_at = excluded.created_at, "
            "updated_at = excluded.updated_at",
            (
                resource.id,
                resource.working_memory,
                _json_or_null(resource.metadata, f"metadata of resource {resource.id}"),
                epoch_ms(resource.created_at),
                epoch_ms(resource.updated_at),
            ),
        )

    async def get_resource_by_id(self, resource_id: str) -> Resource | None:
        """The resource, or ``None``."""
        operation = "GET_RESOURCE_BY_ID"
        _non_blank(resource_id, "resource_id", operation)
        return await self._call(operation, lambda conn: self._load_resource(conn, resource_id), write=False)

    async def save_resource(self, resource: ResourceInput) -> Resource:
        """Insert or replace a resource by id; returns it as stored."""
        operation = "SAVE_RESOURCE"
        parsed = _model(Resource, resource, "resource", self._error_id(operation, "INVALID_ARGS"))
        _json_or_null(parsed.metadata, f"metadata of resource {parsed.id}")
        await self._call(operation, lambda conn: self._write_resource(conn, parsed), write=True)
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
            raise ValidationError(
                "working_memory must be a string", id=self._error_id(operation, "INVALID_ARGS")
            )
        if metadata is not None and not isinstance(metadata, Mapping):
            raise ValidationError("metadata must be a dict", id=self._error_id(operation, "INVALID_ARGS"))
        _json_or_null(metadata, "metadata")

        def write(conn: sqlite3.Connection) -> Resource:
            current = self._load_resource(conn, resource_id)
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
            self._write_resource(conn, resource)
            return resource

        return await self._call(operation, write, write=True)

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
        return await self._call(operation, lambda conn: self._clone(conn, source_thread_id, args), write=True)

    def _clone(self, conn: sqlite3.Connection, source_id: str, args: CloneArgs) -> CloneResult:
        operation = "CLONE_THREAD"
        source = self._load_thread(conn, source_id)
        if source is None:
            raise ThreadNotFoundError(
                f"thread {source_id} does not exist; nothing to clone",
                id=self._error_id(operation, "THREAD_NOT_FOUND"),
            )
        new_id = args.new_thread_id or str(uuid.uuid4())
        if self._load_thread(conn, new_id) is not None:
            raise ValidationError(
                f"thread {new_id} already exists; pass another new_thread_id or omit it",
                id=self._error_id(operation, "THREAD_EXISTS"),
            )
        where: list[str] = ["thread_id = ?"]
        params: list[Any] = [source_id]
        flt = args.message_filter
        if flt is not None and flt.start_date is not None:
            where.append("created_at >= ?")
            params.append(epoch_ms(flt.start_date))
        if flt is not None and flt.end_date is not None:
            where.append("created_at <= ?")
            params.append(epoch_ms(flt.end_date))
        if flt is not None and flt.message_ids is not None:
            where.append(f"id {_IN_JSON}")
            params.append(json.dumps(flt.message_ids))
        rows = conn.execute(
            f"SELECT {_MESSAGE_COLUMNS} FROM mastra_messages WHERE {' AND '.join(where)} "
            "ORDER BY created_at, id",
            params,
        ).fetchall()
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
        self._write_thread(conn, thread)
        id_map: dict[str, str] = {}
        copies: list[MastraDBMessage] = []
        for row in rows:
            copy = _message(row).model_copy(
                update={"id": str(uuid.uuid4()), "thread_id": new_id, "resource_id": owner}
            )
            self._upsert_message(conn, copy, row[5])
            id_map[row[0]] = copy.id
            copies.append(copy)
        return CloneResult(thread=thread, messages=copies, message_id_map=id_map)


def _content_field_names() -> dict[str, str]:
    """camelCase alias -> field name of MessageContentV2, so content patches may use either spelling."""
    return {to_camel(name): name for name in MessageContentV2.model_fields}


_CONTENT_ALIASES = _content_field_names()


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
        MessageContentV2,
        merged,
        f"content of message {message_id}",
        error_id("STORAGE", STORE, operation, "INVALID_ARGS"),
    )
