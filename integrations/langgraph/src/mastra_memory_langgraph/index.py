"""The semantic index of a ``MastraStore``: LangGraph's ``index`` config on any ``MastraVector``.

``index={"dims": ..., "embed": ..., "fields": [...]}`` means what it means for LangGraph's own stores:
each path of ``fields`` (default ``["$"]``, the whole value) is read with LangGraph's ``get_text_at_path``
(``a.b``, ``list[*].text``), one vector per text, and a search scores an item by its best vector (max
pooling). ``embed`` is anything LangGraph accepts (a LangChain ``Embeddings``, a sync or async function) or
a mastra-memory embedder: a model-router string with a ``/`` (``"local/wordllama"``, ``"hash/64"``) or an
object with ``embed_many``.

The vectors of an item are ``<item id>:<n>`` in one cosine index (``index_name``); their metadata carries
the store's scope and the namespace labels, one key each, so a search asks the vector store itself for the
namespace prefix with ``$eq`` terms of our filter language (docs/spec.md §2.3), which every adapter
expresses exactly. Scores are cosine similarities (docs/spec.md §3.4), as LangGraph's stores report.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from langgraph.store.base import Embeddings, ensure_embeddings, get_text_at_path, tokenize_path
from mastra_memory import ConfigError, MastraVector
from mastra_memory.embedders.base import Embedder
from mastra_memory.embedders.router import resolve_embedder

from .items import label_key

__all__ = ["SCOPE_KEY", "SOURCE_KEY", "SemanticIndex", "VectorHit"]

SCOPE_KEY = "lg_scope"
SOURCE_KEY = "lg_item"
_FIELD_KEY = "lg_field"
# Below this length a cosine index refuses a vector (docs/spec.md §3.3, zero vectors); such a text can
# score nothing against any query, so it is simply not indexed.
_MIN_NORM = 1.1e-19


class _MastraEmbeddings:
    """A mastra-memory ``Embedder`` seen through the two calls the index makes."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        size = max(1, int(getattr(self._embedder, "max_batch_size", 64) or 64))
        for start in range(0, len(texts), size):
            result = await self._embedder.embed_many(texts[start : start + size])
            vectors.extend(list(map(float, v)) for v in result.embeddings)
        return vectors

    async def aembed_query(self, text: str) -> list[float]:
        return (await self.aembed_documents([text]))[0]


def _embeddings(embed: Any) -> Any:
    if (isinstance(embed, str) and "/" in embed) or hasattr(embed, "embed_many"):
        return _MastraEmbeddings(resolve_embedder(embed))
    return ensure_embeddings(cast("Embeddings | Callable[..., Any] | str", embed))


class VectorHit:
    """The best score of one item among its vectors."""

    __slots__ = ("item_id", "score")

    def __init__(self, item_id: str, score: float) -> None:
        self.item_id = item_id
        self.score = score


class SemanticIndex:
    """Embeds item texts into a ``MastraVector`` index and answers semantic searches over it."""

    def __init__(self, vector: MastraVector, config: Mapping[str, Any], index_name: str) -> None:
        dims = config.get("dims")
        if not isinstance(dims, int) or isinstance(dims, bool) or dims <= 0:
            raise ConfigError(f'index["dims"] must be a positive int, got {dims!r}', domain="LANGGRAPH")
        if config.get("embed") is None:
            raise ConfigError(
                'index["embed"] is required: an Embeddings, a function or "local/wordllama"',
                domain="LANGGRAPH",
            )
        self.vector = vector
        self.dims = dims
        self.index_name = index_name
        self.embeddings = _embeddings(config["embed"])
        fields = config.get("fields") or ["$"]
        self.fields: list[tuple[str, Any]] = [(p, p if p == "$" else tokenize_path(p)) for p in fields]
        self._created = False

    # --- texts --------------------------------------------------------------------------------------

    def texts(self, value: Mapping[str, Any], index: Sequence[str] | bool | None) -> list[tuple[str, str]]:
        """(path, text) pairs to embed, as LangGraph's stores pick them (``index=False``: none)."""
        if index is False:
            return []
        paths = self.fields if index is None or index is True else [(p, tokenize_path(p)) for p in index]
        out: list[tuple[str, str]] = []
        for path, tokens in paths:
            found = get_text_at_path(dict(value), tokens)
            if len(found) > 1:
                out.extend((f"{path}.{i}", text) for i, text in enumerate(found))
            elif found:
                out.append((path, found[0]))
        return out

    async def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return [list(v) for v in await self.embeddings.aembed_documents(texts)]

    async def embed_query(self, text: str) -> list[float]:
        return list(await self.embeddings.aembed_query(text))

    # --- vectors ------------------------------------------------------------------------------------

    async def ensure(self) -> None:
        if not self._created:
            await self.vector.create_index(self.index_name, self.dims, "cosine")
            self._created = True

    async def write(
        self,
        scope: str,
        item: str,
        namespace: Sequence[str],
        paths: Sequence[str],
        vectors: Sequence[Sequence[float]],
        previous: int,
    ) -> int:
        """Replace an item's vectors (``previous`` of them were stored); returns how many are stored now."""
        await self.ensure()
        kept = [(p, v) for p, v in zip(paths, vectors, strict=True) if math.hypot(*v) >= _MIN_NORM]
        if kept:
            labels = {label_key(i): label for i, label in enumerate(namespace)}
            await self.vector.upsert(
                self.index_name,
                [list(v) for _, v in kept],
                metadata=[{SCOPE_KEY: scope, SOURCE_KEY: item, _FIELD_KEY: p, **labels} for p, _ in kept],
                ids=[f"{item}:{n}" for n in range(len(kept))],
            )
        await self.remove(item, previous, keep=len(kept))
        return len(kept)

    async def remove(self, item: str, count: int, keep: int = 0) -> None:
        """Delete the vectors ``keep`` … ``count - 1`` of an item."""
        if count > keep:
            await self.ensure()
            await self.vector.delete_vectors(self.index_name, ids=[f"{item}:{n}" for n in range(keep, count)])

    async def search(
        self,
        scope: str,
        prefix: Sequence[str],
        query: list[float],
        wanted: int,
        allowed: Mapping[str, Any],
    ) -> tuple[list[VectorHit], bool]:
        """The best ``wanted`` items among ``allowed`` (item ids), best first, and whether the index was
        read to its end (then items missing from the hits have no vector).

        The vector store filters by scope and namespace prefix; which of those items a LangGraph
        ``filter`` keeps was decided from the storage (``allowed``): when they are few the query names
        them (``$in``), otherwise it reads more hits until ``wanted`` allowed items are found or the
        index has none left, so the answer is exact either way.
        """
        await self.ensure()
        where: dict[str, Any] = {SCOPE_KEY: scope, **{label_key(i): p for i, p in enumerate(prefix)}}
        if len(allowed) <= 256:
            where[SOURCE_KEY] = {"$in": sorted(allowed)}
        top_k = max(4 * wanted, 16)
        while True:
            results = await self.vector.query(self.index_name, query, top_k=top_k, filter=where)
            hits: list[VectorHit] = []
            seen: set[str] = set()
            for r in results:
                source = r.metadata.get(SOURCE_KEY)
                if isinstance(source, str) and source in allowed and source not in seen:
                    seen.add(source)
                    hits.append(VectorHit(source, float(r.score)))
            exhausted = len(results) < top_k
            if len(hits) >= wanted or exhausted:
                return hits[:wanted], exhausted
            top_k *= 4
