"""The ``SemanticRecall`` processor (docs/spec.md §6): recall on input, indexing on output.

Recall runs the one algorithm of :mod:`.recall` (the same search, windows and fetch as ``Memory.recall``);
indexing runs the single write path of :class:`.indexer.MessageIndexer`, so both paths write and read the
same vectors. A request's ``memory_config`` is merged over the processor's options for that request
(docs/spec.md §6.1).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import ValidationError as PydanticValidationError

from ...embedders.base import Embedder, EmbedderSpec
from ...errors import ConfigError, MastraMemoryError, ResourceScopeError
from ...messages import MastraDBMessage, MessageInput, message_text, normalize_messages, render_text
from ...storage import MemoryStorage
from ...vector import IndexConfig, MastraVector
from ..config import (
    MemoryConfig,
    MessageRange,
    Scope,
    SemanticRecallConfig,
    check_resource_scope,
    config_error,
    merge_config,
)
from ..index.indexer import MessageIndexer
from ..message_list import MessageList
from ..recall.algorithm import RecallRequest, SemanticSearch, recall_messages
from ..recall.formatting import format_cross_thread_messages
from .base import InputCall, InputProcessor, OutputCall, OutputProcessor
from .context import MEMORY_CONTEXT_KEY, context_value, nonempty_str

_USER_SIGNALS = frozenset({"user", "user-message"})
#: Indexers kept per (index name, index config) a request asked for; the oldest is dropped beyond this.
_MAX_REQUEST_INDEXERS = 32
#: Processors ``Memory`` keeps per effective request configuration; the least recently used goes beyond.
_MAX_PROCESSORS = 32


class SemanticRecall(InputProcessor, OutputProcessor):
    """Adds semantically relevant earlier messages to the input and indexes new messages on output.

    Args mirror ``semantic_recall`` (docs/spec.md §6.1). ``raise_on_error=False`` (the default) logs failures
    and returns the input unchanged, so a request never fails because of recall. ``read_only=True`` never
    indexes outputs (as ``memory_config.read_only`` in the request context does for one request).

    A ``memory_config`` in the request context is merged over these options for that request, like a
    ``thread_config`` over ``Memory``'s options (docs/spec.md §5.2): ``semantic_recall: False`` means no
    recall, no injection and no indexing; a dict's fields (``topK``, ``messageRange``, ...) replace these;
    ``True`` means all defaults.
    """

    id = "semantic-recall"
    name = "SemanticRecall"

    def __init__(
        self,
        storage: MemoryStorage | None,
        vector: MastraVector | None,
        embedder: str | EmbedderSpec | Embedder | None,
        top_k: int = 4,
        message_range: int | MessageRange | Mapping[str, int] = 1,
        scope: Literal["thread", "resource"] = "resource",
        threshold: float | None = None,
        index_name: str | None = None,
        index_config: IndexConfig | Mapping[str, Any] | None = None,
        filter: Mapping[str, Any] | None = None,
        embedder_options: Mapping[str, Any] | None = None,
        logger: logging.Logger | None = None,
        raise_on_error: bool = False,
        read_only: bool = False,
    ) -> None:
        if storage is None:
            raise ConfigError("SemanticRecall requires storage; pass storage=...")
        if vector is None:
            raise ConfigError("SemanticRecall requires vector; pass vector=...")
        if embedder is None:
            raise ConfigError("SemanticRecall requires embedder; pass embedder=...")
        try:
            self.config = SemanticRecallConfig.model_validate(
                {
                    "top_k": top_k,
                    "message_range": message_range.model_dump()
                    if isinstance(message_range, MessageRange)
                    else message_range,
                    "scope": scope,
                    "threshold": threshold,
                    "index_name": index_name,
                    "index_config": index_config,
                    "filter": dict(filter) if filter is not None else None,
                }
            )
        except PydanticValidationError as exc:
            raise config_error(exc, "SemanticRecall options") from exc
        check_resource_scope(storage, self.config)
        if not isinstance(embedder, Embedder):
            from ...embedders.router import resolve_embedder

            embedder = resolve_embedder(embedder, embedder_options)
        self.storage = storage
        self.vector = vector
        self.embedder = embedder
        self.logger = logger or logging.getLogger("mastra_memory.processors")
        self.raise_on_error = raise_on_error
        self.read_only = read_only
        self.indexer = MessageIndexer(
            storage,
            vector,
            embedder,
            index_name=self.config.index_name,
            index_config=self.config.index_config,
            embedder_options=embedder_options,
        )
        self._request_indexers: dict[tuple[str | None, IndexConfig | None], MessageIndexer] = {}

    # --- per-request configuration --------------------------------------------------------------

    def _for_request(self, context: Any) -> tuple[SemanticRecallConfig | None, bool]:
        """The recall options (None: recall off) and the read-only flag in force for one request.

        The request's ``memory_config`` is merged over this processor's options with the rules of
        ``thread_config`` (docs/spec.md §5.2), so running the processor ``Memory`` built for a request
        with that same request changes nothing. ``read_only`` holds when either side sets it (as in
        Mastra). An invalid ``memory_config`` raises ``ConfigError``.
        """
        raw = context_value(context, "memory_config", "memoryConfig")
        if raw is None:
            return self.config, self.read_only
        request = MemoryConfig.from_any(raw)
        read_only = self.read_only or request.read_only
        if "semantic_recall" not in request.model_fields_set:
            return self.config, read_only
        recall = merge_config(MemoryConfig(semantic_recall=self.config), request).recall
        check_resource_scope(self.storage, recall)
        return recall, read_only

    def _indexer_for(self, config: SemanticRecallConfig) -> MessageIndexer:
        """The indexer for ``config``'s index name and configuration (a request may name another index)."""
        key = (config.index_name, config.index_config)
        if key == (self.indexer.index_name, self.indexer.index_config):
            return self.indexer
        indexer = self._request_indexers.pop(key, None)
        if indexer is None:
            indexer = MessageIndexer(
                self.storage,
                self.vector,
                self.embedder,
                index_name=config.index_name,
                index_config=config.index_config,
                embedder_options=self.indexer.embedder_options,
            )
        self._request_indexers[key] = indexer  # most recently used last
        while len(self._request_indexers) > _MAX_REQUEST_INDEXERS:
            del self._request_indexers[next(iter(self._request_indexers))]
        return indexer

    def _on_failure(self, what: str, thread_id: str, exc: Exception) -> None:
        """Re-raise ``exc`` with ``raise_on_error``; else log it, so the request goes on without recall."""
        if self.raise_on_error:
            raise exc
        # The thread id and the error class only: error messages may quote stored content. A configuration
        # error quotes the caller's own options, and says what to change.
        detail = f"{type(exc).__name__}: {exc}" if isinstance(exc, ConfigError) else type(exc).__name__
        self.logger.error("%s failed for thread %s: %s", what, thread_id, detail)

    # --- input ----------------------------------------------------------------------------------

    async def _process_input(self, call: InputCall) -> MessageList:
        """Search earlier messages similar to the last user message and add them (docs/spec.md §6.2)."""
        message_list = call.message_list
        context, thread, thread_id = _thread_of(call.request_context)
        if thread_id is None:
            return message_list
        try:
            config, _ = self._for_request(context)
            if config is None:  # the request switched recall off: nothing is searched or injected
                return message_list
            return await self._recall_into(call, _resource_of(context, thread), thread_id, config)
        except Exception as exc:
            self._on_failure("semantic recall", thread_id, exc)
            return message_list

    async def _recall_into(
        self, call: InputCall, resource_id: str | None, thread_id: str, config: SemanticRecallConfig
    ) -> MessageList:
        message_list = call.message_list
        query = self._query_text(call.messages or message_list.new_messages(), thread_id)
        if not query:
            return message_list
        scope, resource_id = await self._scope(config.scope, thread_id, resource_id)
        # per_page=0, never False: False would pull the whole thread into the prompt. The resource, when
        # known, also bounds the windows in thread scope (a window never crosses resources).
        request = RecallRequest(thread_id, resource_id, scope, query, per_page=0)
        found = await recall_messages(
            self.storage, request, SemanticSearch(config, self._indexer_for(config)), only_with_hits=True
        )
        fresh = [m for m in found.messages if m.id not in message_list]
        same_thread = [m for m in fresh if m.thread_id == thread_id]
        # Other threads' messages without text would render as an empty block: leave them out.
        other_threads = [m for m in fresh if m.thread_id != thread_id and render_text(m)]
        if same_thread:
            message_list.add(same_thread, source="memory")
        if other_threads and scope == "resource":
            text = format_cross_thread_messages(other_threads, thread_id)
            message_list.add_system(
                MastraDBMessage.model_validate(
                    {"role": "system", "content": text, "thread_id": thread_id, "resource_id": resource_id}
                ),
                source="memory",
            )
        return message_list

    async def _scope(self, scope: Scope, thread_id: str, resource_id: str | None) -> tuple[Scope, str | None]:
        """docs/spec.md §6.2 step 3: resource scope needs a resource, from the context or else the stored
        thread's owner; without one, thread scope and a warning (``ResourceScopeError`` with
        ``raise_on_error``)."""
        if scope == "resource" and not resource_id:
            # The context names no resource: the thread's owner, when the thread is stored, is the one.
            stored = await self.storage.get_thread_by_id(thread_id)
            resource_id = stored.resource_id if stored is not None else None
        if scope == "resource" and not resource_id:
            if self.raise_on_error:
                raise ResourceScopeError(
                    "resource-scoped semantic recall needs a resource_id; none in the memory context or the "
                    "thread"
                )
            self.logger.warning(
                "semantic recall: no resource_id for thread %s; falling back to thread scope", thread_id
            )
            scope = "thread"
        return scope, resource_id

    @staticmethod
    def _query_text(messages: Sequence[MastraDBMessage | MessageInput], thread_id: str) -> str:
        normalised = normalize_messages(messages, thread_id=thread_id)
        for msg in reversed(normalised):
            if msg.role == "user":
                return message_text(msg).strip()
            if msg.role == "signal":
                meta = msg.content.metadata or {}
                signal = meta.get("signal") if isinstance(meta, Mapping) else None
                if isinstance(signal, Mapping) and signal.get("type") in _USER_SIGNALS:
                    return message_text(msg).strip()
        return ""

    # --- output ---------------------------------------------------------------------------------

    async def _process_output(self, call: OutputCall) -> MessageList | list[MastraDBMessage]:
        """Index the new messages of this turn through the shared write path (docs/spec.md §6.4)."""
        messages, message_list = call.messages, call.message_list
        done: MessageList | list[MastraDBMessage] = message_list if message_list is not None else []
        context, thread, thread_id = _thread_of(call.request_context)
        config: SemanticRecallConfig | None = None
        read_only = True
        if thread_id is not None:
            try:
                config, read_only = self._for_request(context)
            except Exception as exc:
                self._on_failure("semantic recall: indexing", thread_id, exc)
        # Recall off for the request (semantic_recall: False) indexes nothing, as save_messages (§5.4).
        if thread_id is None or read_only or config is None:
            if message_list is not None:
                return done
            try:
                return normalize_messages(messages, thread_id=thread_id)
            except MastraMemoryError:
                return [m for m in messages if isinstance(m, MastraDBMessage)]
        resource_id = _resource_of(context, thread)
        try:
            response = normalize_messages(messages, thread_id=thread_id, resource_id=resource_id)
            if message_list is None:
                done = response
            await self._index_new(response, message_list, thread_id, self._indexer_for(config))
        except Exception as exc:
            self._on_failure("semantic recall: indexing", thread_id, exc)
        return done

    async def _index_new(
        self,
        response: list[MastraDBMessage],
        message_list: MessageList | None,
        thread_id: str,
        indexer: MessageIndexer,
    ) -> None:
        candidates: dict[str, MastraDBMessage] = {m.id: m for m in response}
        if message_list is not None:
            for m in message_list.new_messages():
                candidates.setdefault(m.id, m)
        todo = [
            m
            for m in candidates.values()
            if m.role != "system"
            and isinstance(m.id, str)
            and (message_list is None or m.id not in message_list or message_list.is_new(m.id))
            and message_text(m).strip()
        ]
        if not todo:
            return
        try:
            await indexer.index_messages(todo)
        except Exception as exc:
            if self.raise_on_error and not isinstance(exc, MastraMemoryError):
                raise
            # Isolate the failing message(s): index one by one, log and skip failures.
            failed = 0
            for msg in todo:
                try:
                    await indexer.index_messages([msg])
                except Exception as one:
                    failed += 1
                    if self.raise_on_error:
                        raise
                    self.logger.error(
                        "semantic recall: indexing message %s of thread %s failed: %s",
                        msg.id,
                        thread_id,
                        type(one).__name__,
                    )
            if failed == 0:
                self.logger.warning(
                    "semantic recall: batch indexing failed once for thread %s; retried", thread_id
                )


