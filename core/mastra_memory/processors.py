"""The ``SemanticRecall`` processor (SPEC §6): recall on input, indexing on output.

It shares the embedding cache, the index naming, the write path and the search of ``Memory`` through
:class:`mastra_memory.indexing.MessageIndexer`, so both paths write and read the same vectors.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from .embedders.base import Embedder, EmbedderSpec
from .errors import ConfigError, MastraMemoryError, ResourceScopeError
from .indexing import MessageIndexer, trace_recall
from .memory_config import MessageRange, SemanticRecallConfig
from .message_list import MessageList
from .messages import MastraDBMessage, MessageInput, message_text, normalize_messages
from .recall_format import format_cross_thread_messages
from .storage import IncludeItem, MemoryStorage
from .vector import IndexConfig, MastraVector

MEMORY_CONTEXT_KEY = "MastraMemory"
_USER_SIGNALS = frozenset({"user", "user-message"})


def _get(obj: Any, *names: str) -> Any:
    """Read a key from a dict or an attribute from an object, trying each spelling."""
    for name in names:
        if isinstance(obj, Mapping):
            if name in obj:
                return obj[name]
        elif hasattr(obj, name):
            return getattr(obj, name)
    return None


class SemanticRecall:
    """Adds semantically relevant earlier messages to the input and indexes new messages on output.

    Args mirror ``semantic_recall`` (SPEC §6.1). ``raise_on_error=False`` (the default) logs failures and
    returns the input unchanged, so a request never fails because of recall.
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
    ) -> None:
        for label, value in (("storage", storage), ("vector", vector), ("embedder", embedder)):
            if value is None:
                raise ConfigError(f"SemanticRecall requires {label}; pass {label}=...")
        assert storage is not None and vector is not None and embedder is not None
        self.config = (
            SemanticRecallConfig.model_validate(
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
            if not isinstance(top_k, SemanticRecallConfig)
            else top_k
        )
        if not isinstance(embedder, Embedder):
            from .embedders.router import resolve_embedder

            embedder = resolve_embedder(embedder, embedder_options)
        self.storage = storage
        self.vector = vector
        self.embedder = embedder
        self.logger = logger or logging.getLogger("mastra_memory.processors")
        self.raise_on_error = raise_on_error
        self.indexer = MessageIndexer(
            storage,
            vector,
            embedder,
            index_name=self.config.index_name,
            index_config=self.config.index_config,
            embedder_options=embedder_options,
        )

    # --- input ----------------------------------------------------------------------------------

    async def process_input(
        self,
        messages: Sequence[MastraDBMessage | MessageInput],
        message_list: MessageList,
        abort: Any = None,
        tracing_context: Any = None,
        request_context: Mapping[str, Any] | None = None,
    ) -> MessageList:
        """Search earlier messages similar to the last user message and add them (SPEC §6.2)."""
        context = _get(request_context or {}, MEMORY_CONTEXT_KEY)
        thread = _get(context, "thread") if context is not None else None
        thread_id = _get(thread, "id") if thread is not None else None
        if not isinstance(thread_id, str) or not thread_id:
            return message_list
        try:
            return await self._recall_into(messages, message_list, context, thread, thread_id)
        except Exception as exc:
            if self.raise_on_error:
                raise
            self.logger.error("semantic recall failed for thread %s: %s", thread_id, type(exc).__name__)
            return message_list

    async def _recall_into(
        self,
        messages: Sequence[MastraDBMessage | MessageInput],
        message_list: MessageList,
        context: Any,
        thread: Any,
        thread_id: str,
    ) -> MessageList:
        query = self._query_text(messages, thread_id)
        if not query:
            return message_list
        resource_id = _get(context, "resource_id", "resourceId") or _get(thread, "resource_id", "resourceId")
        scope = self.config.scope
        if scope == "resource" and not resource_id:
            if self.raise_on_error:
                raise ResourceScopeError(
                    "resource-scoped semantic recall needs a resource_id; none in the memory context or the thread"
                )
            self.logger.warning(
                "semantic recall: no resource_id for thread %s; falling back to thread scope", thread_id
            )
            scope = "thread"
        scope_filter = {"resource_id": resource_id} if scope == "resource" else {"thread_id": thread_id}
        result = await self.indexer.search(
            query,
            top_k=self.config.top_k,
            scope_filter=scope_filter,
            user_filter=self.config.filter,
            threshold=self.config.threshold,
        )
        trace_recall(thread_id, resource_id, result.index_name, result.hits)
        if not result.hits:
            return message_list
        rng = self.config.message_range
        include = [
            IncludeItem(
                id=h.message_id,
                thread_id=h.thread_id,
                with_previous_messages=rng.before,
                with_next_messages=rng.after,
            )
            for h in result.hits
        ]
        # per_page=0, never False: False would pull the whole thread into the prompt.
        page = await self.storage.list_messages(
            thread_id, resource_id=resource_id if scope == "resource" else None, per_page=0, include=include
        )
        fresh = [m for m in page.messages if m.id not in message_list]
        same_thread = [m for m in fresh if m.thread_id == thread_id]
        other_threads = [m for m in fresh if m.thread_id != thread_id]
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

    @staticmethod
    def _query_text(messages: Sequence[MastraDBMessage | MessageInput], thread_id: str) -> str:
        normalised = normalize_messages(
            [m.model_dump() if isinstance(m, MastraDBMessage) else m for m in messages], thread_id=thread_id
        )
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

    async def process_output_result(
        self,
        messages: Sequence[MastraDBMessage | MessageInput],
        message_list: MessageList | None = None,
        abort: Any = None,
        tracing_context: Any = None,
        request_context: Mapping[str, Any] | None = None,
    ) -> MessageList | list[MastraDBMessage]:
        """Index the new messages of this turn through the shared write path (SPEC §6.4)."""
        context = _get(request_context or {}, MEMORY_CONTEXT_KEY)
        thread = _get(context, "thread") if context is not None else None
        thread_id = _get(thread, "id") if thread is not None else None
        memory_config = _get(context, "memory_config", "memoryConfig") if context is not None else None
        read_only = bool(_get(memory_config, "read_only", "readOnly")) if memory_config is not None else False
        resource_id = _get(context, "resource_id", "resourceId") or _get(thread, "resource_id", "resourceId")
        response = (
            normalize_messages(
                [m.model_dump() if isinstance(m, MastraDBMessage) else m for m in messages],
                thread_id=thread_id if isinstance(thread_id, str) else None,
                resource_id=resource_id if isinstance(resource_id, str) else None,
            )
            if isinstance(thread_id, str) and thread_id
            else []
        )
        done: MessageList | list[MastraDBMessage] = message_list if message_list is not None else response
        if not isinstance(thread_id, str) or not thread_id or read_only:
            return done
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
            return done
        try:
            await self.indexer.index_messages(todo)
        except Exception as exc:
            if self.raise_on_error and not isinstance(exc, MastraMemoryError):
                raise
            # Isolate the failing message(s): index one by one, log and skip failures.
            failed = 0
            for msg in todo:
                try:
                    await self.indexer.index_messages([msg])
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
        return done
