"""``clone_thread`` of the ``MemoryStorage`` template (docs/spec.md §4.2): a thread and its messages
copied under new ids, in one transaction.

The clone belongs to the source's resource or to ``new_resource_id``; a caller naming another resource
than the source's is refused (ThreadOwnershipError, "ownership" in §4.5). Never retried: a clone creates
new ids, so running it twice would create two clones.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from typing import Any

from ..messages import MastraDBMessage
from ..timestamps import canonical_timestamp, utc_now
from .archive import keep_mark, without_mark
from .arguments import check_record_metadata, validate_clone_args, validate_resource_id
from .codec import json_text_or_none
from .hooks import StorageHooks
from .records import CloneArgs, CloneMessageFilterInput, CloneResult, DateRange, Thread

__all__ = ["ThreadClone"]


class ThreadClone(StorageHooks):
    """``clone_thread``."""

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
        return await self._run_unit(
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
            # A clone starts unarchived: the archive mark is storage-owned (docs/spec.md §4.4).
            metadata=keep_mark(
                {
                    **without_mark(source.metadata),
                    **(args.metadata or {}),
                    "source_thread_id": source.id,
                    "cloned_at": canonical_timestamp(now),
                    "last_message_id": originals[-1].id if originals else None,
                },
                None,
            ),
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
        return await self._thread_messages(
            tx, source_id, date_range=DateRange(start=start, end=end) if bounded else None, newest=limit
        )
