"""The semantic search of recall (docs/spec.md §5.3 step 7, §6.2 steps 4-6), shared by both paths.

:func:`recall_filter` combines the scope (``thread_id`` or ``resource_id``) with the configuration's
already parsed ``semantic_recall.filter`` into one AST node; :func:`search_messages` embeds the query's
chunks, has the vector store translate that node once, queries every chunk embedding concurrently with
it, keeps the best score per message and applies the threshold. :func:`search_resource_messages` is
``Memory.semantic_search_messages``: the same search scoped to a resource, its hits read back from storage.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Required, TypedDict

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from ...errors import FilterError, IndexNotFoundError
from ...filters import And, Comparison, ElemMatch, Node, Not, Regex
from ...messages import MastraDBMessage
from ...metadata_limits import is_unicode
from ...storage import MemoryStorage
from ...tracing import vector_call
from ...vector import QueryResult
from ..config import MemoryConfig, RecallMode, Scope, SemanticRecallConfig
from ..index.chunking import chunk_text
from ..index.indexer import MessageIndexer
from ..index.lexical import require_lexical, resolve_mode
from ..results import Usage, usage
from .fusion import CANDIDATES, fuse, fusion_for

# The zero-vector warning keeps the logger of the write path (docs/spec.md §5.4 names it).
logger = logging.getLogger("mastra_memory.indexing")


@dataclass(frozen=True, slots=True)
class Hit:
    """One semantic match: the message it belongs to, its best score and the thread it was found in."""

    message_id: str
    thread_id: str | None
    score: float


@dataclass(slots=True)
class SearchResult:
    """What one search found (best first), the index it searched, and provider-reported tokens."""

    hits: list[Hit]
    index_name: str | None
    usage_tokens: int | None


def recall_filter(
    scope: Scope, thread_id: str, resource_id: str | None, config: SemanticRecallConfig
) -> Node:
    """``resource_id == <resource>`` in resource scope, else ``thread_id == <thread>``, AND the configured
    filter (docs/spec.md §5.3 step 7.3): one node built from the configuration's parsed filter, nothing
    parsed again.

    The caller has checked that resource scope has a ``resource_id`` (docs/spec.md §5.3 step 6, §6.2 step 3).
    """
    field, value = ("resource_id", resource_id) if scope == "resource" else ("thread_id", thread_id)
    if isinstance(value, str) and not is_unicode(value):  # what parsing a filter would have refused
        raise FilterError(
            [f"Invalid string: {field} (unpaired surrogate; filter text must be valid Unicode)"]
        )
    comparison = Comparison((field,), "$eq", value)
    user = config.filter_node
    refuse_metadata_prefix(user)
    return comparison if user is None else And((comparison, user))


def refuse_metadata_prefix(node: Node | None) -> None:
    """Raise a :class:`FilterError` that says to drop the prefix when a field of ``node`` starts with
    ``metadata``.

    Every vector carries the thread's metadata spread at its top level next to ``thread_id``, ``role`` and
    the other fixed keys (docs/spec.md §5.4), and none of them is called ``metadata``, so
    ``{"metadata.project": ...}`` could only ever match nothing -- silently (Mastra's behaviour). Refused
    before anything is embedded (docs/spec.md §5.3 step 7.3, [Δ]); the one cost: a thread metadata key
    named ``metadata`` cannot be filtered on.
    """
    pending = [] if node is None else [node]
    while pending:
        current = pending.pop()
        if isinstance(current, Comparison | Regex | ElemMatch):  # an $elemMatch's condition is per element
            if current.path[:1] == ("metadata",):
                field = ".".join(current.path)
                bare = ".".join(current.path[1:]) or "<key>"
                raise FilterError(
                    [
                        f"Invalid field: {field} (a memory filter addresses thread metadata keys at the top "
                        f"level, beside thread_id, resource_id and role: write {bare!r}, not {field!r})"
                    ],
                    id="MASTRA_MEMORY_FILTER_METADATA_PREFIX",
                    details={"field": field, "suggested": bare},
                )
        elif isinstance(current, Not):
            pending.append(current.child)
        else:
            pending.extend(current.children)


async def search_messages(
    indexer: MessageIndexer,
    query: str,
    *,
    top_k: int,
    flt: Node,
    threshold: float | None,
    mode: RecallMode = "auto",
) -> SearchResult:
    """Embed each chunk of ``query``, query concurrently, keep the best score per message, apply
    ``threshold`` (``score >= threshold``). docs/spec.md §5.3 step 7.

    ``flt`` (from :func:`recall_filter`) is translated once for all the chunk queries. ``mode="auto"`` is
    ``"hybrid"`` where the store has a lexical index (and is not on Mastra's layout), else ``"vector"``
    (``resolve_mode`` in :mod:`..index.lexical`). ``mode="hybrid"`` also searches the store's lexical
    index with the same filter and fuses the two rankings (:mod:`.fusion`): the order is the fused one,
    the scores (and ``threshold``) stay cosine. A store without a lexical index refuses that mode with
    ``CapabilityError`` before anything is embedded.
    """
    if resolve_mode(indexer.vector, mode) == "hybrid":
        return await _hybrid(indexer, query, top_k=top_k, flt=flt, threshold=threshold)
    chunks = chunk_text(query, indexer.chunk_size)
    if not chunks:
        return SearchResult([], None, None)
    embeddings, usage = await indexer.embed(chunks)
    dimension = len(embeddings[0])
    name = await indexer.ensure_index(dimension)
    skipped = await indexer.undirected(name, embeddings)
    if skipped:
        # A query without direction is similar to nothing on a cosine index (docs/spec.md §3.3, §5.4).
        logger.warning(
            "embedder %s returned a zero vector for %d of %d chunk(s) of the recall query; the cosine "
            "index %r cannot be searched with it, so those chunks find nothing",
            getattr(indexer.embedder, "model_id", "?"),
            len(skipped),
            len(embeddings),
            name,
        )
        dropped = set(skipped)
        embeddings = [e for i, e in enumerate(embeddings) if i not in dropped]
        if not embeddings:
            return SearchResult([], name, usage)
    vector = indexer.vector
    translated = vector.prepare_filter(flt)  # once per search, not once per chunk query

    async def query_all(index: str) -> list[list[QueryResult]]:
        return await asyncio.gather(
            *(
                vector_call(
                    "query",
                    vector,
                    index,
                    vector.query(index, emb, top_k=top_k, filter=translated),
                    top_k=top_k,
                )
                for emb in embeddings
            )
        )

    try:
        results = await query_all(name)
    except IndexNotFoundError:
        name = await indexer.ensure_index(dimension, again=True)
        results = await query_all(name)
    return SearchResult(_best_hits(results, threshold), name, usage)


async def _hybrid(
    indexer: MessageIndexer, query: str, *, top_k: int, flt: Node, threshold: float | None
) -> SearchResult:
    """Hybrid recall: the vector and the lexical candidates (same filter), fused (:mod:`.fusion`), cut to
    ``top_k``. Each hit keeps the embedder's cosine score, so ``threshold`` means what it means in mode
    ``vector``; a message only the lexical side found gets its score from one more vector query limited to
    those ids (the fused order is kept)."""
    lexical = require_lexical(indexer.vector)  # before anything is embedded: the refusal does no I/O
    found = await search_messages(
        indexer, query, top_k=max(top_k, CANDIDATES), flt=flt, threshold=None, mode="vector"
    )
    if found.index_name is None:
        return found
    native = indexer.vector.to_native_index_name(found.index_name)
    rows = await lexical.search(native, query, top_k=CANDIDATES, flt=flt)
    cosine = {h.message_id: h for h in found.hits}
    words: dict[str, float] = {}
    for row in rows:
        message_id = row.metadata.get("message_id")
        if isinstance(message_id, str) and message_id not in words:  # the best chunk comes first
            words[message_id] = row.score
    method = fusion_for(getattr(indexer.embedder, "model_id", None))  # measured per embedder (.fusion)
    vector_ranking = [(h.message_id, h.score) for h in found.hits]
    chosen = [mid for mid, _ in fuse(vector_ranking, list(words.items()), method)]
    chosen = chosen[:top_k]
    missing = tuple(mid for mid in chosen if mid not in cosine)
    if missing:
        only_ids = And((flt, Comparison(("message_id",), "$in", missing)))
        extra = await search_messages(
            indexer, query, top_k=len(missing) * 8, flt=only_ids, threshold=None, mode="vector"
        )
        cosine.update((h.message_id, h) for h in extra.hits)
    hits = [cosine[mid] for mid in chosen if mid in cosine]
    if threshold is not None:
        hits = [h for h in hits if h.score >= threshold]
    return SearchResult(hits, found.index_name, found.usage_tokens)


def _best_hits(results: list[list[QueryResult]], threshold: float | None) -> list[Hit]:
    """The union of every chunk's hits, best score per message, best first (docs/spec.md §5.3 step 7.5)."""
    best: dict[str, Hit] = {}
    for hits in results:
        for r in hits:
            message_id = r.metadata.get("message_id")
            if not isinstance(message_id, str):
                continue
            current = best.get(message_id)
            if current is None or r.score > current.score:
                thread_id = _thread_of(r.metadata)
                best[message_id] = Hit(message_id, thread_id, r.score)
    ordered = sorted(best.values(), key=lambda h: (-h.score, h.message_id))
    if threshold is not None:
        ordered = [h for h in ordered if h.score >= threshold]
    return ordered


def _thread_of(metadata: Mapping[str, Any]) -> str | None:
    thread_id = metadata.get("thread_id")
    return thread_id if isinstance(thread_id, str) else None


# --- search over a resource's messages, without a thread (Memory.semantic_search_messages) ------


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class MessageSearchHit(_Model):
    """One message `Memory.semantic_search_messages` found, with its best score (docs/spec.md §5.10)."""

    message: MastraDBMessage
    score: float
    thread_id: str


class MessageSearchResult(_Model):
    """What `Memory.semantic_search_messages` returns: hits best first, the index searched, embedding
    usage."""

    hits: list[MessageSearchHit]
    index_name: str | None = None
    usage: Usage | None = None

    @property
    def messages(self) -> list[MastraDBMessage]:
        """The messages of `hits`, best first."""
        return [h.message for h in self.hits]


class SemanticSearchOptions(TypedDict, total=False):
    """The keyword arguments of :meth:`Memory.semantic_search_messages`, which its deprecated alias
    ``search_messages`` takes as they are."""

    resource_id: Required[str]
    thread_id: str | None
    filter: Mapping[str, Any] | None
    top_k: int
    threshold: float | None
    thread_config: MemoryConfig | Mapping[str, Any] | None


def resource_search_filter(
    resource_id: str, thread_id: str | None, config_node: Node | None, call_node: Node | None
) -> Node:
    """``resource_id == <resource>`` [AND ``thread_id == <thread>``] AND the configured AND the call's
    filter: the scope is a conjunct, so no filter can widen the search to another resource."""
    parts: list[Node] = [Comparison(("resource_id",), "$eq", resource_id)]
    if thread_id is not None:
        parts.append(Comparison(("thread_id",), "$eq", thread_id))
    for node in (config_node, call_node):
        if node is not None:
            refuse_metadata_prefix(node)
            parts.append(node)
    return parts[0] if len(parts) == 1 else And(tuple(parts))


async def search_resource_messages(
    storage: MemoryStorage,
    indexer: MessageIndexer,
    query: str,
    *,
    resource_id: str,
    thread_id: str | None,
    flt: Node,
    top_k: int,
    threshold: float | None,
    mode: RecallMode = "auto",
) -> MessageSearchResult:
    """Search (in ``mode``, as recall does), then read the hits' messages from storage and keep only those
    the resource (and thread, when given) owns now: storage is the source of truth, so a vector with stale
    metadata (a message since moved or deleted) never leaks a message of another resource."""
    found = await search_messages(indexer, query, top_k=top_k, flt=flt, threshold=threshold, mode=mode)
    stored = (
        {m.id: m for m in await storage.list_messages_by_id([h.message_id for h in found.hits])}
        if found.hits
        else {}
    )
    hits = [
        MessageSearchHit(message=m, score=h.score, thread_id=m.thread_id)
        for h in found.hits
        if (m := stored.get(h.message_id)) is not None
        and m.resource_id == resource_id
        and (thread_id is None or m.thread_id == thread_id)
    ]
    return MessageSearchResult(hits=hits, index_name=found.index_name, usage=usage(found.usage_tokens))
