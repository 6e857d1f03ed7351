"""What a storage backend implements: the ``_``-prefixed hooks of the ``MemoryStorage`` template.

:class:`StorageHooks` declares them; the parts of :class:`~mastra_memory.storage.MemoryStorage` (one module
each, siblings over this class: :mod:`.threads`, :mod:`.resources`, :mod:`.clone`, :mod:`.pages`,
:mod:`.writes`, :mod:`.thread_ops`) build every public method of docs/spec.md §4.2 on top of them. The
template validates arguments, merges updates, bumps ``updated_at``, clones threads, resolves include
windows, assembles pages and reports backend failures; a backend only stores and finds records. Hooks
receive validated input only.

Every hook takes ``tx``, whatever :meth:`StorageHooks._transaction` hands to the unit of work: a SQL
connection inside a transaction, a document-database session, or a client. Nothing here assumes SQL:
each hook is one query (or one batch) of the kind any database with secondary indexes answers — a
MongoDB storage writes them as ``find``/``count_documents``/``bulk_write`` calls.

The template awaits nothing but hooks, so a backend whose hooks never suspend (the SQLite storage runs
them on its worker thread) may drive a whole unit of work to completion synchronously.

Besides the hooks, the class holds the few steps every part of the template takes over them (typed
refusals with the store's error ids, text checks, reads by id, running a unit of work), so no part
inherits another to reach one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Literal, TypeAlias, TypeVar

from ..errors import MastraMemoryError, ThreadNotFoundError, ThreadOwnershipError, ValidationError, error_id
from ..messages import MastraDBMessage
from ..metadata_limits import is_unicode
from .codec import json_text
from .failures import BackendErrors
from .records import DateRange, ListMessagesQuery, ListThreadsQuery, MessageFilter, OrderBy, Resource, Thread

__all__ = ["Candidate", "Side", "StorageHooks", "Work"]

T = TypeVar("T")

Work: TypeAlias = Callable[[Any], Coroutine[Any, Any, T]]
"""A unit of work: given the backend's ``tx``, a coroutine that calls hooks and returns the result."""

Candidate: TypeAlias = tuple[str, Mapping[str, Any] | None]
"""``(message id, content.metadata)``: what the template needs to decide a §4.6 metadata filter."""

Side = Literal["before", "after"]
"""Which side of an include target :meth:`StorageHooks._neighbours` reads (docs/spec.md §4.3 step 5)."""


