"""Reads of the ``MemoryStorage`` template: pages of threads and messages, and include windows.

``list_messages`` follows the exact algorithm of docs/spec.md §4.3 and ``list_threads`` the rules of §4.4:
counting and paging happen in the backend (``_count_*``/``_find_*`` hooks); only a §4.6 metadata filter
is decided here, over the candidates the backend narrowed to.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ..errors import ValidationError
from ..messages import MastraDBMessage
from .archive import ARCHIVED_KEY, LEGACY_ARCHIVED_KEY, is_archived
from .arguments import (
    DEFAULT_THREADS_PER_PAGE,
    validate_list_messages_args,
    validate_list_messages_by_resource_args,
    validate_list_threads_args,
    validate_message_ids,
)
from .hooks import StorageHooks
from .metadata_filter import metadata_matches
from .records import (
    IncludeInput,
    ListMessagesQuery,
    ListThreadsQuery,
    MessageFilterInput,
    MessagePage,
    OrderByInput,
    PerPage,
    ThreadFilterInput,
    ThreadOrderByInput,
    ThreadPage,
    message_sort_key,
)

__all__ = ["StoragePages"]


class StoragePages(StorageHooks):
    """``list_threads``, ``list_messages``, ``list_messages_by_resource_id`` and ``list_messages_by_id``."""

    async def list_threads(
        self,
        filter: ThreadFilterInput | None = None,
        page: int = 0,
        per_page: PerPage | None = DEFAULT_THREADS_PER_PAGE,
        order_by: ThreadOrderByInput | None = None,
        *,
        include_archived: bool = False,
    ) -> ThreadPage:
        """Threads matching ``filter`` (resource and/or §4.6 metadata), ordered and paged (docs/spec.md
        §4.4). Archived threads (the storage's archive mark, `archive`) are left out unless
        ``include_archived``."""
        query = validate_list_threads_args(filter, page, per_page, order_by, store=self.store_name)
        if not isinstance(include_archived, bool):
            raise ValidationError(
                f"include_archived must be True or False, got {include_archived!r}",
                id=self._error_id("LIST_THREADS", "INVALID_ARGS"),
                domain="STORAGE",
            )
        query = dataclasses.replace(query, include_archived=include_archived)
        return await self._run_unit("LIST_THREADS", lambda tx: self._thread_page(tx, query), write=False)

    async def _thread_page(self, tx: Any, q: ListThreadsQuery) -> ThreadPage:
        if q.resource_id is not None and not self._existing([q.resource_id]):
            total, threads = 0, []
        elif q.metadata:
            # docs/spec.md §4.4: the §4.6 rule decides here, over whatever superset the backend narrowed to.
            candidates = await self._find_threads(tx, q, 0, None)
            matching = [
                t
                for t in candidates
                if metadata_matches(q.metadata, t.metadata) and (q.include_archived or not is_archived(t))
            ]
            total = len(matching)
            threads = matching[q.offset : None if q.per_page is False else q.offset + q.per_page]
        else:
            archived = [] if q.include_archived else await self._archived_ids(tx, q)
            total = await self._count_threads(tx, q) - len(archived)
            if not archived:
                threads = await self._find_threads(
                    tx, q, q.offset, None if q.per_page is False else q.per_page
                )
            else:
                # The first offset + per_page + |archived| rows hold the page once the archived are dropped.
                limit = None if q.per_page is False else q.offset + q.per_page + len(archived)
                hidden = set(archived)
                visible = [t for t in await self._find_threads(tx, q, 0, limit) if t.id not in hidden]
                threads = visible[q.offset : None if q.per_page is False else q.offset + q.per_page]
        return ThreadPage(
            threads=threads, total=total, page=q.page, per_page=q.per_page, has_more=q.has_more(total)
        )

    async def _archived_ids(self, tx: Any, q: ListThreadsQuery) -> list[str]:
        """Ids of the archived threads of ``q``'s resource (all resources when None); the backend may
        narrow by the metadata marker, the §4.6 rule decides."""
        ids: dict[str, None] = {}
        # Both forms of the mark (docs/spec.md §4.4): the new key, and the old pair of earlier versions.
        for key in (ARCHIVED_KEY, LEGACY_ARCHIVED_KEY):
            marked = dataclasses.replace(q, metadata={key: True}, page=0, per_page=False)
            ids.update((t.id, None) for t in await self._find_threads(tx, marked, 0, None) if is_archived(t))
        return list(ids)

    # --- messages ------------------------------------------------------------------------

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
            thread_id,
            resource_id,
            include,
            per_page,
            page,
            filter,
            order_by,
            include_total,
            store=self.store_name,
        )
        return await self._run_unit("LIST_MESSAGES", lambda tx: self._message_page(tx, query), write=False)

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
        """As `list_messages`, over every thread of the resource."""
        query = validate_list_messages_by_resource_args(
            resource_id, include, per_page, page, filter, order_by, include_total, store=self.store_name
        )
        return await self._run_unit(
            "LIST_MESSAGES_BY_RESOURCE_ID", lambda tx: self._message_page(tx, query), write=False
        )

    async def list_messages_by_id(self, message_ids: Sequence[str]) -> list[MastraDBMessage]:
        """Those messages in ascending ``(created_at, id)`` order; unknown ids are skipped."""
        operation = "LIST_MESSAGES_BY_ID"
        ids = self._existing(validate_message_ids(message_ids, store=self.store_name, operation=operation))
        if not ids:
            return []
        return await self._run_unit(operation, lambda tx: self._messages_by_id(tx, ids), write=False)

    async def _message_page(self, tx: Any, q: ListMessagesQuery) -> MessagePage:
        if q.per_page is not False and q.per_page == 0:  # False == 0 in Python, and False means "all"
            # docs/spec.md §4.3 step 2: include windows only (what semantic recall uses).
            windows = sorted(
                (await self._windows(tx, q)).values(), key=message_sort_key, reverse=q.descending
            )
            return MessagePage(messages=windows, total=0, page=q.page, per_page=q.per_page, has_more=False)
        metadata = q.filter.metadata if q.filter else None
        total: int | None
        if metadata:
            # §4.3 steps 3-4 with a §4.6 filter: decide each candidate exactly, then page the ids.
            candidates = await self._metadata_candidates(tx, q)
            matching = [message_id for message_id, meta in candidates if metadata_matches(metadata, meta)]
            total = len(matching)
            end = None if q.per_page is False else q.offset + q.per_page
            page_rows = sorted(
                await self._find_by_id(tx, matching[q.offset : end]),
                key=message_sort_key,
                reverse=q.descending,
            )
            more_rows = q.offset + len(page_rows) < total
        else:
            # The has_more rule with include compares against the total, so it is counted even when the
            # caller asked not to receive it.
            total = await self._count_messages(tx, q) if q.include_total or q.include else None
            # Without a count, one extra row tells whether more rows follow.
            limit = None if q.per_page is False else q.per_page + (0 if total is not None else 1)
            page_rows = await self._find_messages(tx, q, q.offset, limit)
            if q.per_page is not False and len(page_rows) > q.per_page:
                page_rows, more_rows = page_rows[: q.per_page], True
            else:
                more_rows = total is not None and q.offset + len(page_rows) < total
        # §4.3 step 6: add the window messages not already on the page, then sort everything.
        merged = {m.id: m for m in page_rows}
        if q.include:
            for message_id, message in (await self._windows(tx, q)).items():
                merged.setdefault(message_id, message)
        messages = sorted(merged.values(), key=message_sort_key, reverse=q.descending)
        # §4.3 step 7.
        has_more = q.per_page is not False and more_rows
        if has_more and q.include and total is not None:
            has_more = sum(1 for m in messages if q.in_scope(m)) < total
        return MessagePage(
            messages=messages,
            total=total if q.include_total else None,
            page=q.page,
            per_page=q.per_page,
            has_more=has_more,
        )

    async def _windows(self, tx: Any, q: ListMessagesQuery) -> dict[str, MastraDBMessage]:
        """Resolve include items (docs/spec.md §4.3 step 5): windows from each target's own thread,
        restricted to the resource when given, deduplicated by id."""
        found: dict[str, MastraDBMessage] = {}
        for item in q.include:
            targets = await self._find_by_id(tx, self._existing([item.id]))
            if not targets or (q.resource_id is not None and targets[0].resource_id != q.resource_id):
                continue
            target = targets[0]
            window = [target]
            if item.with_previous_messages:
                window += await self._neighbours(
                    tx, target, "before", item.with_previous_messages, q.resource_id
                )
            if item.with_next_messages:
                window += await self._neighbours(tx, target, "after", item.with_next_messages, q.resource_id)
            for message in window:
                found.setdefault(message.id, message)
        return found
