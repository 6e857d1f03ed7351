"""``MemoryStorage``: threads, messages and resources (docs/spec.md §4), written once as a template.

Every public method validates its arguments before any I/O (:mod:`.arguments`), then runs one unit of
work through :meth:`~.hooks.StorageHooks._transaction` that calls the backend's hooks (:mod:`.hooks`).
The class is assembled from four parts: this module (lifecycle, threads, resources, clone),
:mod:`.pages` (``list_*``: pages and include windows, §4.3/§4.4), :mod:`.writes` (message writes and
``updated_at`` bumps, §4.5) and :mod:`.thread_ops` (moving and archiving threads). Nothing of the
contract is left for a backend to repeat.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from typing import Any, ClassVar

from ..capabilities import StorageCapabilities
from ..messages import MastraDBMessage
from ..timestamps import canonical_timestamp, next_after, utc_now
from .arguments import (
    check_record_metadata,
    non_blank,
    parse_model,
    validate_clone_args,
    validate_resource_id,
    validate_resource_patch,
    validate_thread_patch,
)
from .codec import json_text_or_none
from .pages import StoragePages
from .records import (
    CloneArgs,
    CloneMessageFilterInput,
    CloneResult,
    DateRange,
    ListMessagesQuery,
    MessageFilter,
    OrderBy,
    Resource,
    ResourceInput,
    Thread,
    ThreadInput,
)
from .thread_ops import ThreadOperations

__all__ = ["MemoryStorage", "storage_capabilities"]


async def _nothing(tx: Any) -> None:
    return None


def _merged(current: dict[str, Any] | None, patch: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Shallow-merge ``patch`` into stored metadata; ``None`` keeps what is stored (docs/spec.md §4.2)."""
    return current if patch is None else {**(current or {}), **patch}