def _thread_of(request_context: Any) -> tuple[Any, Any, str | None]:
    """The request's memory context, its thread, and the thread's id (None when it names none)."""
    context = context_value(request_context, MEMORY_CONTEXT_KEY)
    thread = context_value(context, "thread")
    return context, thread, nonempty_str(context_value(thread, "id"))


def _resource_of(context: Any, thread: Any) -> str | None:
    """The request's resource: the memory context's, else the thread's."""
    return nonempty_str(context_value(context, "resource_id", "resourceId")) or nonempty_str(
        context_value(thread, "resource_id", "resourceId")
    )


class ProcessorCache:
    """``Memory``'s processors, one per effective request configuration (docs/spec.md §5.10), least
    recently used dropped beyond 32, so the input and output sides of a request share one index cache."""

    def __init__(self, limit: int = _MAX_PROCESSORS) -> None:
        self.limit = limit
        self._items: dict[str, SemanticRecall] = {}

    def get(self, key: str, build: Callable[[], SemanticRecall]) -> SemanticRecall:
        """The processor cached under ``key``, built with ``build()`` on a miss."""
        processor = self._items.pop(key, None)
        if processor is None:
            processor = build()
        self._items[key] = processor  # most recently used last
        while len(self._items) > self.limit:
            del self._items[next(iter(self._items))]
        return processor