class StorageHooks(ABC):
    """The hooks of a storage backend. Subclass `MemoryStorage`, not this."""

    #: The ``<STORE>`` part of error ids ``MASTRA_STORAGE_<STORE>_<OPERATION>_<STATUS>`` (docs/spec.md §4.2).
    store_name: ClassVar[str]

    # --- plumbing -------------------------------------------------------------------------------

    @abstractmethod
    async def _transaction(self, operation: str, work: Work[T], *, write: bool, idempotent: bool = True) -> T:
        """Run ``work(tx)`` as one unit and return its result (docs/spec.md §4.5: a write is atomic).

        Create the schema on first use. ``write`` says whether ``work`` changes anything; ``idempotent``
        is ``False`` for work that must not run twice (a clone creates new ids), so it is never retried.
        Let every exception through: the template reports the backend's own ones, as
        `_backend_errors` declares them, as `StorageError`. (A backend
        that declares none turns its failures into StorageError here, with the id
        ``..._<OPERATION>_FAILED`` and a message that says what to check.)
        """

    def _backend_errors(self) -> BackendErrors | None:
        """Which exceptions are the backend's own and how to report them (`BackendErrors`).

        Called when a unit of work fails; the template then raises the StorageError it describes
        (docs/spec.md §4.2 ids, §6.6). The default, ``None``, leaves reporting to `_transaction`.
        """
        return None

    def _text_problem(self, text: str) -> str | None:
        """Why the backend cannot hold ``text``, completing "<what> ...", or ``None``.

        Writes refuse such text with ValidationError before any I/O; an id the backend cannot hold cannot
        exist, so reads skip it. The default refuses unpaired surrogates, which are not Unicode text and
        no backend can store (docs/spec.md §4.1); PostgreSQL text, for instance, holds no U+0000 either.
        """
        if is_unicode(text):
            return None
        return "contains an unpaired surrogate, which is not Unicode text and cannot be stored"

    def _encode_content(self, message: MastraDBMessage) -> Any:
        """The stored form of a message's content, made before any I/O; ValidationError if it is not
        plain JSON data. The default is compact JSON text (`json_text`)
        with Mastra's camelCase keys.
        """
        # Python mode, not JSON mode: JSON mode would silently turn NaN into null. Mastra's own keys
        # (format 2, camelCase), so Mastra reads what is stored here (docs/spec.md §4.1).
        return json_text(message.content.model_dump(by_alias=True), f"content of message {message.id}")

    # --- threads --------------------------------------------------------------------------------

    @abstractmethod
    async def _load_threads(
        self, tx: Any, thread_ids: Sequence[str], *, lock: bool = False
    ) -> dict[str, Thread]:
        """The threads among ``thread_ids`` (sorted, unique) that exist, by id. With ``lock``, keep them
        from concurrent writers until the unit ends (``SELECT ... FOR UPDATE``) where the backend can."""

    @abstractmethod
    async def _write_thread(self, tx: Any, thread: Thread) -> None:
        """Insert or replace the thread by id (all fields, ``updated_at`` included)."""

    @abstractmethod
    async def _delete_thread(self, tx: Any, thread_id: str) -> None:
        """Delete the thread and every message of it (docs/spec.md §4.2); a missing thread is a no-op."""

    @abstractmethod
    async def _count_threads(self, tx: Any, query: ListThreadsQuery) -> int:
        """How many threads ``query.resource_id`` owns (all threads when ``None``)."""

    @abstractmethod
    async def _find_threads(
        self, tx: Any, query: ListThreadsQuery, offset: int, limit: int | None
    ) -> list[Thread]:
        """Threads of ``query.resource_id`` (all when ``None``) ordered by ``query.order`` then id in the
        same direction, skipping ``offset`` and returning at most ``limit`` (``None``: all).

        With ``query.metadata`` the template asks for everything and applies the §4.6 rule itself; the
        hook may narrow the candidates by that filter to any superset of the matches.
        """

    # --- messages: reads ------------------------------------------------------------------------

    @abstractmethod
    async def _count_messages(self, tx: Any, query: ListMessagesQuery) -> int:
        """The size of the base set of docs/spec.md §4.3 step 3 without the metadata filter: messages of
        ``query.thread_ids`` (every thread when empty), of ``query.resource_id`` when given, within
        ``query.filter.date_range`` when given."""

    @abstractmethod
    async def _find_messages(
        self, tx: Any, query: ListMessagesQuery, offset: int, limit: int | None
    ) -> list[MastraDBMessage]:
        """That base set ordered by ``(created_at, id)`` in ``query.order.direction``, skipping
        ``offset`` and returning at most ``limit`` (``None``: all). Paging happens in the backend."""

    @abstractmethod
    async def _metadata_candidates(self, tx: Any, query: ListMessagesQuery) -> list[Candidate]:
        """``(id, content.metadata)`` of that base set in the same order, unpaged, for the template to
        apply the §4.6 filter ``query.filter.metadata`` exactly; the hook may narrow by it to a superset."""

    @abstractmethod
    async def _messages_by_id(
        self, tx: Any, message_ids: Sequence[str], *, lock: bool = False
    ) -> list[MastraDBMessage]:
        """The messages among ``message_ids`` (non-empty, unique) that exist, ascending by ``(created_at,
        id)``. With ``lock``, keep them from concurrent writers until the unit ends where possible."""

    @abstractmethod
    async def _neighbours(
        self, tx: Any, anchor: MastraDBMessage, side: Side, limit: int, resource_id: str | None
    ) -> list[MastraDBMessage]:
        """Up to ``limit`` (≥ 1) messages of ``anchor.thread_id`` nearest to ``anchor``, strictly before
        or after it by ``(created_at, id)``, restricted to ``resource_id`` when given.

        One cursor query on a ``(thread_id, created_at, id)`` index: before is ``(created_at, id) <
        anchor`` descending, after is ``> anchor`` ascending (docs/spec.md §4.3 step 5).
        """

    # --- messages: writes -----------------------------------------------------------------------

    @abstractmethod
    async def _write_messages(self, tx: Any, messages: Sequence[tuple[MastraDBMessage, Any]]) -> None:
        """Insert or replace each message by id, in order (a repeated id keeps the last), with its content
        as `_encode_content` made it. Replacing may move a message to another thread."""

    @abstractmethod
    async def _delete_messages(self, tx: Any, message_ids: Sequence[str]) -> set[str]:
        """Delete those messages (unknown ids are ignored); return the threads that lost one."""

    # --- resources ------------------------------------------------------------------------------

    @abstractmethod
    async def _load_resource(self, tx: Any, resource_id: str, *, lock: bool = False) -> Resource | None:
        """The resource, or ``None``. With ``lock``, serialise concurrent read-modify-writes of this id,
        including the first one when no record exists yet, where the backend can."""

    @abstractmethod
    async def _write_resource(self, tx: Any, resource: Resource) -> None:
        """Insert or replace the resource by id."""

    # --- steps every part of the template takes over the hooks (backends may use them too) ---------

    async def _run_unit(self, operation: str, work: Work[T], *, write: bool, idempotent: bool = True) -> T:
        """`_transaction`, with the backend's own exceptions reported as StorageError.

        What the template calls for every unit of work, so the report of docs/spec.md §4.2/§6.6 is written
        once (`failures`). MastraMemoryError and exceptions the backend does not declare pass
        through unchanged.
        """
        try:
            return await self._transaction(operation, work, write=write, idempotent=idempotent)
        except MastraMemoryError:
            raise
        except Exception as exc:
            errors = self._backend_errors()
            if errors is None or not isinstance(exc, errors.types):
                raise
            raise errors.storage_error(self.store_name, operation, exc) from exc

    def _error_id(self, operation: str, status: str) -> str:
        return error_id("STORAGE", self.store_name, operation, status)

    def _invalid(self, operation: str, status: str, message: str) -> ValidationError:
        return ValidationError(message, id=self._error_id(operation, status), domain="STORAGE")

    def _no_thread(self, operation: str, message: str, **details: Any) -> ThreadNotFoundError:
        return ThreadNotFoundError(message, id=self._error_id(operation, "THREAD_NOT_FOUND"), details=details)

    def _not_owned(self, operation: str, message: str, **details: Any) -> ThreadOwnershipError:
        """The write would touch another resource's thread or message (docs/spec.md §4.5, ownership).

        ``message`` never names the owning resource, only what the caller named.
        """
        return ThreadOwnershipError(
            message, id=self._error_id(operation, "RESOURCE_MISMATCH"), domain="STORAGE", details=details
        )

    def _check_text(self, operation: str, *fields: tuple[str | None, str]) -> None:
        """Refuse text the backend cannot hold (``(value, what)`` pairs; ``None`` values are skipped)."""
        for value, what in fields:
            problem = None if value is None else self._text_problem(value)
            if problem is not None:
                raise self._invalid(operation, "INVALID_ARGS", f"{what} {problem}")

    def _existing(self, ids: Iterable[str]) -> list[str]:
        """The ids that can exist in this backend (the others are unknown by construction)."""
        return [value for value in ids if self._text_problem(value) is None]

    async def _load_thread(self, tx: Any, thread_id: str, *, lock: bool = False) -> Thread | None:
        return (await self._load_threads(tx, [thread_id], lock=lock)).get(thread_id)

    async def _find_by_id(self, tx: Any, ids: Sequence[str], *, lock: bool = False) -> list[MastraDBMessage]:
        return await self._messages_by_id(tx, ids, lock=lock) if ids else []

    async def _thread_messages(
        self, tx: Any, thread_id: str, *, date_range: DateRange | None = None, newest: int | None = None
    ) -> list[MastraDBMessage]:
        """Messages of the thread ascending by ``(created_at, id)``, within ``date_range`` when given;
        with ``newest``, only the newest N (one descending page, read back reversed: docs/spec.md §4.2
        ``message_limit``)."""
        query = ListMessagesQuery(
            thread_ids=(thread_id,),
            resource_id=None,
            include=(),
            per_page=False,
            page=0,
            filter=None if date_range is None else MessageFilter(date_range=date_range),
            order=OrderBy(direction="ASC" if newest is None else "DESC"),
            include_total=False,
        )
        if newest is None:
            return await self._find_messages(tx, query, 0, None)
        return (await self._find_messages(tx, query, 0, newest))[::-1]
