"""``Memory``: message history plus semantic recall over any storage and vector store (docs/spec.md §5).

The facade: it resolves its components (:mod:`.defaults`), validates configuration (:mod:`.config`) and
delegates the rest — recall to :mod:`.recall` (the one algorithm the processor uses too), the embedding
write path to :class:`.index.indexer.MessageIndexer`, re-indexing to :mod:`.index.reindex`, thread
operations to :mod:`.threads`, background work to :mod:`.background`, titles to :mod:`.titles`, working
memory to :mod:`.working_memory_store`, the processor chain to :mod:`.processors.chain`. Storage is the
source of truth and is always written first; every input is validated before any I/O.

Why this module is long: it is the public API, one documented method per Mastra method, each argument
checks and a delegation; splitting the class would only scatter what a user reads as one page.
"""

from __future__ import annotations

import asyncio
import math
import uuid
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from ..embedders.base import Embedder, EmbedderSpec
from ..errors import (
    ConfigError,
    IndexingError,
    MastraMemoryError,
    ThreadNotFoundError,
    ValidationError,
)
from ..filters import parse as parse_filter
from ..messages import MastraDBMessage, MessageInput, normalize_messages
from ..metadata_limits import shown
from ..models import ModelUsage
from ..storage import (
    CloneMessageFilterInput,
    IncludeItem,
    MemoryStorage,
    MessagePage,
    Resource,
    Thread,
    ThreadPage,
)
from ..storage.observational_records import ObservationalMemoryRecord
from ..tracing import span, traced
from ..vector import MastraVector
from .arguments import optional_resource, require_id
from .background import BackgroundWork
from .clones import CloneMetadata, clone_history, clone_metadata, list_clones, source_thread
from .config import MemoryConfig, SemanticRecallConfig, check_resource_scope, merge_config
from .defaults import DEFAULT_EMBEDDER, resolve_storage, vector_default
from .index.indexer import EMBEDDED_ROLES, MessageIndexer, reindexed_message_ids
from .index.reindex import reindex_messages
from .llm_context import LLMContext, build_context
from .observational.engine import CycleResult, ObservationEngine, OMUsage
from .observational.retrieval import ObservationSearchHit
from .processors.chain import ProcessorChain
from .processors.context import request_memory_config
from .recall.algorithm import (
    SemanticSearch,
    check_thread_access,
    recall_messages,
    thread_recall_request,
)
from .recall.search import (
    MessageSearchResult,
    SemanticSearchOptions,
    resource_search_filter,
    search_resource_messages,
)
from .results import RecallHit, RecallResult, ReindexResult, SaveResult, SkippedMessage, usage
from .retention import PruneBounds, PruneResult, StopSignal, check_bound, parse_retention
from .retention import prune as prune_tables
from .stored_messages import messages_to_store
from .threads import CloneThreadOptions, CloneThreadResult, CopyThreadResult, clone_thread, move_thread
from .titles import TitleGenerator
from .traces import recall_attributes, recall_found, save_after, save_before
from .working_memory_store import WorkingMemoryStore

