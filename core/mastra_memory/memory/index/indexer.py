"""The single embedding write path of ``Memory`` and ``SemanticRecall`` (docs/spec.md §5.4, §5.5, §5.6).

One way to turn messages into vectors (text extraction, chunking, deterministic ids, thread metadata
spread under fixed keys, index named from the real embedding dimension) and one way to find and clean
every memory index. :class:`MessageIndexer` also owns what the search (:mod:`.search`) shares with the
write path: the index name, index creation, embedding through the cache and the zero-vector rule.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
from pydantic import BaseModel

from ...embedders.base import Embedder
from ...embedders.cache import embed_with_cache
from ...errors import (
    ConfigError,
    EmbeddingError,
    IndexNotFoundError,
    MastraMemoryError,
    ValidationError,
    VectorCleanupError,
)
from ...filters import parse as parse_filter
from ...messages import MastraDBMessage, message_text
from ...metadata_limits import RECORD_METADATA, metadata_problem, shown
from ...storage import MemoryStorage, Thread
from ...timestamps import canonical_timestamp
from ...tracing import vector_call
from ...vector import MIN_COSINE_NORM, IndexConfig, MastraVector
from .chunking import DEFAULT_CHUNK_SIZE, chunk_text
from .indexability import (
    FIXED_KEYS,
    Record,
    StoreRules,
    record_problem,
    shown_id,
    thread_metadata_problem,
)
from .lexical import LexicalIndex, lexical_index_for

# The logger keeps the name of the module it was born in: docs/spec.md §5.4 names it.
logger = logging.getLogger("mastra_memory.indexing")

#: The dimension Mastra's unsuffixed default index name stands for.
DEFAULT_NAME_DIMENSION = 1536
#: Vector deletes by message id go in batches of this many ids.
DELETE_BATCH = 100
#: Roles whose text is embedded.
EMBEDDED_ROLES = frozenset({"user", "assistant"})
#: Metadata key prefix reserved for adapters; thread metadata keys with it are not spread into vectors.
RESERVED = "_mastra_"
#: Thread metadata that is memory's own bookkeeping, not the user's: never spread into vectors (the
#: history token boundary, docs/spec.md §5.12, is Mastra's key and changes as the thread grows; "mastra"
#: holds Mastra's observational-memory state, ``metadata.mastra.om``, on threads a Mastra app observed).
BOOKKEEPING_KEYS = frozenset({"memoryTokenLimiter", "mastra"})
#: The created_at of the smallest record (:meth:`MessageIndexer.thread_metadata_refusal`).
_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
#: What a failed cleanup after a storage change says is done already (retrying the call finishes it).
_STORAGE_UPDATED = "storage is already updated"
#: Update fields that change a message's vectors (text, role, thread/resource, or created_at metadata).
_REINDEX_FIELDS = frozenset({"content", "role", "thread_id", "threadId", "created_at", "createdAt"})


def reindexed_message_ids(updates: Iterable[Any]) -> set[str]:
    """Ids of the message updates that change vectors: content, role, thread or timestamp (docs/spec.md
    §5.6). Updates are dicts or ``MessageUpdate`` models (the fields set on them count)."""
    touched: set[str] = set()
    for update in updates:
        if isinstance(update, BaseModel):
            keys = set(update.model_fields_set)
            message_id = getattr(update, "id", None)
        elif isinstance(update, Mapping):
            keys = {str(k) for k in update}
            message_id = update.get("id")
        else:
            continue
        if keys & _REINDEX_FIELDS:
            touched.add(str(message_id))
    return touched


def default_index_name(dimension: int, separator: str) -> str:
    """``memory_messages`` for 1536 dimensions, else ``memory_messages_<dim>`` (store's separator)."""
    base = f"memory{separator}messages"
    return base if dimension == DEFAULT_NAME_DIMENSION else f"{base}{separator}{dimension}"


def vector_ids(message_id: str, chunks: int) -> list[str]:
    """The vector ids of a message's chunks (docs/spec.md §5.4): chunk n is ``<id>#<n>``, except chunk 0 of
    an id without ``#``, which is ``<id>`` (so the vectors of ordinary ids keep their old names).

    No message id can produce another message's vector id: an id without ``#`` comes only from chunk 0 of
    the message of that id, and one with ``#`` splits at its last ``#`` into the message id and a chunk
    number. (When chunk 0 of every message was ``<id>``, a message named ``"M#1"`` overwrote chunk 1 of
    message ``M`` of another tenant, and deleting it removed that vector: issue 23.)
    """
    plain = "#" not in message_id
    return [message_id if n == 0 and plain else f"{message_id}#{n}" for n in range(chunks)]


class MessageIndexer:
    """Writes and cleans message vectors for one (storage, vector store, embedder) triple; the search of
    :mod:`.search` embeds and names indexes through it."""

    def __init__(
        self,
        storage: MemoryStorage,
        vector: MastraVector,
        embedder: Embedder | None,
        *,
        index_name: str | None = None,
        index_config: IndexConfig | None = None,
        embedder_options: Mapping[str, Any] | None = None,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
    ) -> None:
        self.storage = storage
        self.vector = vector
        self.embedder = embedder
        self.index_name = index_name
        self.index_config = index_config
        self.embedder_options = dict(embedder_options or {})
        self.chunk_size = chunk_size
        self._ensured: set[tuple[str, int]] = set()
        self._ensure_lock = asyncio.Lock()
        #: The store's lexical index (None: it declares none); written and cleaned beside the vectors.
        self.lexical: LexicalIndex | None = lexical_index_for(vector)

    # --- naming and index creation --------------------------------------------------------------

    def index_name_for(self, dimension: int) -> str:
        """The configured name, or the default derived from the real embedding dimension (docs/spec.md
        §5.5)."""
        return self.index_name or default_index_name(dimension, self.vector.index_separator)

    async def ensure_index(self, dimension: int, *, again: bool = False) -> str:
        """Create the index for ``dimension`` once per process (``again=True``: even if it was created
        before, e.g. after someone deleted it); returns its name."""
        name = self.index_name_for(dimension)
        key = (name, dimension)
        if again:
            self._ensured.discard(key)
        if key in self._ensured:
            return name
        async with self._ensure_lock:
            if key not in self._ensured:
                metric = (self.index_config.metric if self.index_config else None) or "cosine"
                await self.vector.create_index(
                    name,
                    dimension,
                    metric=metric,
                    index_config=self.index_config,
                    # message_id: the stale-vector delete of every save filters on it (docs/spec.md §5.4).
                    metadata_indexes=["thread_id", "resource_id", "message_id"],
                )
                self._ensured.add(key)
        return name

    async def message_index_set(self) -> list[str]:
        """Every index that may hold this memory's vectors (docs/spec.md §5.5): the configured name, or all
        default-named indexes of any dimension (so vectors of an earlier embedder are cleaned too)."""
        if self.index_name:
            existing = await self.vector.list_indexes()
            native = self.vector.to_native_index_name(self.index_name)
            return [native] if native in existing else []
        sep = self.vector.index_separator
        base = f"memory{sep}messages"
        return [n for n in await self.vector.list_indexes() if n == base or n.startswith(base + sep)]

    # --- embedding --------------------------------------------------------------------------------

    async def embed(self, texts: Sequence[str]) -> tuple[list[list[float]], int | None]:
        """Embed through the shared cache; EmbeddingError when the embedder fails or returns nothing."""
        if not texts:
            return [], None
        if self.embedder is None:
            raise ConfigError("no embedder configured: pass embedder= to Memory or SemanticRecall")
        try:
            result = await embed_with_cache(self.embedder, list(texts), **self.embedder_options)
        except MastraMemoryError:
            raise
        except Exception as exc:
            raise EmbeddingError(
                f"embedder {getattr(self.embedder, 'model_id', '?')} failed: {exc}",
                details={"model_id": getattr(self.embedder, "model_id", None)},
            ) from exc
        if len(result.embeddings) != len(texts) or not all(result.embeddings):
            raise EmbeddingError(
                f"embedder {getattr(self.embedder, 'model_id', '?')} returned {len(result.embeddings)} "
                f"embeddings for {len(texts)} texts"
            )
        return result.embeddings, result.usage_tokens

    async def undirected(self, name: str, embeddings: Sequence[Sequence[float]]) -> list[int]:
        """Positions of ``embeddings`` that index ``name`` cannot take: zero vectors when it is a cosine
        index (docs/spec.md §3.3). The index is described only when there is a zero vector."""
        if not embeddings:
            return []
        norms = np.linalg.norm(np.asarray(embeddings, dtype=np.float64), axis=1)
        zero = [int(i) for i in np.flatnonzero(norms < MIN_COSINE_NORM)]
        if not zero:
            return []
        try:
            metric = (await self.vector.describe_index(name)).metric
        except IndexNotFoundError:
            name = await self.ensure_index(len(embeddings[0]), again=True)
            metric = (await self.vector.describe_index(name)).metric
        return zero if metric == "cosine" else []

    # --- the write path -------------------------------------------------------------------------

    async def _records(
        self, messages: Iterable[MastraDBMessage], thread_cache: dict[str, Thread | None]
    ) -> list[Record]:
        """The vector records of ``messages`` exactly as the write path builds them (docs/spec.md §5.4):
        one per chunk of each embedded message, with its id and metadata. Reads the threads it lacks."""
        records: list[Record] = []
        for msg in messages:
            if msg.role not in EMBEDDED_ROLES:
                continue
            chunks = chunk_text(message_text(msg), self.chunk_size)
            if not chunks:
                continue
            if msg.thread_id not in thread_cache:
                thread_cache[msg.thread_id] = await self.storage.get_thread_by_id(msg.thread_id)
            thread = thread_cache[msg.thread_id]
            # Thread metadata first (so semantic_recall.filter can match it), minus adapter-reserved keys.
            base: dict[str, Any] = {
                k: v
                for k, v in ((thread.metadata or {}) if thread else {}).items()
                if not k.startswith(RESERVED) and k not in BOOKKEEPING_KEYS
            }
            for n, (vid, chunk) in enumerate(zip(vector_ids(msg.id, len(chunks)), chunks, strict=True)):
                meta = dict(base)
                meta.update(
                    message_id=msg.id,
                    thread_id=msg.thread_id,
                    resource_id=msg.resource_id or (thread.resource_id if thread else None),
                    role=msg.role,
                    content=chunk,
                    created_at=canonical_timestamp(msg.created_at),
                    # Which chunk: the stale-vector delete after a write keeps the chunks just written.
                    chunk_index=n,
                )
                records.append(Record(msg, vid, chunk, meta))
        return records

    async def unindexable(
        self, messages: Iterable[MastraDBMessage], threads: Mapping[str, Thread | None] | None = None
    ) -> dict[str, str]:
        """The messages whose vectors this vector store would refuse, message id → why (docs/spec.md §5.4).

        Checks, without I/O to the vector store, the records :meth:`index_messages` would write: the ids
        (non-empty, at most ``MAX_ID_LENGTH`` characters with the ``#<n>`` chunk suffix, docs/spec.md
        §3.5), every string of the ids and metadata (no unpaired surrogates anywhere; no U+0000 and no
        integer beyond 64 bits where the store declares the ``nul-character-rejected`` / ``int64-range``
        deviation), and the vector template's own id and metadata validation (docs/spec.md §3.3, §3.6).
        Messages that produce no vector (system, signal, blank text) are never listed.
        """
        cache: dict[str, Thread | None] = dict(threads or {})
        by_message: dict[str, list[Record]] = {}
        for rec in await self._records(messages, cache):
            by_message.setdefault(rec.message.id, []).append(rec)
        rules = self._store_rules()
        # Thread metadata is the same in every record of a thread: judged once per thread.
        thread_problems: dict[str, str | None] = {}
        found: dict[str, str] = {}
        for message_id, recs in by_message.items():
            thread_id = recs[0].message.thread_id
            if thread_id not in thread_problems:
                thread_problems[thread_id] = thread_metadata_problem(recs[0].metadata, rules)
            problem = thread_problems[thread_id] or next(
                (p for p in (record_problem(r, rules) for r in recs) if p), None
            )
            if problem is not None:
                found[message_id] = problem
        rest = [rec for message_id, recs in by_message.items() if message_id not in found for rec in recs]
        if rest and self._template_problem(rest) is not None:
            # One check for the whole call; only when it fails, one per message to name the culprits.
            for message_id, recs in by_message.items():
                problem = None if message_id in found else self._template_problem(recs)
                if problem is not None:
                    found[message_id] = problem
        return {m: found[m] for m in by_message if m in found}  # in input order

    async def check_indexable(
        self, messages: Sequence[MastraDBMessage], threads: Mapping[str, Thread | None] | None = None
    ) -> None:
        """Raise ValidationError naming the first message :meth:`unindexable` lists (docs/spec.md §5.4);
        ``Memory.save_messages`` calls it before the storage write, so nothing is stored."""
        bad = await self.unindexable(messages, threads)
        if not bad:
            return
        first, reason = next(iter(bad.items()))
        more = f" (and {len(bad) - 1} more message(s) of this call)" if len(bad) > 1 else ""
        raise ValidationError(
            f"message {shown_id(first)}{more} cannot be indexed for semantic recall: {reason}. Nothing "
            "was stored; fix the message (or leave it out) and save again",
            id="MASTRA_MEMORY_SAVE_MESSAGES_UNINDEXABLE_MESSAGE",
            domain="MEMORY",
            details={"message_ids": list(bad)[:100], "reasons": dict(list(bad.items())[:100])},
        )

    def _store_rules(self) -> StoreRules:
        caps = self.vector.capabilities
        return StoreRules(
            nul=caps.deviation("nul-character-rejected") is not None,
            int64=caps.deviation("int64-range") is not None,
            store=caps.name,
        )

    def thread_metadata_refusal(self, metadata: Mapping[str, Any]) -> tuple[str | None, str] | None:
        """``(key, why)`` when this vector store cannot hold ``metadata`` of a thread in the vector record of
        any message of it, else None (docs/spec.md §5.4). ``key`` is the first top-level key refused on its
        own, or None when only the keys together are refused (a store's size budget).

        Judged on the smallest record a message can have (one-character ids and text), so a refusal here
        means every message of the thread would be refused. No I/O. Metadata beyond the storage's own
        limits (too deep, cyclic, too large) is left to the storage, which refuses it."""
        if metadata_problem(metadata, RECORD_METADATA) is not None:
            return None
        spread = {
            k: v
            for k, v in metadata.items()
            if isinstance(k, str) and not k.startswith(RESERVED) and k not in FIXED_KEYS | BOOKKEEPING_KEYS
        }
        whole = self._smallest_record_problem(spread)
        if whole is None:
            return None
        for key, value in spread.items():
            alone = self._smallest_record_problem({key: value})
            if alone is not None:
                return key, alone
        return None, whole

    def _smallest_record_problem(self, spread: Mapping[str, Any]) -> str | None:
        meta = dict(spread)
        meta.update(
            message_id="m",
            thread_id="t",
            resource_id="r",
            role="user",
            content="x",
            created_at=canonical_timestamp(_EPOCH),
            chunk_index=0,
        )
        problem = thread_metadata_problem(meta, self._store_rules())
        if problem is not None:
            return problem.replace("its thread's metadata", "the thread metadata", 1)
        try:
            self.vector._upsert_arguments("UPSERT", np.ones((1, 1)), [meta], ["m"])
        except ValidationError as exc:
            return shown(exc.message).removeprefix("metadata[0]: ")
        return None

    def _template_problem(self, recs: Sequence[Record]) -> str | None:
        """What the vector template's shared id and metadata validation (the checks ``upsert`` runs
        before any I/O) says about these records, or None. The vectors are stand-ins: only ids and
        metadata are judged here."""
        try:
            self.vector._upsert_arguments(
                "UPSERT", np.ones((len(recs), 1)), [r.metadata for r in recs], [r.id for r in recs]
            )
        except ValidationError as exc:
            return f"the vector store refuses its record ({shown(str(exc))})"
        except RecursionError:  # metadata stored before depth limits existed
            return "its vector metadata is nested too deeply to be stored"
        return None

    async def index_messages(
        self,
        messages: Iterable[MastraDBMessage],
        threads: Mapping[str, Thread | None] | None = None,
        *,
        keep_other_indexes: bool = False,
    ) -> int | None:
        """Embed and upsert the vectors of ``messages`` (docs/spec.md §5.4). Returns provider-reported tokens.

        The new vectors are written first; only then are the old vectors of these messages that were not
        rewritten deleted (chunks beyond a shrunk chunk count, chunks left without a vector), so a write
        that is refused or fails deletes nothing. Stale vectors are deleted in every memory index, or with
        ``keep_other_indexes=True`` (a reindex, the stored messages did not change) only in the index
        written (docs/spec.md §5.6). Messages without text (and system/signal messages) produce no vectors,
        and so does a chunk the embedder turns into a zero vector when the index is a cosine index
        (docs/spec.md §5.4): the message stays stored, a warning names it, and the other chunks are indexed.
        """
        todo = [m for m in messages if m.role in EMBEDDED_ROLES]
        if not todo:
            return None
        records = await self._records(todo, dict(threads or {}))
        ids = [r.id for r in records]
        texts = [r.text for r in records]
        metas = [r.metadata for r in records]
        embeddings, usage = await self.embed(texts)
        # The index is ensured before anything is deleted: a dimension that does not fit an existing
        # index raises IndexDimensionMismatchError while the old vectors are still in place.
        name = await self.ensure_index(len(embeddings[0])) if embeddings else None
        skipped = await self.undirected(name, embeddings) if name is not None else []
        if skipped:
            logger.warning(
                "embedder %s returned a zero vector for %d chunk(s) of message(s) %s; the cosine index %r "
                "cannot hold a vector without direction (docs/spec.md §3.3), so these chunks are stored "
                "but not indexed and semantic recall will not find them",
                getattr(self.embedder, "model_id", "?"),
                len(skipped),
                sorted({metas[i]["message_id"] for i in skipped}),
                name,
            )
            keep = sorted(set(range(len(ids))) - set(skipped))
            ids, embeddings, metas = (
                [ids[i] for i in keep],
                [embeddings[i] for i in keep],
                [metas[i] for i in keep],
            )
        # docs/spec.md §5.4: write before deleting anything, so a refused or failed write loses no vector.
        if name is not None and ids:

            async def upsert(into: str) -> None:
                await vector_call(
                    "upsert",
                    self.vector,
                    into,
                    self.vector.upsert(into, embeddings, metas, ids),
                    count=len(ids),
                )

            try:
                await upsert(name)
            except IndexNotFoundError:
                # Dropped behind our back (delete_index) after it was ensured: create it again, once.
                name = await self.ensure_index(len(embeddings[0]), again=True)
                await upsert(name)
        if name is not None and ids and self.lexical is not None:
            # The text beside each vector, same id and metadata (hybrid recall, docs/memory.md).
            native = self.vector.to_native_index_name(name)
            await self.lexical.upsert(native, ids, [m["content"] for m in metas], metas)
        written: dict[str, set[int]] = {m.id: set() for m in todo}
        for meta in metas:
            written[meta["message_id"]].add(meta["chunk_index"])
        # docs/spec.md §5.6: after a save or an update the text, thread or resource may have changed, so
        # every embedder's old vectors are stale: clean every memory index. A reindex changed nothing
        # stored: only the index it writes is cleaned (a chunk count may shrink); others stay right.
        await self._delete_stale(name, written, [] if keep_other_indexes else None)
        return usage

    async def _delete_stale(
        self, name: str | None, written: Mapping[str, set[int]], others: Sequence[str] | None
    ) -> None:
        """Delete what the write of :meth:`index_messages` left stale (docs/spec.md §5.4): in index
        ``name``, each message's vectors whose ``chunk_index`` is not among those ``written`` (the chunks
        just rewritten stay; vectors written before chunks were numbered have none and go); in the other
        memory indexes (``others``; ``None``: every one), every vector of these messages."""
        message_ids = list(written)
        native = None if name is None else self.vector.to_native_index_name(name)
        if others is None:
            found = await self._cleanup_targets({"message_ids": message_ids})
            others = [index for index in found if index != native]
        if others:
            await self.delete_message_vectors(message_ids, indexes=others)
        if native is None:
            return
        # Messages with the same chunks written share one delete: usually every message has chunks 0..n.
        groups: dict[tuple[int, tuple[int, ...]], list[str]] = {}
        for message_id, chunks in written.items():
            top = max(chunks, default=-1)
            holes = tuple(sorted(set(range(top + 1)) - chunks))
            groups.setdefault((top, holes), []).append(message_id)
        for (top, holes), group in groups.items():
            for start in range(0, len(group), DELETE_BATCH):
                batch = group[start : start + DELETE_BATCH]
                scope: dict[str, Any] = {"message_id": {"$in": batch}}
                beyond = {**scope, "chunk_index": {"$not": {"$lte": top}}} if top >= 0 else scope
                await self._delete_stale_where(native, beyond, batch)
                for first in range(0, len(holes), DELETE_BATCH):  # chunks left without a vector
                    piece = list(holes[first : first + DELETE_BATCH])
                    await self._delete_stale_where(native, {**scope, "chunk_index": {"$in": piece}}, batch)

    async def _delete_stale_where(self, index: str, flt: dict[str, Any], message_ids: list[str]) -> None:
        what = f"stale vectors of {len(message_ids)} messages"
        await self._delete_where(
            index, flt, what, "their new vectors are written", {"message_ids": message_ids}
        )

    async def _delete_where(
        self, index: str, flt: dict[str, Any], what: str, done: str, details: dict[str, Any]
    ) -> None:
        """Delete the vectors ``flt`` matches in ``index``; a store error is a ``VectorCleanupError`` that
        says ``what`` was being deleted, what is ``done`` already, and to retry."""
        try:
            await vector_call(
                "delete_vectors", self.vector, index, self.vector.delete_vectors(index, filter=flt)
            )
            node = parse_filter(flt)
            if self.lexical is not None and node is not None:  # the lexical rows go with their vectors
                await self.lexical.delete(index, node)
        except MastraMemoryError as exc:
            raise VectorCleanupError(
                f"deleting {what} from index {index!r} failed: {exc}; {done}, retry the same call",
                details={"index": index, **details},
            ) from exc

    # --- cleanup ----------------------------------------------------------------------------------

    async def _cleanup_targets(self, details: dict[str, Any]) -> list[str]:
        try:
            return await self.message_index_set()
        except MastraMemoryError as exc:
            raise VectorCleanupError(
                f"listing the memory indexes for cleanup failed: {exc}; {_STORAGE_UPDATED}, retry the "
                "same call",
                details=details,
            ) from exc

    async def delete_message_vectors(
        self, message_ids: Sequence[str], *, indexes: Sequence[str] | None = None
    ) -> None:
        """Delete every vector of these messages in every memory index, or in ``indexes`` when given
        (batches of 100 ids)."""
        if not message_ids:
            return
        if indexes is None:
            indexes = await self._cleanup_targets({"message_ids": list(message_ids)})
        for index in indexes:
            for start in range(0, len(message_ids), DELETE_BATCH):
                batch = list(message_ids[start : start + DELETE_BATCH])
                what = f"vectors of {len(batch)} messages"
                flt = {"message_id": {"$in": batch}}
                await self._delete_where(index, flt, what, _STORAGE_UPDATED, {"message_ids": batch})

    async def delete_thread_vectors(self, thread_id: str) -> None:
        """Delete every vector of a thread in every memory index."""
        for index in await self._cleanup_targets({"thread_id": thread_id}):
            what = f"vectors of thread {thread_id!r}"
            flt = {"thread_id": thread_id}
            await self._delete_where(index, flt, what, _STORAGE_UPDATED, {"thread_id": thread_id})
