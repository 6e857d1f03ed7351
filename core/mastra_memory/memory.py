"""``Memory``: message history plus semantic recall over any storage and vector store (docs/spec.md §5).

Storage is the source of truth and is always written first; vectors follow through the single write
path of :mod:`mastra_memory.indexing`. Every input is validated before any I/O.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from .embedders.base import Embedder, EmbedderSpec
from .errors import (
    ConfigError,
    IndexingError,
    MastraMemoryError,
    ResourceScopeError,
    ThreadNotFoundError,
    ThreadOwnershipError,
    ValidationError,
)
from .indexing import Hit, MessageIndexer, trace_recall
from .memory_config import MemoryConfig, SemanticRecallConfig, merge_config
from .messages import MastraDBMessage, MessageInput, TextPart, ToolInvocationPart, normalize_messages
from .storage import (
    IncludeItem,
    MemoryStorage,
    MessagePage,
    Resource,
    Thread,
    ThreadPage,
    storage_capabilities,
    validate_list_messages_args,
)
from .vector import MastraVector

if TYPE_CHECKING:
    from .processors import SemanticRecall

logger = logging.getLogger("mastra_memory.memory")

DEFAULT_URL = "./memory.db"
DEFAULT_EMBEDDER = "local/wordllama"
WORKING_MEMORY_TOOL = "updateWorkingMemory"
_WORKING_MEMORY_MARKUP = re.compile(r"<working_memory>.*?</working_memory>", re.DOTALL)
#: Processors kept per effective request configuration; the least recently used is dropped beyond this.
_MAX_PROCESSORS = 32


class _Result(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class Usage(_Result):
    """Provider-reported embedding tokens of non-cached calls."""

    tokens: int


class RecallHit(_Result):
    """Why a message was recalled: the semantic hit behind an include window."""

    message_id: str
    thread_id: str | None
    score: float


class RecallResult(_Result):
    """What :meth:`Memory.recall` returns (docs/spec.md §5.3) plus the semantic hits that shaped it."""

    messages: list[MastraDBMessage]
    total: int | None
    page: int
    per_page: int | Literal[False]
    has_more: bool
    usage: Usage | None = None
    hits: list[RecallHit] = Field(default_factory=list)
    index_name: str | None = None


class SaveResult(_Result):
    """What :meth:`Memory.save_messages` returns."""

    messages: list[MastraDBMessage]
    usage: Usage | None = None


def _usage(tokens: int | None) -> Usage | None:
    return None if tokens is None else Usage(tokens=tokens)


def _require_id(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{what} must be a non-empty string, got {value!r}")
    return value


def _optional_resource(resource_id: Any) -> str | None:
    if resource_id is None:
        return None
    if not isinstance(resource_id, str) or not resource_id.strip():
        # An empty string must never silently disable resource isolation.
        raise ValidationError(
            "resource_id must be a non-empty string or None (an empty string is not 'no resource')"
        )
    return resource_id


def _storage_url(storage: object) -> str | None:
    """The database URL of an embedded SQLite storage (``storage.settings.url``), if it has one."""
    for holder in (storage, getattr(storage, "settings", None)):
        url = getattr(holder, "url", None)
        if isinstance(url, str) and url:
            return url
    return None


def _update_keys(update: Any) -> set[str]:
    """The fields a message update sets (dict keys, or the fields set on a ``MessageUpdate``)."""
    if isinstance(update, BaseModel):
        return set(update.model_fields_set)
    return {str(k) for k in update} if isinstance(update, Mapping) else set()


def _update_id(update: Any) -> Any:
    return update.get("id") if isinstance(update, Mapping) else getattr(update, "id", None)


#: Update fields that change a message's vectors (text, role, thread/resource, or created_at metadata).
_REINDEX_FIELDS = frozenset({"content", "role", "thread_id", "threadId", "created_at", "createdAt"})


def strip_working_memory(message: MastraDBMessage) -> MastraDBMessage | None:
    """Remove working-memory markup and update-tool parts; None when nothing is left.

    See docs/spec.md §5.4 step 1."""
    content = message.content
    parts = []
    for part in content.parts:
        if isinstance(part, ToolInvocationPart) and part.tool_invocation.tool_name == WORKING_MEMORY_TOOL:
            continue
        if isinstance(part, TextPart) and "<working_memory>" in part.text:
            text = _WORKING_MEMORY_MARKUP.sub("", part.text)
            if not text.strip():
                continue
            part = part.model_copy(update={"text": text})
        parts.append(part)
    text_shortcut = content.content
    if isinstance(text_shortcut, str) and "<working_memory>" in text_shortcut:
        text_shortcut = _WORKING_MEMORY_MARKUP.sub("", text_shortcut)
        if not text_shortcut.strip():
            text_shortcut = None
    if parts == list(content.parts) and text_shortcut == content.content:
        return message
    if not parts and not (isinstance(text_shortcut, str) and text_shortcut.strip()):
        return None
    new_content = content.model_copy(update={"parts": parts, "content": text_shortcut})
    return message.model_copy(update={"content": new_content})


class Memory:
    """Conversation memory for agents: recent history plus semantic recall (docs/spec.md §5).

    Args:
        storage: a ``MemoryStorage``, a plugin name or URL (``"sqlite:///memory.db"``); default: the embedded
            SQLite file ``./memory.db``.
        vector: a ``MastraVector``, a plugin name or URL; default: the SQLite vector store in the same file.
        embedder: a model-router string (``"openai/text-embedding-3-small"``), an ``EmbedderSpec``, or any
            ``Embedder``; default ``"local/wordllama"`` (offline).
        options: ``MemoryConfig`` or a dict (camelCase accepted): ``last_messages``, ``semantic_recall``, ...
        embedder_options: passed to the embedder (``dimensions``, ``base_url``, provider options).
    """

    def __init__(
        self,
        storage: MemoryStorage | str | None = None,
        vector: MastraVector | str | None = None,
        embedder: str | EmbedderSpec | Embedder | None = None,
        options: MemoryConfig | Mapping[str, Any] | None = None,
        embedder_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.options = MemoryConfig.from_any(options)
        self.embedder_options = dict(embedder_options or {})
        self.storage: MemoryStorage = self._resolve_storage(storage)
        self._vector_arg = vector
        self._embedder_arg: str | EmbedderSpec | Embedder = embedder or DEFAULT_EMBEDDER
        self._vector: MastraVector | None = vector if isinstance(vector, MastraVector) else None
        self._embedder: Embedder | None = None
        self._indexers: dict[tuple[str | None, Any, bool], MessageIndexer] = {}
        self._initialised = False
        self._init_lock = asyncio.Lock()
        self._wm_locks: dict[str, asyncio.Lock] = {}
        self._title_tasks: set[asyncio.Task[None]] = set()
        self._title_warned = False
        self._processors_by_config: dict[str, SemanticRecall] = {}
        self._validate_config(self.options, at_construction=True)
        self._title_model(self.options)  # warns once now if titles are on without a model

    # --- components -----------------------------------------------------------------------------

    @staticmethod
    def _resolve_storage(storage: MemoryStorage | str | None) -> MemoryStorage:
        if storage is None:
            from .stores.sqlite.storage import SQLiteStorage

            return SQLiteStorage(url=DEFAULT_URL)
        if isinstance(storage, str):
            from .plugins import create_storage

            return create_storage(storage)
        return storage

    @property
    def vector(self) -> MastraVector:
        """The vector store (resolved on first use)."""
        if self._vector is None:
            arg = self._vector_arg
            if arg is None:
                from .stores.sqlite.store import SQLiteVector

                # Same file as an embedded SQLite storage (Mastra's LibSQL default keeps both in one file).
                self._vector = SQLiteVector(url=_storage_url(self.storage) or DEFAULT_URL)
            elif isinstance(arg, str):
                from .plugins import create_vector

                self._vector = create_vector(arg)
            else:
                raise ConfigError(
                    f"vector must be a MastraVector, a plugin name or a URL, got {type(arg).__name__}"
                )
        return self._vector

    @property
    def embedder(self) -> Embedder:
        """The embedder (resolved on first use; nothing is loaded until the first embedding)."""
        if self._embedder is None:
            from .embedders.router import resolve_embedder

            self._embedder = resolve_embedder(self._embedder_arg, self.embedder_options)
        return self._embedder

    def _validate_config(self, cfg: MemoryConfig, *, at_construction: bool = False) -> None:
        recall = cfg.recall
        if recall is None:
            return
        try:
            _ = self.vector
            _ = self.embedder
        except MastraMemoryError as exc:
            raise ConfigError(f"Semantic recall requires a vector store and an embedder: {exc}") from exc
        if recall.scope == "resource" and not storage_capabilities(self.storage).resource_scope:
            raise ConfigError(
                "semantic_recall.scope='resource' needs a storage that isolates include windows by resource; "
                f"{type(self.storage).__name__} declares resource_scope=False, so set scope='thread'"
            )

    def config(self, thread_config: MemoryConfig | Mapping[str, Any] | None = None) -> MemoryConfig:
        """The instance options with ``thread_config`` deep-merged over them, validated (docs/spec.md
        §5.2)."""
        cfg = merge_config(self.options, thread_config)
        if thread_config is not None:
            self._validate_config(cfg)
        return cfg

    def _cleanup_indexer(self) -> MessageIndexer | None:
        """The cleanup-only indexer for deletes, or None when no memory vector can exist anywhere.

        That is the case when no vector store was given or used yet and the default one would be a
        fresh in-memory database or a file that does not exist: resolving it would only create a
        stray ``memory.db``.
        """
        if self._vector is None and self._vector_arg is None:
            from .stores.sqlite.connection import MEMORY, sqlite_path

            path = sqlite_path(_storage_url(self.storage) or DEFAULT_URL)
            if path == MEMORY or not Path(path).exists():
                return None
        return self.indexer(embed=False)

    def indexer(self, recall: SemanticRecallConfig | None = None, *, embed: bool = True) -> MessageIndexer:
        """The write/search path for ``recall``'s index name and configuration.

        ``embed=False`` gives a cleanup-only indexer that never resolves the embedder, so deletes work
        even when the embedder is unavailable.
        """
        recall = recall or self.options.recall or SemanticRecallConfig()
        key = (recall.index_name, recall.index_config, embed)
        if key not in self._indexers:
            self._indexers[key] = MessageIndexer(
                self.storage,
                self.vector,
                self.embedder if embed else None,
                index_name=recall.index_name,
                index_config=recall.index_config,
                embedder_options=self.embedder_options,
            )
        return self._indexers[key]

    async def init(self) -> None:
        """Create the storage schema (idempotent). Called automatically by every method."""
        if self._initialised:
            return
        async with self._init_lock:
            if not self._initialised:
                await self.storage.init()
                self._initialised = True

    async def flush(self) -> None:
        """Wait until background work (thread title generation) has finished."""
        while self._title_tasks:
            await asyncio.gather(*list(self._title_tasks), return_exceptions=True)

    async def close(self) -> None:
        """Wait for background title tasks and release storage and vector connections."""
        await self.flush()
        await self.storage.close()
        if self._vector is not None:
            await self._vector.close()

    async def __aenter__(self) -> Memory:
        await self.init()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- threads and resources ------------------------------------------------------------------

    async def create_thread(
        self,
        resource_id: str,
        thread_id: str | None = None,
        title: str = "",
        metadata: Mapping[str, Any] | None = None,
    ) -> Thread:
        """Create (or replace) a thread owned by ``resource_id``."""
        _require_id(resource_id, "resource_id")
        if thread_id is not None:
            _require_id(thread_id, "thread_id")
        await self.init()
        return await self.storage.save_thread(
            {
                "id": thread_id or str(uuid.uuid4()),
                "resource_id": resource_id,
                "title": title,
                "metadata": dict(metadata) if metadata is not None else None,
            }
        )

    async def get_thread_by_id(self, thread_id: str, resource_id: str | None = None) -> Thread | None:
        """The thread, or None if it is missing or owned by another resource."""
        await self.init()
        return await self.storage.get_thread_by_id(thread_id, _optional_resource(resource_id))

    async def list_threads(self, **kwargs: Any) -> ThreadPage:
        """Threads by resource and/or metadata, paged (docs/spec.md §4.4)."""
        await self.init()
        return await self.storage.list_threads(**kwargs)

    async def save_thread(self, thread: Thread | Mapping[str, Any]) -> Thread:
        """Insert or replace a thread."""
        await self.init()
        return await self.storage.save_thread(thread)

    async def update_thread(
        self, id: str, title: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Thread:
        """Change the title and/or shallow-merge metadata. Existing vectors keep the old metadata until
        :meth:`reindex_thread`."""
        await self.init()
        return await self.storage.update_thread(id, title=title, metadata=metadata)

    async def delete_thread(self, thread_id: str) -> None:
        """Delete a thread, its messages, and their vectors in every memory index (awaited)."""
        _require_id(thread_id, "thread_id")
        await self.init()
        await self.storage.delete_thread(thread_id)
        # Always clean: vectors may exist from a call that enabled recall through thread_config.
        cleanup = self._cleanup_indexer()
        if cleanup is not None:
            await cleanup.delete_thread_vectors(thread_id)

    async def get_resource_by_id(self, resource_id: str) -> Resource | None:
        await self.init()
        return await self.storage.get_resource_by_id(resource_id)

    async def update_resource(
        self, resource_id: str, working_memory: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Resource:
        await self.init()
        return await self.storage.update_resource(
            resource_id, working_memory=working_memory, metadata=metadata
        )

    # --- writes ---------------------------------------------------------------------------------

    async def save_messages(
        self,
        messages: Sequence[MessageInput],
        thread_config: MemoryConfig | Mapping[str, Any] | None = None,
    ) -> SaveResult:
        """Store messages atomically, then embed them when semantic recall is on (docs/spec.md §5.4).

        System and signal messages are not persisted. If embedding fails after the messages are stored,
        IndexingError is raised; :meth:`reindex_thread` retries.
        """
        cfg = self.config(thread_config)
        normalised = normalize_messages(messages)
        seen: set[str] = set()
        for msg in normalised:
            if msg.id in seen:
                raise ValidationError(
                    f"duplicate message id {msg.id!r} in one save_messages call; ids must be unique"
                )
            seen.add(msg.id)
        kept: list[MastraDBMessage] = []
        for msg in normalised:
            if msg.role in ("system", "signal"):
                continue
            stripped = strip_working_memory(msg)
            if stripped is not None:
                kept.append(stripped)
        if not kept:
            return SaveResult(messages=[])
        await self.init()
        stored = await self.storage.save_messages(kept)
        usage = None
        recall = cfg.recall
        if recall is not None:
            try:
                usage = await self.indexer(recall).index_messages(stored)
            except MastraMemoryError as exc:
                raise IndexingError(
                    f"{len(stored)} messages were stored but indexing their vectors failed: {exc}; "
                    "run reindex_thread() for the affected threads to retry",
                    details={"message_ids": [m.id for m in stored]},
                ) from exc
        self._maybe_generate_titles(cfg, stored)
        return SaveResult(messages=stored, usage=_usage(usage))

    async def update_messages(self, updates: Sequence[Mapping[str, Any]]) -> list[MastraDBMessage]:
        """Apply partial updates (docs/spec.md §5.6). A message whose content, role, thread or timestamp
        changed
        loses its old vectors in every memory index and, when semantic recall is on and it still has text,
        is re-embedded (a move re-indexes it under the new thread and resource)."""
        await self.init()
        updated = await self.storage.update_messages(updates)
        touched = {str(_update_id(u)) for u in updates if _update_keys(u) & _REINDEX_FIELDS}
        changed = [m for m in updated if m.id in touched]
        if not changed:
            return updated
        recall = self.options.recall
        if recall is None:
            # No embedder to re-index with: still drop the stale vectors (no orphans, no stale text).
            cleanup = self._cleanup_indexer()
            if cleanup is not None:
                await cleanup.delete_message_vectors([m.id for m in changed])
            return updated
        try:
            await self.indexer(recall).index_messages(changed)
        except MastraMemoryError as exc:
            raise IndexingError(
                f"messages were updated but re-indexing failed: {exc}; run reindex_thread() to retry",
                details={"message_ids": [m.id for m in changed]},
            ) from exc
        # A message that became a system/signal message is not re-indexed; its old vectors go.
        unembedded = [m.id for m in changed if m.role not in ("user", "assistant")]
        if unembedded:
            await self.indexer(recall, embed=False).delete_message_vectors(unembedded)
        return updated

    async def delete_messages(
        self, message_ids: str | Mapping[str, Any] | Sequence[str | Mapping[str, Any]]
    ) -> None:
        """Delete messages and every vector of theirs in every memory index (awaited, no orphans).

        Accepts ids or ``{"id": ...}`` dicts, as a list or a single one (Mastra's ``MessageDeleteInput``).
        """
        items: Sequence[str | Mapping[str, Any]] = (
            [message_ids] if isinstance(message_ids, str | Mapping) else message_ids
        )
        ids: list[str] = []
        for item in items:
            raw = item.get("id") if isinstance(item, Mapping) else item
            ids.append(_require_id(raw, "message id"))
        if not ids:
            return
        await self.init()
        await self.storage.delete_messages(ids)
        cleanup = self._cleanup_indexer()
        if cleanup is not None:
            await cleanup.delete_message_vectors(ids)

    async def reindex_thread(
        self, thread_id: str, thread_config: MemoryConfig | Mapping[str, Any] | None = None
    ) -> int:
        """Re-embed a thread's messages with the thread's current metadata; returns the message count."""
        _require_id(thread_id, "thread_id")
        cfg = self.config(thread_config)
        recall = cfg.recall or SemanticRecallConfig()
        await self.init()
        thread = await self.storage.get_thread_by_id(thread_id)
        if thread is None:
            raise ThreadNotFoundError(f"thread {thread_id!r} does not exist")
        page = await self.storage.list_messages(thread_id, per_page=False)
        indexer = self.indexer(recall)
        for start in range(0, len(page.messages), 256):
            await indexer.index_messages(page.messages[start : start + 256], {thread.id: thread})
        return len(page.messages)

    async def reindex(
        self, resource_id: str | None = None, thread_config: MemoryConfig | Mapping[str, Any] | None = None
    ) -> int:
        """Rebuild the vectors of every thread (of one resource, when given) from storage.

        The recovery path after switching embedders or after a failed vector write: storage is the source
        of truth, so nothing stored is lost. Returns the number of messages indexed.
        """
        resource_id = _optional_resource(resource_id)
        self.config(thread_config)  # invalid options fail before any I/O
        await self.init()
        flt = {"resource_id": resource_id} if resource_id is not None else None
        threads = await self.storage.list_threads(filter=flt, per_page=False)
        total = 0
        for thread in threads.threads:
            total += await self.reindex_thread(thread.id, thread_config)
        return total

    # --- recall ---------------------------------------------------------------------------------

    async def recall(
        self,
        thread_id: str,
        resource_id: str | None = None,
        vector_search_string: str | None = None,
        per_page: int | Literal[False] | None = None,
        page: int = 0,
        include: Sequence[IncludeItem | Mapping[str, Any]] | None = None,
        filter: Mapping[str, Any] | None = None,
        order_by: Mapping[str, Any] | None = None,
        thread_config: MemoryConfig | Mapping[str, Any] | None = None,
        include_total: bool = True,
    ) -> RecallResult:
        """History plus semantically recalled context for a thread (the exact algorithm of docs/spec.md
        §5.3)."""
        cfg = self.config(thread_config)
        recall = cfg.recall
        semantic_on = recall is not None
        query = (
            vector_search_string
            if isinstance(vector_search_string, str) and vector_search_string.strip()
            else None
        )
        _require_id(thread_id, "thread_id")
        resource_id = _optional_resource(resource_id)
        pp: int | Literal[False] = (
            per_page if per_page is not None else (cfg.last_messages if cfg.history_on else 0)
        )
        newest_first = order_by is None and pp is not False
        effective_order = {"field": "created_at", "direction": "DESC"} if newest_first else order_by
        # Every storage argument is checked before any I/O (and before the early return): a vector-style
        # filter, a bad page or include item raises here instead of after an embedding call.
        checked = validate_list_messages_args(
            thread_id,
            resource_id,
            include,
            pp,
            page,
            filter,
            effective_order,
            include_total,
            store="MEMORY",
        )
        include_items = list(checked.include)
        if per_page is None and not cfg.history_on and not include_items and not (semantic_on and query):
            return RecallResult(messages=[], total=0, page=page, per_page=0, has_more=False)
        await self.init()
        scope = recall.scope if recall is not None else "thread"
        if resource_id is not None:
            thread = await self.storage.get_thread_by_id(thread_id)
            if thread is not None and thread.resource_id != resource_id:
                raise ThreadOwnershipError(f"thread {thread_id} does not belong to the requested resource")
            if thread is None and scope != "resource":
                raise ThreadNotFoundError(f"thread {thread_id!r} does not exist")
        if semantic_on and query and scope == "resource" and resource_id is None:
            raise ResourceScopeError(
                "resource-scoped semantic recall needs a resource_id; pass one or set "
                "semantic_recall.scope to 'thread'"
            )
        hits: list[Hit] = []
        usage: int | None = None
        index_name: str | None = None
        if recall is not None and query:
            scope_filter = {"resource_id": resource_id} if scope == "resource" else {"thread_id": thread_id}
            result = await self.indexer(recall).search(
                query,
                top_k=recall.top_k,
                scope_filter=scope_filter,
                user_filter=recall.filter,
                threshold=recall.threshold,
            )
            hits, usage, index_name = result.hits, result.usage_tokens, result.index_name
        merged: dict[str, IncludeItem] = {}
        for item in include_items:
            merged[item.id] = _wider(merged.get(item.id), item)
        if recall is not None:
            for hit in hits:
                item = IncludeItem(
                    id=hit.message_id,
                    thread_id=hit.thread_id,
                    with_previous_messages=recall.message_range.before,
                    with_next_messages=recall.message_range.after,
                )
                merged[hit.message_id] = _wider(merged.get(hit.message_id), item)
        page_result: MessagePage = await self.storage.list_messages(
            thread_id,
            resource_id=resource_id,
            per_page=pp,
            page=page,
            order_by=checked.order,
            filter=checked.filter,
            include=list(merged.values()) or None,
            include_total=include_total,
        )
        messages = list(reversed(page_result.messages)) if newest_first else list(page_result.messages)
        unique: dict[str, MastraDBMessage] = {}
        for msg in messages:
            unique.setdefault(msg.id, msg)
        # A hit whose message vanished (or lies outside the resource) produced no window: never report it.
        hits = [h for h in hits if h.message_id in unique]
        trace_recall(thread_id, resource_id, index_name, hits)
        return RecallResult(
            messages=list(unique.values()),
            total=page_result.total,
            page=page_result.page,
            per_page=page_result.per_page,
            has_more=page_result.has_more,
            usage=_usage(usage),
            hits=[RecallHit(message_id=h.message_id, thread_id=h.thread_id, score=h.score) for h in hits],
            index_name=index_name,
        )

    # --- working memory -------------------------------------------------------------------------

    def _wm_target(
        self, thread_id: str, resource_id: str | None
    ) -> tuple[Literal["thread", "resource"], str]:
        wm = self.options.working_memory
        if not wm.enabled:
            raise ConfigError("working memory is disabled; set options.working_memory.enabled = True")
        if wm.scope == "resource":
            if resource_id is None:
                raise ResourceScopeError("resource-scoped working memory needs a resource_id")
            return "resource", _optional_resource(resource_id) or ""
        return "thread", _require_id(thread_id, "thread_id")

    async def get_working_memory(self, thread_id: str, resource_id: str | None = None) -> str | None:
        """The working-memory text of the resource (or thread, in thread scope); None when unset."""
        scope, key = self._wm_target(thread_id, resource_id)
        await self.init()
        if scope == "resource":
            res = await self.storage.get_resource_by_id(key)
            return res.working_memory if res else None
        thread = await self.storage.get_thread_by_id(key)
        value = (thread.metadata or {}).get("workingMemory") if thread else None
        return value if isinstance(value, str) else None

    async def update_working_memory(self, thread_id: str, resource_id: str | None, text: str) -> None:
        """Replace the working-memory text (serialised per resource or thread)."""
        if not isinstance(text, str):
            raise ValidationError("working memory must be a string")
        scope, key = self._wm_target(thread_id, resource_id)
        await self.init()
        lock = self._wm_locks.setdefault(f"{scope}:{key}", asyncio.Lock())
        async with lock:
            if scope == "resource":
                await self.storage.update_resource(key, working_memory=text)
            else:
                await self.storage.update_thread(key, metadata={"workingMemory": text})

    # --- titles ---------------------------------------------------------------------------------

    def _title_model(self, cfg: MemoryConfig) -> Any:
        """The callable title model when titles are on; None (after one warning) when none is usable."""
        setting = cfg.generate_title
        if not setting:
            return None
        model = getattr(setting, "model", None)
        if model is None or not callable(model):
            if not self._title_warned:
                logger.warning(
                    "generate_title is enabled but no callable title model is configured "
                    "(generate_title={'model': <callable>}); titles stay as they are"
                )
                self._title_warned = True
            return None
        return model

    def _maybe_generate_titles(self, cfg: MemoryConfig, stored: Sequence[MastraDBMessage]) -> None:
        model = self._title_model(cfg)
        if model is None:
            return
        setting = cfg.generate_title
        min_messages = getattr(setting, "min_messages", 1)
        instructions = getattr(setting, "instructions", None)
        for thread_id in dict.fromkeys(m.thread_id for m in stored):
            task = asyncio.get_running_loop().create_task(
                self._generate_title(thread_id, model, instructions, min_messages)
            )
            self._title_tasks.add(task)
            task.add_done_callback(self._title_tasks.discard)

    async def _generate_title(
        self, thread_id: str, model: Any, instructions: str | None, min_messages: int
    ) -> None:
        # Never fails a save: every error is logged.
        try:
            thread = await self.storage.get_thread_by_id(thread_id)
            if thread is None or thread.title:
                return
            page = await self.storage.list_messages(thread_id, per_page=False)
            users = [m for m in page.messages if m.role == "user"]
            if len(users) < min_messages:
                return
            from .messages import message_text

            transcript = "\n".join(f"{m.role}: {message_text(m)}" for m in page.messages)
            args = (transcript, instructions) if instructions is not None else (transcript,)
            if inspect.iscoroutinefunction(model):
                title = await model(*args)
            else:
                # A blocking model runs in a worker thread, so it never stalls the event loop.
                title = await asyncio.to_thread(model, *args)
                if inspect.isawaitable(title):
                    title = await title
            if isinstance(title, str) and title.strip():
                await self.storage.update_thread(thread_id, title=title.strip())
        except Exception:
            logger.exception("title generation failed for thread %s", thread_id)

    # --- processors -----------------------------------------------------------------------------

    def get_input_processors(self, existing: Sequence[Any] = (), request_context: Any = None) -> list[Any]:
        """A ``SemanticRecall`` processor for this request's memory configuration (unless one exists).

        ``request_context`` is Mastra's request context, ``{"MastraMemory": {"thread": ..., "resource_id":
        ..., "memory_config": ...}}``: its ``memory_config`` is merged over these options like a
        ``thread_config`` (docs/spec.md §5.2), so ``{"semanticRecall": False}`` gives no processor and a
        request's ``topK`` or ``messageRange`` replace the instance's. An invalid one raises ``ConfigError``.
        """
        return self._processors(existing, request_context)

    def get_output_processors(self, existing: Sequence[Any] = (), request_context: Any = None) -> list[Any]:
        """The same processor, for the output side (it indexes new messages); ``request_context`` as for
        :meth:`get_input_processors`."""
        return self._processors(existing, request_context)

    def _processors(self, existing: Sequence[Any], request_context: Any) -> list[Any]:
        from .processors import SemanticRecall, request_memory_config

        cfg = self.config(request_memory_config(request_context))
        recall = cfg.recall
        if recall is None or any(getattr(p, "id", None) == "semantic-recall" for p in existing):
            return []
        # One instance per effective configuration, for both sides, so input and output share its index
        # cache. The processor also honours the request's memory_config when it runs (merging it again
        # over options that already contain it changes nothing).
        key = repr((recall, cfg.read_only))
        processor = self._processors_by_config.pop(key, None)
        if processor is None:
            processor = SemanticRecall(
                storage=self.storage,
                vector=self.vector,
                embedder=self.embedder,
                top_k=recall.top_k,
                message_range=recall.message_range,
                scope=recall.scope,
                threshold=recall.threshold,
                index_name=recall.index_name,
                index_config=recall.index_config,
                filter=recall.filter,
                embedder_options=self.embedder_options,
                read_only=cfg.read_only,
            )
        self._processors_by_config[key] = processor  # most recently used last
        while len(self._processors_by_config) > _MAX_PROCESSORS:
            del self._processors_by_config[next(iter(self._processors_by_config))]
        return [processor]


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