if TYPE_CHECKING:
    # Unpack is typing's from Python 3.12; typing_extensions (pydantic's) gives it to the checker on 3.11.
    from typing_extensions import Unpack


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
        self._storage_arg = storage
        self.storage: MemoryStorage = resolve_storage(storage)
        self._vector_arg = vector
        self._embedder_arg: str | EmbedderSpec | Embedder = embedder or DEFAULT_EMBEDDER
        self._vector: MastraVector | None = vector if isinstance(vector, MastraVector) else None
        self._embedder: Embedder | None = None
        self._indexers: dict[tuple[str | None, Any, bool], MessageIndexer] = {}
        self._initialised = False
        self._init_lock = asyncio.Lock()
        self._working_memory = WorkingMemoryStore(self.storage)
        self._titles = TitleGenerator(self.storage)
        self._chain = ProcessorChain(self)
        self._background = BackgroundWork()
        self._validate_config(self.options)
        self._titles.model(self.options)  # warns once now if titles are on without a model

    # --- components -----------------------------------------------------------------------------

    @property
    def vector(self) -> MastraVector:
        """The vector store (resolved on first use; docs/spec.md §5.1 and `defaults` for the default).

        Raises ConfigError when none was given and the storage has no vector store to go with it.
        """
        if self._vector is None:
            arg = self._vector_arg
            if arg is None:
                self._vector = vector_default(self._storage_arg, self.storage).build()
            elif isinstance(arg, str):
                from ..plugins import create_vector

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
            from ..embedders.router import resolve_embedder

            self._embedder = resolve_embedder(self._embedder_arg, self.embedder_options)
        return self._embedder

    def _validate_config(self, cfg: MemoryConfig) -> None:
        """docs/spec.md §5.2: recall needs a vector store and an embedder, and resource scope a storage
        that isolates windows by resource."""
        om = cfg.observational
        if om is not None:
            # docs/spec.md §5.14: the models and the storage's support are checked now, before any I/O.
            self._chain.engine(om)
        recall = cfg.recall
        if recall is None:
            return
        try:
            _ = self.vector
            _ = self.embedder
        except MastraMemoryError as exc:
            raise ConfigError(f"Semantic recall requires a vector store and an embedder: {exc}") from exc
        check_resource_scope(self.storage, recall, "semantic_recall.scope")

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
        fresh in-memory database or a file that does not exist (resolving it would only create a stray
        ``memory.db``), or when there is no vector store at all.
        """
        if self._vector is None and self._vector_arg is None:
            try:
                default = vector_default(self._storage_arg, self.storage)
            except ConfigError:
                return None  # no vector store: no vector was ever written
            if not default.may_hold_vectors():
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
        """Wait until background work (embedding of ``save_messages(..., background=True)``, thread
        titles) has finished: `settled` without a timeout (docs/spec.md §5.11)."""
        await self.settled()

    async def close(self) -> None:
        """Wait for background work (`flush`) and release storage and vector connections (also
        when that work failed: the failure is raised after the connections are released)."""
        try:
            await self.flush()
        finally:
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
        require_id(resource_id, "resource_id")
        if thread_id is not None:
            require_id(thread_id, "thread_id")
        if metadata is not None and not isinstance(metadata, Mapping):
            raise ValidationError(
                f"thread metadata must be a mapping of keys to JSON values, not {type(metadata).__name__}; "
                "pass a dict such as {'topic': 'travel'} or None",
                id="MASTRA_MEMORY_CREATE_THREAD_INVALID_METADATA",
            )
        if not isinstance(title, str):
            raise ValidationError(
                f"thread title must be a string, not {type(title).__name__}",
                id="MASTRA_MEMORY_CREATE_THREAD_INVALID_TITLE",
            )
        thread_id = thread_id or str(uuid.uuid4())
        self._check_thread_metadata("CREATE_THREAD", self.options.recall, thread_id, metadata)
        await self.init()
        thread = await self.storage.save_thread(
            {
                "id": thread_id,
                "resource_id": resource_id,
                "title": title,
                "metadata": dict(metadata) if metadata is not None else None,
            }
        )
        await self._working_memory.sync_from_thread(self.options.working_memory, thread, metadata)
        return thread

    def _check_thread_metadata(
        self, operation: str, recall: SemanticRecallConfig | None, thread_id: Any, metadata: Any
    ) -> None:
        """docs/spec.md §5.4: with semantic recall on, thread metadata the vector store cannot hold is
        refused when the thread is written, before any message depends on it (every vector of the thread
        carries it, so no message of the thread could be saved). No I/O."""
        if recall is None or not isinstance(metadata, Mapping) or not metadata:
            return
        indexer = self.indexer(recall, embed=False)
        refusal = indexer.thread_metadata_refusal(metadata)
        if refusal is None:
            return
        key, reason = refusal
        store = self.vector.store_name
        what = (
            f"thread metadata key {shown(key)!r}"
            if key is not None
            else "the thread metadata (its keys together)"
        )
        raise ValidationError(
            f"{what} cannot be stored by the {store} vector store: {reason}. Semantic recall copies a "
            "thread's metadata into the vector of every message of the thread (docs/spec.md §5.4), so no "
            "message of this thread could be indexed; nothing was stored: rename or remove the key, or "
            "keep this data elsewhere (a message's own metadata, or the resource's)",
            id=f"MASTRA_MEMORY_{operation}_UNINDEXABLE_METADATA",
            domain="MEMORY",
            details={
                "thread_id": shown(thread_id) if isinstance(thread_id, str) else None,
                "key": None if key is None else shown(key),
                "store": store,
                "reason": reason,
            },
        )

    async def get_thread_by_id(self, thread_id: str, resource_id: str | None = None) -> Thread | None:
        """The thread, or None if it is missing or owned by another resource."""
        await self.init()
        return await self.storage.get_thread_by_id(thread_id, optional_resource(resource_id))

    async def list_threads(self, **kwargs: Any) -> ThreadPage:
        """Threads by resource and/or metadata, paged (docs/spec.md §4.4); archived threads only with
        ``include_archived=True``."""
        await self.init()
        return await self.storage.list_threads(**kwargs)

    async def save_thread(self, thread: Thread | Mapping[str, Any]) -> Thread:
        """Insert or replace a thread (with semantic recall on, metadata the vector store cannot hold is
        refused first, as in [`create_thread`][mastra_memory.memory.Memory.create_thread])."""
        if isinstance(thread, Thread):
            self._check_thread_metadata("SAVE_THREAD", self.options.recall, thread.id, thread.metadata)
        elif isinstance(thread, Mapping):
            fields = (thread.get("id"), thread.get("metadata"))
            self._check_thread_metadata("SAVE_THREAD", self.options.recall, *fields)
        await self.init()
        saved = await self.storage.save_thread(thread)
        given = thread.metadata if isinstance(thread, Thread) else thread.get("metadata")
        await self._working_memory.sync_from_thread(self.options.working_memory, saved, given)
        return saved

    async def update_thread(
        self, id: str, title: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Thread:
        """Change the title and/or shallow-merge metadata. Existing vectors keep the old metadata until
        `reindex_thread`. With semantic recall on, metadata keys the vector store cannot hold are
        refused first (the keys given are judged, not those stored already). A ``workingMemory`` string in
        ``metadata`` also becomes the resource's working memory when working memory is on in resource
        scope, as Mastra's ``updateThread`` (docs/spec.md §5.8); `create_thread` and
        [`save_thread`][mastra_memory.memory.Memory.save_thread] do the same."""
        self._check_thread_metadata("UPDATE_THREAD", self.options.recall, id, metadata)
        await self.init()
        thread = await self.storage.update_thread(id, title=title, metadata=metadata)
        await self._working_memory.sync_from_thread(self.options.working_memory, thread, metadata)
        return thread

    async def delete_thread(self, thread_id: str) -> None:
        """Delete a thread, its messages, and their vectors in every memory index (awaited)."""
        require_id(thread_id, "thread_id")
        await self._delete_with_vectors(
            lambda: self.storage.delete_thread(thread_id), lambda c: c.delete_thread_vectors(thread_id)
        )

    async def get_resource_by_id(self, resource_id: str) -> Resource | None:
        """The resource (working memory and metadata), or None if it has none yet."""
        await self.init()
        return await self.storage.get_resource_by_id(resource_id)

    async def update_resource(
        self, resource_id: str, working_memory: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Resource:
        """Set a resource's working memory and/or shallow-merge its metadata (created when missing)."""
        await self.init()
        return await self.storage.update_resource(
            resource_id, working_memory=working_memory, metadata=metadata
        )

    # --- writes ---------------------------------------------------------------------------------

    @traced("mastra_memory.save_messages", save_before, save_after)
    async def save_messages(
        self,
        messages: Sequence[MessageInput],
        thread_config: MemoryConfig | Mapping[str, Any] | None = None,
        *,
        background: bool = False,
    ) -> SaveResult:
        """Store messages atomically, then embed them when semantic recall is on (docs/spec.md §5.4).

        ``background=True`` returns once the messages are stored and embeds them in a background task:
        ``await memory.settled()`` waits for it and raises its IndexingError if it failed (docs/spec.md
        §5.11); ``usage`` is then None.

        System and signal messages are not persisted. With semantic recall on, a message whose vectors the
        vector store would refuse (an id too long for its chunk ids, U+0000 where the store cannot hold it,
        an unpaired surrogate, unrepresentable thread metadata) raises ValidationError naming it before
        anything is stored. If embedding fails after the messages are stored, IndexingError is raised;
        [`reindex_thread`][mastra_memory.memory.Memory.reindex_thread] retries.
        """
        if not isinstance(background, bool):
            raise ValidationError(f"background must be True or False, got {background!r}")
        cfg = self.config(thread_config)
        kept = messages_to_store(messages)
        if not kept:
            return SaveResult(messages=[])
        await self.init()
        recall = cfg.recall
        threads: dict[str, Thread | None] = {}
        if recall is not None:
            # docs/spec.md §5.4 step 2: what the vector side needs is checked before the storage write,
            # so a message that could never be indexed is not stored to block its thread's recovery.
            for thread_id in dict.fromkeys(m.thread_id for m in kept):
                threads[thread_id] = await self.storage.get_thread_by_id(thread_id)
            await self.indexer(recall).check_indexable(kept, threads)
        stored = await self.storage.save_messages(kept)
        tokens = None
        if recall is not None and background:
            indexer = self.indexer(recall)

            async def embed() -> None:
                await indexer.index_messages(stored, threads)

            self._background.spawn(
                embed(), what="embedding of saved messages", details={"message_ids": [m.id for m in stored]}
            )
        elif recall is not None:
            try:
                tokens = await self.indexer(recall).index_messages(stored, threads)
            except MastraMemoryError as exc:
                raise IndexingError(
                    f"{len(stored)} messages were stored but indexing their vectors failed: {exc}; "
                    "run reindex_thread() for the affected threads to retry",
                    details={"message_ids": [m.id for m in stored]},
                ) from exc
        self._titles.schedule(cfg, stored)
        return SaveResult(messages=stored, usage=usage(tokens))

    async def update_messages(
        self, updates: Sequence[Mapping[str, Any]], *, resource_id: str | None = None
    ) -> list[MastraDBMessage]:
        """Apply partial updates (docs/spec.md §5.6). A message whose content, role, thread or timestamp
        changed loses its old vectors in every memory index (every embedder's: they are stale) and, when
        semantic recall is on and it still has text, is re-embedded into this memory's index (a move
        re-indexes it under the new thread and resource).

        ``resource_id`` names the caller's resource: an update of a message of another resource raises
        ThreadOwnershipError and nothing is written (docs/spec.md §4.5).
        """
        resource = optional_resource(resource_id)  # "" is refused before any I/O, never "no resource"
        await self.init()
        await self._background.idle()  # a pending background embed must not overwrite the re-index
        updated = await self.storage.update_messages(updates, resource_id=resource)
        touched = reindexed_message_ids(updates)
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
        unembedded = [m.id for m in changed if m.role not in EMBEDDED_ROLES]
        if unembedded:
            await self.indexer(recall, embed=False).delete_message_vectors(unembedded)
        return updated

    async def delete_messages(self, message_ids: Sequence[str | Mapping[str, Any]]) -> None:
        """Delete messages and every vector of theirs in every memory index (awaited, no orphans).

        Takes a list of ids or ``{"id": ...}`` dicts (Mastra's ``MessageDeleteInput``); anything else, a
        bare id included, raises ``ValidationError`` before any I/O, as Mastra refuses a non-array
        (docs/spec.md §5.6).
        """
        if not isinstance(message_ids, list | tuple):
            raise ValidationError(
                "delete_messages takes a list of message ids or {id} objects, got "
                f"{type(message_ids).__name__}; wrap a single id in a list: [id]",
                id="MASTRA_MEMORY_DELETE_MESSAGES_INVALID_ARGS",
                domain="MEMORY",
            )
        ids: list[str] = []
        for item in message_ids:
            raw = item.get("id") if isinstance(item, Mapping) else item
            ids.append(require_id(raw, "message id"))
        if not ids:
            return
        await self._delete_with_vectors(
            lambda: self.storage.delete_messages(ids), lambda c: c.delete_message_vectors(ids)
        )

    async def _delete_with_vectors(
        self, delete: Callable[[], Awaitable[None]], vectors: Callable[[MessageIndexer], Awaitable[None]]
    ) -> None:
        """``delete()`` from storage, then ``vectors(cleanup)`` in every memory index."""
        await self.init()
        await self._background.idle()  # a pending background embed must not re-create these vectors
        await delete()
        # Always clean: vectors may exist from a call that enabled recall through thread_config.
        cleanup = self._cleanup_indexer()
        if cleanup is not None:
            await vectors(cleanup)

    async def reindex_thread(
        self, thread_id: str, thread_config: MemoryConfig | Mapping[str, Any] | None = None
    ) -> ReindexResult:
        """Re-embed a thread's messages with the thread's current metadata (docs/spec.md §5.4).

        Returns the number of messages re-indexed, an ``int`` whose ``skipped`` lists the stored messages
        the vector store refuses (id, thread, reason): they are left out, logged as a warning, and every
        other message of the thread is indexed. Failures that are not a message's fault (embedder, vector
        store unavailable, an index of another dimension) still raise.
        """
        require_id(thread_id, "thread_id")
        cfg = self.config(thread_config)
        recall = cfg.recall or SemanticRecallConfig()
        await self.init()
        thread = await self.storage.get_thread_by_id(thread_id)
        if thread is None:
            raise ThreadNotFoundError(f"thread {thread_id!r} does not exist")
        page = await self.storage.list_messages(thread_id, per_page=False)
        # The stored text is unchanged: other embedders' indexes stay (docs/spec.md §5.6).
        report = await reindex_messages(self.indexer(recall), thread, page.messages, keep_other_indexes=True)
        return ReindexResult(len(page.messages) - len(report), report)

    async def reindex(
        self, resource_id: str | None = None, thread_config: MemoryConfig | Mapping[str, Any] | None = None
    ) -> ReindexResult:
        """Rebuild the vectors of every thread (of one resource, when given) from storage.

        The recovery path after switching embedders or after a failed vector write: storage is the source
        of truth, so nothing stored is lost. Returns the number of messages indexed; its ``skipped`` lists
        the messages of every thread that the vector store refuses (see `reindex_thread`).
        """
        resource_id = optional_resource(resource_id)
        self.config(thread_config)  # invalid options fail before any I/O
        await self.init()
        flt = {"resource_id": resource_id} if resource_id is not None else None
        threads = await self.storage.list_threads(filter=flt, per_page=False, include_archived=True)
        total = 0
        skipped: list[SkippedMessage] = []
        for thread in threads.threads:
            done = await self.reindex_thread(thread.id, thread_config)
            total += int(done)
            skipped.extend(done.skipped)
        return ReindexResult(total, skipped)

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
        request = thread_recall_request(
            cfg,
            thread_id,
            resource_id,
            vector_search_string,
            per_page,
            page,
            include,
            filter,
            order_by,
            include_total,
        )
        if request is None:  # docs/spec.md §5.3 step 3: nothing to fetch, storage untouched
            return RecallResult(messages=[], total=0, page=page, per_page=0, has_more=False)
        await self.init()
        # A span block, not a decorator: a wrapper frame would move the warning above off the caller's line.
        with span(
            "mastra_memory.recall", recall_attributes(request), text=vector_search_string or ""
        ) as current:
            await check_thread_access(self.storage, request)
            recall = cfg.recall
            semantic = SemanticSearch(recall, self.indexer(recall)) if recall is not None else None
            found = await recall_messages(self.storage, request, semantic)
            recall_found(found, current)
        assert found.page is not None  # Memory always fetches
        return RecallResult(
            messages=found.messages,
            total=found.page.total,
            page=found.page.page,
            per_page=found.page.per_page,
            has_more=found.page.has_more,
            usage=usage(found.usage_tokens),
            hits=[
                RecallHit(message_id=h.message_id, thread_id=h.thread_id, score=h.score) for h in found.hits
            ],
            index_name=found.index_name,
        )

    # --- thread operations, search over messages, background work (docs/spec.md §5.11) ----------

    async def clone_thread(
        self,
        source_thread_id: str,
        *,
        new_thread_id: str | None = None,
        resource_id: str | None = None,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        message_limit: int | None = None,
        message_filter: CloneMessageFilterInput | None = None,
        source_resource_id: str | None = None,
        thread_config: MemoryConfig | Mapping[str, Any] | None = None,
    ) -> CloneThreadResult:
        """Copy a thread and its messages under new ids (Mastra's ``cloneThread``) and make the copies
        recallable: with semantic recall on, they are embedded under their new ids (docs/spec.md §5.11).

        ``resource_id`` is the clone's resource (default: the source's); ``source_resource_id`` names the
        caller's resource, and a source of another one is a ThreadOwnershipError. ``metadata`` is merged
        over the source's; the clone records ``source_thread_id``, ``cloned_at`` and ``last_message_id``.
        ``message_filter`` (``start_date``/``end_date`` inclusive, ``message_ids``) selects messages, and
        ``message_limit`` then keeps the newest N. Copies the vector store refuses are in ``skipped``.
        """
        require_id(source_thread_id, "source_thread_id")
        resource_id = optional_resource(resource_id)
        source_resource_id = optional_resource(source_resource_id)
        cfg = self.config(thread_config)
        recall = cfg.recall
        self._check_thread_metadata("CLONE_THREAD", recall, new_thread_id, metadata)
        await self.init()
        return await clone_thread(
            self.storage,
            self.indexer(recall) if recall is not None else None,
            source_thread_id,
            new_thread_id=new_thread_id,
            resource_id=resource_id,
            source_resource_id=source_resource_id,
            title=title,
            metadata=metadata,
            message_limit=message_limit,
            message_filter=message_filter,
        )

    async def update_thread_resource_id(
        self,
        thread_id: str,
        resource_id: str,
        *,
        expected_resource_id: str | None = None,
        thread_config: MemoryConfig | Mapping[str, Any] | None = None,
    ) -> Thread:
        """Move a thread, its messages and their vectors to another resource (docs/spec.md §5.11).

        Storage moves the thread and every message in one transaction; then, with semantic recall on,
        the messages are re-indexed so their vectors carry the new ``resource_id`` (without it, the
        thread's vectors are deleted). Afterwards resource-scoped recall and
        `semantic_search_messages` of the old resource never return them and the new resource's do.
        ``expected_resource_id`` names the caller's resource (ThreadOwnershipError when the thread is
        another's). Resource-scoped working memory stays with the old resource; thread-scoped working
        memory moves with the thread.
        """
        require_id(thread_id, "thread_id")
        require_id(resource_id, "resource_id")
        expected_resource_id = optional_resource(expected_resource_id)
        cfg = self.config(thread_config)
        await self.init()
        await self._background.idle()  # a pending embed would write the old resource into a vector
        recall = cfg.recall
        return await move_thread(
            self.storage,
            self.indexer(recall) if recall is not None else None,
            self._cleanup_indexer() if recall is None else None,
            thread_id,
            resource_id,
            expected_resource_id=expected_resource_id,
        )

    async def archive_thread(self, thread_id: str, *, resource_id: str | None = None) -> Thread:
        """Archive a thread: hidden from `list_threads` unless ``include_archived=True``; its
        messages stay stored and recallable, resource-scoped recall included (docs/spec.md §5.11)."""
        require_id(thread_id, "thread_id")
        await self.init()
        return await self.storage.archive_thread(thread_id, resource_id=optional_resource(resource_id))

    async def unarchive_thread(self, thread_id: str, *, resource_id: str | None = None) -> Thread:
        """Undo [`archive_thread`][mastra_memory.memory.Memory.archive_thread]: the thread is listed again."""
        require_id(thread_id, "thread_id")
        await self.init()
        return await self.storage.unarchive_thread(thread_id, resource_id=optional_resource(resource_id))

    async def semantic_search_messages(
        self,
        query: str,
        *,
        resource_id: str,
        thread_id: str | None = None,
        filter: Mapping[str, Any] | None = None,
        top_k: int = 10,
        threshold: float | None = None,
        thread_config: MemoryConfig | Mapping[str, Any] | None = None,
    ) -> MessageSearchResult:
        """Semantic search over one resource's messages, across its threads (docs/spec.md §5.11). Returns
        the messages with their best score, best first. Not Mastra's ``searchMessages``, which searches
        observation groups (observational memory); this was ``search_messages`` before (deprecated alias).

        ``filter`` is a vector filter (docs/spec.md §2) over the vectors' metadata (thread metadata,
        ``role``, ``created_at``, ...); it is ANDed with ``resource_id == <resource_id>`` (and the
        thread, when given) and with ``semantic_recall.filter``, so it can only narrow: no filter reaches
        another resource's messages. Every hit is also checked against storage. ``threshold`` keeps hits
        with ``score >= threshold`` (default: ``semantic_recall.threshold``).
        """
        if not isinstance(query, str) or not query.strip():
            raise ValidationError(f"query must be a non-empty string, got {query!r}")
        resource_id = require_id(resource_id, "resource_id")
        if thread_id is not None:
            require_id(thread_id, "thread_id")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ValidationError(f"top_k must be an integer >= 1, got {top_k!r}")
        if threshold is not None and (
            isinstance(threshold, bool)
            or not isinstance(threshold, int | float)
            or not math.isfinite(threshold)
        ):
            raise ValidationError(f"threshold must be a finite number or None, got {threshold!r}")
        if filter is not None and not isinstance(filter, Mapping):
            raise ValidationError(
                f"filter must be a vector filter dict (docs/spec.md §2) or None, not {type(filter).__name__}"
            )
        cfg = self.config(thread_config)
        recall = cfg.recall or SemanticRecallConfig()
        self.vector.check_top_k(top_k)  # the store's limit, before the query text is embedded
        call_node = parse_filter(filter) if filter is not None else None
        flt = resource_search_filter(resource_id, thread_id, recall.filter_node, call_node)
        await self.init()
        return await search_resource_messages(
            self.storage,
            self.indexer(recall),
            query,
            resource_id=resource_id,
            thread_id=thread_id,
            flt=flt,
            top_k=top_k,
            threshold=threshold if threshold is not None else recall.threshold,
            mode=recall.mode,
        )

    async def search_messages(
        self, query: str, **options: Unpack[SemanticSearchOptions]
    ) -> MessageSearchResult:
        """Deprecated alias of `semantic_search_messages` (one release; a ``DeprecationWarning`` each
        call). The name is Mastra's ``searchMessages``, a search of observation groups, which it becomes
        once observational memory exists (docs/spec.md §5.11)."""
        warnings.warn(
            "Memory.search_messages is renamed semantic_search_messages (same arguments and result); the "
            "old name goes in the next release and will then be Mastra's searchMessages (observation groups)",
            DeprecationWarning,
            stacklevel=2,
        )
        return await self.semantic_search_messages(query, **options)

    # --- copies and clone lineage, context, raw writes, retention (docs/spec.md §5.11) ----------

    async def copy_thread(
        self, source_thread_id: str, **options: Unpack[CloneThreadOptions]
    ) -> CopyThreadResult:
        """`clone_thread` without the copied messages in the result (Mastra's ``copyThread``): the
        same arguments, checks and indexing; returns ``thread``, ``message_id_map`` and ``skipped``."""
        done = await self.clone_thread(source_thread_id, **options)
        return CopyThreadResult(thread=done.thread, message_id_map=done.message_id_map, skipped=done.skipped)

    def get_clone_metadata(self, thread: Thread | None) -> CloneMetadata | None:
        """Where ``thread`` was cloned from (``source_thread_id``, ``cloned_at``, ``last_message_id``), or
        None when it is not a clone (Mastra's ``getCloneMetadata``; reads this project's flat keys and
        Mastra's nested ``clone`` object). No I/O."""
        return clone_metadata(thread)

    def is_clone(self, thread: Thread | None) -> bool:
        """Whether ``thread`` is a clone of another thread (Mastra's ``isClone``). No I/O."""
        return clone_metadata(thread) is not None

    async def get_source_thread(self, thread_id: str, *, resource_id: str | None = None) -> Thread | None:
        """The thread ``thread_id`` was cloned from, or None (not a clone, missing, or source deleted) —
        Mastra's ``getSourceThread``. ``resource_id`` names the caller's resource: the clone and the source
        must both be its, else None (docs/spec.md §4.5)."""
        require_id(thread_id, "thread_id")
        resource_id = optional_resource(resource_id)
        await self.init()
        return await source_thread(self.storage, thread_id, resource_id)

    async def list_clones(self, source_thread_id: str, resource_id: str | None = None) -> list[Thread]:
        """The threads cloned directly from ``source_thread_id`` among those of ``resource_id`` (default: the
        source's resource; no source, no clones), newest first — Mastra's ``listClones``."""
        require_id(source_thread_id, "source_thread_id")
        resource_id = optional_resource(resource_id)
        await self.init()
        return await list_clones(self.storage, source_thread_id, resource_id)

    async def get_clone_history(self, thread_id: str, *, resource_id: str | None = None) -> list[Thread]:
        """``thread_id`` and the threads it descends from, the original first (Mastra's
        ``getCloneHistory``); ``[]`` when the thread is missing. With ``resource_id`` the chain stops at an
        ancestor of another resource; a cycle in (user-written) metadata stops it too."""
        require_id(thread_id, "thread_id")
        resource_id = optional_resource(resource_id)
        await self.init()
        return await clone_history(self.storage, thread_id, resource_id)

    async def get_context(
        self,
        thread_id: str,
        resource_id: str | None = None,
        memory_config: MemoryConfig | Mapping[str, Any] | None = None,
    ) -> LLMContext:
        """The system message and messages for one LLM call (Mastra's ``getContext``): the working-memory
        instructions (None when working memory is off) and the newest ``last_messages`` messages of the
        thread, oldest first (none when history is off). No semantic recall, as in Mastra.
        ``memory_config`` is merged over the options like a ``thread_config``; a thread of another resource
        than ``resource_id`` raises ThreadOwnershipError."""
        require_id(thread_id, "thread_id")
        resource_id = optional_resource(resource_id)
        cfg = self.config(memory_config)
        await self.init()
        return await build_context(self.storage, cfg, thread_id, resource_id)

    async def list_messages_by_resource_id(
        self,
        resource_id: str,
        *,
        include: Sequence[IncludeItem | Mapping[str, Any]] | None = None,
        per_page: int | Literal[False] | None = None,
        page: int = 0,
        filter: Mapping[str, Any] | None = None,
        order_by: Mapping[str, Any] | None = None,
        include_total: bool = True,
    ) -> MessagePage:
        """The messages of every thread of ``resource_id``, paged as ``list_messages`` (docs/spec.md §4.3;
        Mastra's ``listMessagesByResourceId``: ``per_page`` default 40, ``False`` for all). An ``include``
        window reaches only this resource's messages."""
        resource_id = require_id(resource_id, "resource_id")
        await self.init()
        return await self.storage.list_messages_by_resource_id(
            resource_id,
            include=include,
            per_page=per_page,
            page=page,
            filter=filter,
            order_by=order_by,
            include_total=include_total,
        )

    async def persist_messages(self, messages: Sequence[MessageInput]) -> list[MastraDBMessage]:
        """Store messages without embedding them (Mastra's ``persistMessages``): system and signal messages
        are left out, everything else is written as ``save_messages`` writes it (same checks and §4.5
        ownership), but nothing is embedded. A re-persisted id loses its vectors (their text may be stale);
        [`reindex_thread`][mastra_memory.memory.Memory.reindex_thread] makes persisted messages recallable."""
        kept = [m for m in normalize_messages(messages) if m.role not in ("system", "signal")]
        ids = [m.id for m in kept]
        if len(set(ids)) != len(ids):
            raise ValidationError("persist_messages got one message id twice; ids must be unique")
        if not kept:
            return []
        await self.init()
        await self._background.idle()  # a pending embed must not write the old text after this write
        existing = [m.id for m in await self.storage.list_messages_by_id(ids)]
        stored = await self.storage.save_messages(kept)
        cleanup = self._cleanup_indexer() if existing else None
        if cleanup is not None:
            await cleanup.delete_message_vectors(existing)
        return stored

    async def prune(
        self,
        retention: Mapping[str, Any] | None = None,
        *,
        max_batches: int | None = None,
        max_rows: int | None = None,
        pause_ms: float = 0,
        signal: StopSignal | None = None,
    ) -> list[PruneResult]:
        """Delete messages and threads older than their retention policy (Mastra's ``retention`` and
        ``prune()``; docs/spec.md §5.11). ``retention`` is ``{"messages": {"maxAge": "30d", "batchSize":
        1000}, "threads": {...}}`` (or Mastra's ``{"memory": {...}}``); rows whose ``created_at`` is strictly
        older than ``now - maxAge`` go, ``batchSize`` per batch. Pruned messages lose their vectors in every
        memory index; a pruned thread takes its messages and their vectors with it. ``max_batches`` and
        ``max_rows`` bound each table's work, ``pause_ms`` waits between batches and ``signal`` (an
        ``Event``) stops between batches: a result with ``done=False`` means rows remain — call again to
        resume. No policy: ``[]``."""
        policies = parse_retention(retention)
        bounds = PruneBounds(
            max_batches=check_bound(max_batches, "max_batches", minimum=0),
            max_rows=check_bound(max_rows, "max_rows", minimum=0),
            pause_ms=_pause(pause_ms),
            signal=signal,
        )
        if signal is not None and not callable(getattr(signal, "is_set", None)):
            raise ValidationError(
                "signal must be an asyncio.Event or threading.Event (anything with is_set())"
            )
        if not policies:
            return []
        await self.init()

        async def delete_messages(ids: list[str]) -> None:
            await self._delete_with_vectors(
                lambda: self.storage.delete_messages(ids), lambda c: c.delete_message_vectors(ids)
            )

        async def delete_threads(ids: list[str]) -> None:
            for thread_id in ids:
                await self.delete_thread(thread_id)

        return await prune_tables(
            self.storage, policies, bounds, delete_messages=delete_messages, delete_threads=delete_threads
        )

    async def settled(self, timeout: float | None = None) -> None:  # noqa: ASYNC109 (the work must survive)
        """Wait until every background task of this memory has finished — embeddings scheduled by
        ``save_messages(..., background=True)`` and thread titles (docs/spec.md §5.11).

        After it returns, every message saved before the call is recallable. ``timeout`` (seconds)
        bounds the wait: SettleTimeoutError when it runs out (the work continues; call again). A
        background embedding that failed is raised here as IndexingError (once), never swallowed.
        """
        await self._background.settled(timeout, self._titles)

    # --- observational memory (docs/spec.md §5.14) ------------------------------------------------

    def _engine(self, thread_config: MemoryConfig | Mapping[str, Any] | None = None) -> ObservationEngine:
        om = self.config(thread_config).observational
        if om is None:
            raise ConfigError(
                "observational memory is off: pass options={'observational_memory': {'model': ...}} "
                "(observationalMemory) to Memory"
            )
        return self._chain.engine(om)

    async def observe(
        self,
        thread_id: str,
        resource_id: str,
        *,
        force: bool = True,
        thread_config: MemoryConfig | Mapping[str, Any] | None = None,
    ) -> CycleResult:
        """Run the Observer now on the thread's unobserved messages (``force=False``: only when they reach
        ``observation.message_tokens``), then the Reflector if the observations exceed their budget
        (Mastra's manual ``observe()``). Unlike the processors, a model failure raises here: ``ModelError``,
        or ``ModelOutputError`` with the reply attached; the messages stay unobserved."""
        require_id(thread_id, "thread_id")
        require_id(resource_id, "resource_id")
        engine = self._engine(thread_config)
        await self.init()
        return await engine.observe(thread_id, resource_id, force=force, trigger="manual", raise_errors=True)

    async def get_observational_memory(
        self, thread_id: str, resource_id: str
    ) -> ObservationalMemoryRecord | None:
        """The observational-memory record in force for the thread (of its resource, in resource scope);
        None before the first observation cycle."""
        require_id(thread_id, "thread_id")
        require_id(resource_id, "resource_id")
        engine = self._engine()
        await self.init()
        return await engine.current(thread_id, resource_id)

    async def search_observations(
        self,
        query: str,
        *,
        resource_id: str,
        top_k: int = 10,
        filter: Mapping[str, Any] | None = None,
    ) -> list[ObservationSearchHit]:
        """Observation groups of one resource by similarity to ``query``, one hit per group, best first
        (Mastra's ``searchMessages``; ``filter``: ``thread_id``, ``observed_after``, ``observed_before``).
        Needs the vector store and embedder; the groups are indexed when ``retrieval.vector`` is on."""
        require_id(resource_id, "resource_id")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ValidationError(f"top_k must be an integer >= 1, got {top_k!r}")
        await self.init()
        return await self._chain.observation_index().search(
            query, resource_id=resource_id, top_k=top_k, filter=filter
        )

    async def index_observation(
        self,
        *,
        text: str,
        group_id: str,
        range: str,
        thread_id: str,
        resource_id: str,
        observed_at: datetime | None = None,
    ) -> list[str]:
        """Embed and store one observation group in ``memory_observations_<dim>`` (Mastra's
        ``indexObservation``); returns the vector ids (Mastra's, so indexing again replaces them)."""
        require_id(thread_id, "thread_id")
        require_id(resource_id, "resource_id")
        await self.init()
        return await self._chain.observation_index().index_observation(
            text=text,
            group_id=group_id,
            range=range,
            thread_id=thread_id,
            resource_id=resource_id,
            observed_at=observed_at,
        )

    @property
    def observational_usage(self) -> OMUsage:
        """Observational memory's model calls so far: ``observer`` and ``reflector``, each with calls,
        failures and tokens (docs/spec.md §5.14)."""
        usage = self._chain.om_usage
        return OMUsage(replace(usage.observer), replace(usage.reflector))

    @property
    def title_usage(self) -> ModelUsage:
        """The title model's calls so far (docs/spec.md §5.9): how many, how many failed, and the tokens
        they reported; a copy, so it can be compared before and after a turn."""
        return replace(self._titles.usage)

    # --- working memory -------------------------------------------------------------------------

    async def get_working_memory(self, thread_id: str, resource_id: str | None = None) -> str | None:
        """The working-memory text of the resource (or thread, in thread scope); None when unset
        (docs/spec.md §5.8)."""
        target = WorkingMemoryStore.target(self.options.working_memory, thread_id, resource_id)
        await self.init()
        return await self._working_memory.get(target)

    async def update_working_memory(self, thread_id: str, resource_id: str | None, text: str) -> None:
        """Replace the working-memory text (serialised per resource or thread; docs/spec.md §5.8)."""
        if not isinstance(text, str):
            raise ValidationError("working memory must be a string")
        target = WorkingMemoryStore.target(self.options.working_memory, thread_id, resource_id)
        await self.init()
        await self._working_memory.update(target, text)

    # --- processors -----------------------------------------------------------------------------

    def get_input_processors(self, existing: Sequence[Any] = (), request_context: Any = None) -> list[Any]:
        """The memory input processors for this request, in Mastra's order (docs/spec.md §5.12):
        ``MemoryInputFilter`` (history loaded: drops what the input resends of what memory holds),
        ``WorkingMemory`` (working memory on), ``MessageHistory`` (history on), ``SemanticRecall`` (recall on)
        and, under ``message_history``, the ``memory-token-limiter`` step (the whole prompt within the budget,
        the thread's boundary moved). Run them before your own input processors.

        ``request_context`` is Mastra's request context, ``{"MastraMemory": {"thread": ..., "resource_id":
        ..., "memory_config": ...}}``: its ``memory_config`` is merged over these options like a
        ``thread_config`` (docs/spec.md §5.2), so ``{"semanticRecall": False}`` leaves recall out and a
        request's ``topK`` or ``lastMessages`` replace the instance's. A processor whose ``id`` is already in
        ``existing`` is not added again. An invalid ``memory_config`` raises ``ConfigError``.
        """
        return self._chain.inputs(self.config(request_memory_config(request_context)), existing)

    def get_output_processors(self, existing: Sequence[Any] = (), request_context: Any = None) -> list[Any]:
        """The memory output processors for this request (docs/spec.md §5.12): ``MessageHistory`` (stores the
        turn; always, so recall windows and later history find it, unless ``read_only``), then
        ``SemanticRecall`` (indexes it; recall on). Run them after your own output processors.
        ``existing`` and ``request_context`` as for `get_input_processors`."""
        return self._chain.outputs(self.config(request_memory_config(request_context)), existing)

    def get_tools(self, request_context: Any = None) -> dict[str, Any]:
        """The memory tools for this request: ``{"updateWorkingMemory": tool}`` when working memory is on and
        the request is not ``read_only`` (docs/spec.md §5.12), and ``{"recall": RecallTool}`` when
        observational memory's ``retrieval`` is on (§5.14). The tool's handler writes through
        `update_working_memory` after checking that the request's thread belongs to its resource."""
        return self._chain.tools(self.config(request_memory_config(request_context)))


def _pause(value: Any) -> float:
    """``prune``'s ``pause_ms``: a finite number >= 0."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ValidationError(f"pause_ms must be a finite number of milliseconds >= 0, got {value!r}")
    return float(value)
