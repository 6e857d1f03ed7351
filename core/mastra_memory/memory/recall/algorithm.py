"""The recall algorithm, once: ``Memory.recall`` (docs/spec.md §5.3) and ``SemanticRecall.process_input``
(§6.2) both call :func:`recall_messages`.

A recall is a :class:`RecallRequest` (validated arguments: thread, resource, scope, query, paging, caller
include items). :func:`recall_messages` runs the shared steps: the semantic search (§5.3 step 7, §6.2 steps
4-6), the ``memory.recall`` trace event (§5.10), the include windows around the hits merged with the
caller's (§5.3 step 8, §6.2 step 7), one ``list_messages`` call (§5.3 step 9) and the finish (step 10:
newest-first pages reversed, duplicates dropped, hits whose message vanished dropped). What differs
between the two paths stays with them: ``Memory`` checks arguments and ownership and refuses resource scope
without a resource (:func:`thread_recall_request`, :func:`check_thread_access`); the processor takes its
query from the turn, falls back to thread scope, and renders other threads' messages (§6.2, §6.3).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ...errors import ResourceScopeError, SemanticRecallOffWarning, ThreadNotFoundError, ThreadOwnershipError
from ...messages import MastraDBMessage
from ...storage import IncludeItem, MemoryStorage, MessagePage, validate_list_messages_args
from ..arguments import optional_resource, require_id
from ..config import MemoryConfig, MessageRange, Scope, SemanticRecallConfig
from ..index.indexer import MessageIndexer
from .search import Hit, recall_filter, search_messages

trace_logger = logging.getLogger("mastra_memory.trace")

PerPage = int | Literal[False]


@dataclass(frozen=True, slots=True)
class RecallRequest:
    """The validated arguments of one recall.

    ``query`` is None when no semantic search runs; ``order`` and ``filter`` are the storage's checked
    ``order_by`` and message filter; ``newest_first`` means storage is asked newest first and the page is
    reversed into chronological order (docs/spec.md §5.3 step 5).
    """

    thread_id: str
    resource_id: str | None
    scope: Scope
    query: str | None
    per_page: PerPage
    page: int = 0
    include: tuple[IncludeItem, ...] = ()
    filter: Any = None
    order: Any = None
    include_total: bool = True
    newest_first: bool = False


@dataclass(frozen=True, slots=True)
class SemanticSearch:
    """The semantic side of a recall: the recall options in force and the indexer of their index."""

    config: SemanticRecallConfig
    indexer: MessageIndexer


@dataclass(slots=True)
class Recalled:
    """What :func:`recall_messages` found.

    ``messages`` are unique by id, in the order of docs/spec.md §5.3 step 10; ``page`` is storage's page
    (None when nothing was fetched); ``hits`` are the semantic hits that produced a window, best first.
    """

    messages: list[MastraDBMessage]
    page: MessagePage | None
    hits: list[Hit] = field(default_factory=list)
    usage_tokens: int | None = None
    index_name: str | None = None


def thread_recall_request(
    cfg: MemoryConfig,
    thread_id: Any,
    resource_id: Any,
    vector_search_string: Any,
    per_page: PerPage | None,
    page: int,
    include: Sequence[IncludeItem | Mapping[str, Any]] | None,
    filter: Mapping[str, Any] | None,
    order_by: Mapping[str, Any] | None,
    include_total: bool,
) -> RecallRequest | None:
    """Steps 1-3 and 5 of docs/spec.md §5.3 for ``Memory.recall``: every argument checked before any I/O.

    Returns None for the early return of step 3 (nothing to fetch, storage not touched).
    """
    recall = cfg.recall
    query = (
        vector_search_string
        if isinstance(vector_search_string, str) and vector_search_string.strip()
        else None
    )
    thread_id = require_id(thread_id, "thread_id")
    resource_id = optional_resource(resource_id)
    if query is not None and recall is None:
        # Mastra ignores the string without a word; a new user reads that as "nothing relevant was
        # stored", so say it (docs/spec.md §5.3 step 2, [Δ]). Level 3: the caller of Memory.recall.
        warnings.warn(
            "recall(vector_search_string=...) ran no semantic search: semantic recall is off (in the "
            "Memory's options, the default as in Mastra, or in thread_config), so only message history is "
            "returned. "
            'Turn it on with Memory(options={"semanticRecall": True}) or per call with thread_config=, or '
            "drop the vector_search_string.",
            SemanticRecallOffWarning,
            stacklevel=3,
        )
    pp: PerPage = per_page if per_page is not None else (cfg.last_messages if cfg.history_on else 0)
    newest_first = order_by is None and pp is not False
    effective_order = {"field": "created_at", "direction": "DESC"} if newest_first else order_by
    # Every storage argument is checked before any I/O (and before the early return): a vector-style
    # filter, a bad page or include item raises here instead of after an embedding call.
    checked = validate_list_messages_args(
        thread_id, resource_id, include, pp, page, filter, effective_order, include_total, store="MEMORY"
    )
    include_items = tuple(checked.include)
    if per_page is None and not cfg.history_on and not include_items and not (recall is not None and query):
        return None
    return RecallRequest(
        thread_id=thread_id,
        resource_id=resource_id,
        scope=recall.scope if recall is not None else "thread",
        query=query if recall is not None else None,
        per_page=pp,
        page=page,
        include=include_items,
        filter=checked.filter,
        order=checked.order,
        include_total=include_total,
        newest_first=newest_first,
    )


async def check_thread_access(storage: MemoryStorage, request: RecallRequest) -> None:
    """Steps 4 and 6 of docs/spec.md §5.3: ownership when a resource is given, and no resource-scoped
    search without a resource."""
    if request.resource_id is not None:
        thread = await storage.get_thread_by_id(request.thread_id)
        if thread is not None and thread.resource_id != request.resource_id:
            raise ThreadOwnershipError(
                f"thread {request.thread_id} does not belong to the requested resource"
            )
        if thread is None and request.scope != "resource":
            raise ThreadNotFoundError(f"thread {request.thread_id!r} does not exist")
    if request.query and request.scope == "resource" and request.resource_id is None:
        raise ResourceScopeError(
            "resource-scoped semantic recall needs a resource_id; pass one or set "
            "semantic_recall.scope to 'thread'"
        )


def include_windows(
    include: Sequence[IncludeItem], hits: Sequence[Hit], message_range: MessageRange | None
) -> list[IncludeItem]:
    """The caller's include items merged with one window per hit; for a repeated id the wider window wins
    (docs/spec.md §5.3 steps 7.6 and 8)."""
    merged: dict[str, IncludeItem] = {}
    for item in include:
        merged[item.id] = _wider(merged.get(item.id), item)
    if message_range is not None:
        for hit in hits:
            window = IncludeItem(
                id=hit.message_id,
                thread_id=hit.thread_id,
                with_previous_messages=message_range.before,
                with_next_messages=message_range.after,
            )
            merged[hit.message_id] = _wider(merged.get(hit.message_id), window)
    return list(merged.values())


async def recall_messages(
    storage: MemoryStorage,
    request: RecallRequest,
    semantic: SemanticSearch | None,
    *,
    only_with_hits: bool = False,
) -> Recalled:
    """Search (when ``semantic`` is given and the request has a query), trace, fetch the page with the
    include windows, and finish (docs/spec.md §5.3 steps 7-10, §6.2 steps 4-7).

    ``only_with_hits=True`` (the processor) fetches nothing when the search found nothing. The trace event
    lists what the search found, before the fetch drops hits whose message vanished.
    """
    config = semantic.config if semantic is not None else None
    hits: list[Hit] = []
    usage: int | None = None
    index_name: str | None = None
    if semantic is not None and request.query:
        found = await search_messages(
            semantic.indexer,
            request.query,
            top_k=semantic.config.top_k,
            flt=recall_filter(request.scope, request.thread_id, request.resource_id, semantic.config),
            threshold=semantic.config.threshold,
            mode=semantic.config.mode,
        )
        hits, usage, index_name = found.hits, found.usage_tokens, found.index_name
    trace_recall(request.thread_id, request.resource_id, index_name, hits)
    if only_with_hits and not hits:
        return Recalled([], None, [], usage, index_name)
    windows = include_windows(request.include, hits, config.message_range if config else None)
    # With per_page=0 this is the include-only fast path; never per_page=False, which would load the
    # whole thread (docs/spec.md §5.3 step 9, §6.2 step 7).
    page = await storage.list_messages(
        request.thread_id,
        resource_id=request.resource_id,
        per_page=request.per_page,
        page=request.page,
        order_by=request.order,
        filter=request.filter,
        include=windows or None,
        include_total=request.include_total,
    )
    ordered = list(reversed(page.messages)) if request.newest_first else list(page.messages)
    unique: dict[str, MastraDBMessage] = {}
    for msg in ordered:
        unique.setdefault(msg.id, msg)
    # A hit whose message vanished (or lies outside the resource) produced no window: never report it.
    kept = [h for h in hits if h.message_id in unique]
    return Recalled(list(unique.values()), page, kept, usage, index_name)


def trace_recall(thread_id: str, resource_id: Any, index_name: str | None, hits: Sequence[Hit]) -> None:
    """Emit the ``memory.recall`` trace event (logger ``mastra_memory.trace``): ids and scores, no text
    (docs/spec.md §5.10).

    The structured fields ride on the log record (``record.event``, ``record.hits``, ...), so a logging
    handler can forward them to any tracing backend.
    """
    trace_logger.info(
        "memory.recall thread=%s resource=%s index=%s hits=%s",
        thread_id,
        resource_id,
        index_name,
        [(h.message_id, round(h.score, 4)) for h in hits],
        extra={
            "event": "memory.recall",
            "thread_id": thread_id,
            "resource_id": resource_id,
            "index_name": index_name,
            "hits": [{"message_id": h.message_id, "thread_id": h.thread_id, "score": h.score} for h in hits],
            "source": "memory",
        },
    )


def _wider(current: IncludeItem | None, new: IncludeItem) -> IncludeItem:
    if current is None:
        return new
    return current.model_copy(
        update={
            "with_previous_messages": max(current.with_previous_messages, new.with_previous_messages),
            "with_next_messages": max(current.with_next_messages, new.with_next_messages),
            "thread_id": current.thread_id or new.thread_id,
        }
    )