class MemoryStorage(ThreadOperations, StoragePages):
    """Base class of every memory storage: the public contract of docs/spec.md §4.2 over backend hooks.

    Subclasses set ``store_name`` and implement the ``_``-prefixed hooks of :class:`StorageHooks`; every
    method is async and every model argument also accepts a (camelCase) dict. ``capabilities`` is what
    :func:`storage_capabilities` reports; a backend that cannot isolate include windows by resource sets
    ``resource_scope=False`` (docs/spec.md §4).
    """

    capabilities: ClassVar[StorageCapabilities] = StorageCapabilities()

    # --- lifecycle ------------------------------------------------------------------------------

    async def init(self) -> None:
        """Create the schema idempotently (every other method also does this on first use)."""
        await self._transaction("INIT", _nothing, write=True)

    async def close(self) -> None:
        """Release connections; a closed storage reopens on next use. The default has nothing to release."""
        return None

    # --- threads --------------------------------------------------------------------------------

    async def get_thread_by_id(self, thread_id: str, resource_id: str | None = None) -> Thread | None:
        """The thread, or ``None`` if it is missing or ``resource_id`` is given and differs."""
        operation = "GET_THREAD_BY_ID"
        non_blank(thread_id, "thread_id", store=self.store_name, operation=operation)
        resource = validate_resource_id(resource_id, store=self.store_name, operation=operation)
        if not self._existing([thread_id]):
            return None
        thread = await self._transaction(operation, lambda tx: self._load_thread(tx, thread_id), write=False)
        if thread is None or (resource is not None and thread.resource_id != resource):
            return None
        return thread

    async def save_thread(self, thread: ThreadInput) -> Thread:
        """Insert or replace a thread by id; returns it as stored.

        The thread names its resource: replacing a thread of another resource is a ThreadOwnershipError
        (docs/spec.md §4.5, ownership).
        """
        operation = "SAVE_THREAD"
        parsed = parse_model(
            Thread, thread, store=self.store_name, operation=operation, status="INVALID_ARGS", what="thread"
        )
        self._check_text(
            operation, (parsed.id, "thread id"), (parsed.resource_id, "resource_id"), (parsed.title, "title")
        )
        json_text_or_none(parsed.metadata, f"metadata of thread {parsed.id}")

        async def work(tx: Any) -> None:
            current = await self._load_thread(tx, parsed.id, lock=True)
            if current is not None and current.resource_id != parsed.resource_id:
                raise self._not_owned(
                    operation,
                    f"thread {parsed.id} already exists and belongs to another resource than "
                    f"{parsed.resource_id!r}; pass another thread id",
                    thread_id=parsed.id,
                )
            await self._write_thread(tx, parsed)

        await self._transaction(operation, work, write=True)
        return parsed

    async def update_thread(
        self, id: str, title: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Thread:
        """Replace the title when given, shallow-merge ``metadata``, and bump ``updated_at``.

        A missing thread raises ThreadNotFoundError.
        """
        operation = "UPDATE_THREAD"
        validate_thread_patch(id, title, metadata, store=self.store_name)
        self._check_text(operation, (title, "title"))
        json_text_or_none(metadata, "metadata")
        missing = self._no_thread(operation, f"thread {id} does not exist; create it with save_thread first")
        if not self._existing([id]):
            raise missing

        async def work(tx: Any) -> Thread:
            current = await self._load_thread(tx, id, lock=True)
            if current is None:
                raise missing
            updated = current.model_copy(
                update={
                    "title": current.title if title is None else title,
                    "metadata": _merged(current.metadata, metadata),
                    "updated_at": next_after(current.updated_at),
                }
            )
            await self._write_thread(tx, updated)
            return updated

        return await self._transaction(operation, work, write=True)

    async def delete_thread(self, thread_id: str) -> None:
        """Delete the thread and all its messages in one transaction; a missing thread is a no-op."""
        operation = "DELETE_THREAD"
        non_blank(thread_id, "thread_id", store=self.store_name, operation=operation)
        if self._existing([thread_id]):
            await self._transaction(operation, lambda tx: self._delete_thread(tx, thread_id), write=True)

    # --- resources ------------------------------------------------------------------------------

    async def get_resource_by_id(self, resource_id: str) -> Resource | None:
        """The resource, or ``None``."""
        operation = "GET_RESOURCE_BY_ID"
        non_blank(resource_id, "resource_id", store=self.store_name, operation=operation)
        if not self._existing([resource_id]):
            return None
        return await self._transaction(
            operation, lambda tx: self._load_resource(tx, resource_id), write=False
        )

    async def save_resource(self, resource: ResourceInput) -> Resource:
        """Insert or replace a resource by id; returns it as stored."""
        operation = "SAVE_RESOURCE"
        parsed = parse_model(
            Resource,
            resource,
            store=self.store_name,
            operation=operation,
            status="INVALID_ARGS",
            what="resource",
        )
        self._check_text(operation, (parsed.id, "resource id"), (parsed.working_memory, "working_memory"))
        json_text_or_none(parsed.metadata, f"metadata of resource {parsed.id}")
        await self._transaction(operation, lambda tx: self._write_resource(tx, parsed), write=True)
        return parsed

    async def update_resource(
        self, resource_id: str, working_memory: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Resource:
        """Create the resource if missing; else replace ``working_memory`` when given, shallow-merge
        ``metadata``, and bump ``updated_at``.
        """
        operation = "UPDATE_RESOURCE"
        validate_resource_patch(resource_id, working_memory, metadata, store=self.store_name)
        self._check_text(operation, (resource_id, "resource_id"), (working_memory, "working_memory"))
        json_text_or_none(metadata, "metadata")

        async def work(tx: Any) -> Resource:
            current = await self._load_resource(tx, resource_id, lock=True)
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
                        "metadata": _merged(current.metadata, metadata),
                        "updated_at": next_after(current.updated_at),
                    }
                )
            await self._write_resource(tx, resource)
            return resource

        return await self._transaction(operation, work, write=True)

    # --- clone ----------------------------------------------------------------------------------

    async def clone_thread(
        self,
        source_thread_id: str,
        new_thread_id: str | None = None,
        resource_id: str | None = None,
        title: str | None = None,
        message_limit: int | None = None,
        message_filter: CloneMessageFilterInput | None = None,
        *,
        new_resource_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> CloneResult:
        """Copy a thread and its messages under new ids, in one transaction.

        ``message_filter`` keeps messages within ``start_date``..``end_date`` (inclusive) and/or listed in
        ``message_ids``; ``message_limit`` then keeps the newest N. The new thread's metadata is the
        source's plus ``source_thread_id``, ``cloned_at`` (canonical timestamp) and ``last_message_id``
        (the source id of the newest copied message, or ``None``). The title defaults to
        ``"Clone of <source title>"``. Messages keep their ``created_at``.

        The clone belongs to the source's resource, or to ``new_resource_id`` when given (Mastra's
        ``resourceId``: its messages get it too). ``resource_id`` names the caller's resource: a source of
        another resource is a ThreadOwnershipError (docs/spec.md §4.5, ownership). ``metadata`` is
        shallow-merged over the source's metadata; the clone keys above always win.
        """
        operation = "CLONE_THREAD"
        args = validate_clone_args(
            source_thread_id,
            new_thread_id,
            resource_id,
            title,
            message_limit,
            message_filter,
            store=self.store_name,
        )
        target = validate_resource_id(new_resource_id, store=self.store_name, operation=operation)
        if metadata is not None and not isinstance(metadata, Mapping):
            raise self._invalid(operation, "INVALID_ARGS", "metadata must be a dict or None")
        check_record_metadata(metadata, "metadata", store=self.store_name, operation=operation)
        json_text_or_none(metadata, "metadata")
        args = dataclasses.replace(
            args, new_resource_id=target, metadata=None if metadata is None else dict(metadata)
        )
        self._check_text(
            operation,
            (source_thread_id, "source_thread_id"),
            (args.new_thread_id, "new_thread_id"),
            (args.resource_id, "resource_id"),
            (args.title, "title"),
        )
        # Never retried: a clone creates new ids, so running it twice would create two clones.
        return await self._transaction(
            operation, lambda tx: self._clone(tx, source_thread_id, args), write=True, idempotent=False
        )

    async def _clone(self, tx: Any, source_id: str, args: CloneArgs) -> CloneResult:
        operation = "CLONE_THREAD"
        new_id = args.new_thread_id or str(uuid.uuid4())
        existing = await self._load_threads(tx, sorted({source_id, new_id}))
        source = existing.get(source_id)
        if source is None:
            raise self._no_thread(operation, f"thread {source_id} does not exist; nothing to clone")
        if args.resource_id is not None and source.resource_id != args.resource_id:
            raise self._not_owned(
                operation,
                f"thread {source_id} belongs to another resource than {args.resource_id!r}; clone only "
                "threads of the resource you name",
                thread_id=source_id,
            )
        if new_id in existing:
            raise self._invalid(
                operation,
                "THREAD_EXISTS",
                f"thread {new_id} already exists; pass another new_thread_id or omit it",
            )
        originals = await self._clone_selection(tx, source_id, args)
        now = utc_now()
        owner = args.new_resource_id or source.resource_id
        thread = Thread(
            id=new_id,
            resource_id=owner,
            title=args.title
            if args.title is not None
            else (f"Clone of {source.title}" if source.title else ""),
            metadata={
                **(source.metadata or {}),
                **(args.metadata or {}),
                "source_thread_id": source.id,
                "cloned_at": canonical_timestamp(now),
                "last_message_id": originals[-1].id if originals else None,
            },
            created_at=now,
            updated_at=now,
        )
        await self._write_thread(tx, thread)
        copies = [
            m.model_copy(update={"id": str(uuid.uuid4()), "thread_id": new_id, "resource_id": owner})
            for m in originals
        ]
        await self._write_messages(tx, [(copy, self._encode_content(copy)) for copy in copies])
        id_map = {original.id: copy.id for original, copy in zip(originals, copies, strict=True)}
        return CloneResult(thread=thread, messages=copies, message_id_map=id_map)

    async def _clone_selection(self, tx: Any, source_id: str, args: CloneArgs) -> list[MastraDBMessage]:
        """The source messages a clone copies, ascending: the filter first, then the newest N."""
        flt, limit = args.message_filter, args.message_limit
        if limit == 0:
            return []
        start, end = (flt.start_date, flt.end_date) if flt is not None else (None, None)
        if flt is not None and flt.message_ids is not None:
            chosen = [
                m
                for m in await self._find_by_id(tx, self._existing(dict.fromkeys(flt.message_ids)))
                if m.thread_id == source_id
                and (start is None or m.created_at >= start)
                and (end is None or m.created_at <= end)
            ]
            return chosen if limit is None else chosen[max(0, len(chosen) - limit) :]
        bounded = start is not None or end is not None
        newest_first = ListMessagesQuery(
            thread_ids=(source_id,),
            resource_id=None,
            include=(),
            per_page=False,
            page=0,
            filter=MessageFilter(date_range=DateRange(start=start, end=end)) if bounded else None,
            order=OrderBy(direction="DESC"),
            include_total=False,
        )
        return (await self._find_messages(tx, newest_first, 0, limit))[::-1]


def storage_capabilities(storage: object) -> StorageCapabilities:
    """What a storage declares in its ``capabilities`` attribute; undeclared storages get the defaults."""
    declared = getattr(storage, "capabilities", None)
    if isinstance(declared, StorageCapabilities):
        return declared
    nested = getattr(declared, "storage", None)
    return nested if isinstance(nested, StorageCapabilities) else StorageCapabilities()
