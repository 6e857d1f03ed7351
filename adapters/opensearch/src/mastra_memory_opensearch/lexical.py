"""Hybrid recall's lexical side on OpenSearch: BM25 over a sibling index of each vector index
(``lexical_search``).

Layout. Beside the vector index ``<index_prefix><name>`` lives ``<index_prefix><name>-lexical`` (a portable
index name has no ``-``, so it is never another vector index's name), created by the first write or search
and filled then with the texts the vector index already holds (:meth:`OpenSearchLexicalIndex._fill`). Its
mapping is the vector index's (:func:`~.layout.index_mapping`: ``record_id``, the metadata as JSON text and
the same derived filter fields) without the ``knn_vector`` and with ``content``, a ``text`` field with the
``english`` analyzer (stemming, stop words), which OpenSearch ranks by BM25. It carries no
``_meta.mastra_memory``, so ``list_indexes`` never shows it; it is deleted
with its vector index. A sibling index rather than a field of the vector documents: writing the text into
them would re-insert each vector into the HNSW graph.

Filters. A lexical document's filter fields are built from the metadata exactly as a vector document's
(:func:`~.layout.metadata_fields`), and the filter is the vector store's own translation
(:mod:`.translate`), so tenant scope and ``semanticRecall.filter`` keep exactly the documents they keep on
the vector side (docs/spec.md §5.3 step 7.3).

Queries. User text is never query syntax: its distinct words (``\\w+``, at most 64) go into a ``match``
query (``operator: or``), which analyzes text and has no operators; hits are sorted by BM25 score, ties by
``record_id``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from mastra_memory.errors import IndexNotFoundError
from mastra_memory.filters.ast import Node
from mastra_memory.memory.index.lexical import LexicalHit, StoreLexicalIndex, query_words
from opensearchpy.exceptions import NotFoundError, TransportError

from .layout import METADATA_FIELD, RECORD_ID_FIELD, VECTOR_FIELD, index_mapping, metadata_fields, metadata_of
from .translate import MATCH_ALL, MATCH_NONE, OpenSearchFilterTranslator

logger = logging.getLogger("mastra_memory_opensearch.lexical")

if TYPE_CHECKING:
    from .store import OpenSearchVector

__all__ = ["CONTENT_FIELD", "LEXICAL_SUFFIX", "OpenSearchLexicalIndex", "lexical_mapping", "query_words"]

#: The suffix of a vector index's sibling (``-`` never occurs in a portable index name).
LEXICAL_SUFFIX: Final = "-lexical"
CONTENT_FIELD: Final = "content"
#: The analyzer of ``content`` and of the queries (stemming, stop words), from the analysis-common module
#: every OpenSearch distribution bundles.
ANALYZER: Final = "english"
#: The analyzer of a node without analysis-common (a bare embedded node, as the kit's native one): the
#: core's standard analyzer with English stop words, no stemming.
FALLBACK_ANALYZER: Final = "mastra_lexical_standard"
_FALLBACK_ANALYSIS: Final = {"analyzer": {FALLBACK_ANALYZER: {"type": "standard", "stopwords": "_english_"}}}
#: The ``_meta`` key marking a sibling index (not ``mastra_memory``: it is no vector index).
LEXICAL_META_KEY: Final = "mastra_memory_lexical"
_SOURCE: Final = [RECORD_ID_FIELD, METADATA_FIELD]
#: Vector documents read per request when a sibling is first filled.
_COPY_PAGE: Final = 500


def lexical_mapping(analyzer: str = ANALYZER) -> dict[str, Any]:
    """The sibling's mapping: the vector index's filter fields and metadata, ``content``, no vector."""
    mapping = index_mapping(1, "l2", 16, 100, {LEXICAL_META_KEY: {"analyzer": analyzer}})
    del mapping["properties"][VECTOR_FIELD]
    mapping["properties"][CONTENT_FIELD] = {"type": "text", "analyzer": analyzer}
    return mapping


class OpenSearchLexicalIndex(StoreLexicalIndex["OpenSearchVector"]):
    """BM25 search over the texts written beside an :class:`~.store.OpenSearchVector`'s indexes.

    Made by ``OpenSearchVector.lexical_index()``; it uses the store's client and settings. ``index`` is the
    vector index's name as the store's hooks receive it (without ``index_prefix``).
    """

    store_name = "OpenSearch"

    def __init__(self, vector: OpenSearchVector) -> None:
        super().__init__(vector)
        self._ready: set[str] = set()

    @staticmethod
    def sibling(index: str) -> str:
        """The sibling's name as the store's hooks take it (``index_prefix`` is added by the store)."""
        return index + LEXICAL_SUFFIX

    async def _ensure(self, store: OpenSearchVector, index: str) -> None:
        if index in self._ready:
            return
        from .store import NESTED_LIMIT

        settings: dict[str, Any] = {
            "number_of_shards": store.settings.shards,
            "mapping.nested_objects.limit": NESTED_LIMIT,
        }
        if store.settings.replicas is not None:
            settings["number_of_replicas"] = store.settings.replicas
        name = store._index(self.sibling(index))
        body = {"settings": {"index": settings}, "mappings": lexical_mapping()}
        fallback = {
            "settings": {"index": settings, "analysis": _FALLBACK_ANALYSIS},
            "mappings": lexical_mapping(FALLBACK_ANALYZER),
        }
        for attempt in (body, fallback):
            try:
                await store.client.indices.create(index=name, body=attempt)
                break
            except TransportError as exc:
                reply = json.dumps(exc.info, default=str)
                if "resource_already_exists_exception" in reply:
                    break
                if attempt is body and f"analyzer [{ANALYZER}] has not been configured" in reply:
                    logger.info(
                        "OpenSearch has no %r analyzer (analysis-common); %s uses %s",
                        ANALYZER,
                        name,
                        FALLBACK_ANALYZER,
                    )
                    continue
                raise store._typed("LEXICAL_UPSERT", index, exc) from exc
        await self._fill(store, index, name)
        self._ready.add(index)

    async def _fill(self, store: OpenSearchVector, index: str, name: str) -> None:
        """Copy, once, the texts the vector index already holds into its sibling (each chunk's text is in
        its metadata as ``content``; the vector documents carry the same filter fields), then mark the
        sibling ``filled`` in its ``_meta``: vectors written before hybrid recall existed need no reindex,
        and a copy cut short is made again by the next process."""
        reply = await store._send("LEXICAL_UPSERT", index, store.client.indices.get_mapping(index=name))
        meta = dict(
            ((reply.get(name, {}).get("mappings", {}).get("_meta")) or {}).get(LEXICAL_META_KEY) or {}
        )
        if meta.get("filled"):
            return
        body: dict[str, Any] = {
            "size": _COPY_PAGE,
            "_source": {"excludes": [VECTOR_FIELD]},
            "query": MATCH_ALL,
            "sort": [{RECORD_ID_FIELD: "asc"}],
        }
        while True:
            try:
                hits = await store._search(index, body)
            except IndexNotFoundError:
                break  # no vector index (yet): nothing to copy
            lines: list[tuple[str, str | None]] = []
            for hit in hits:
                source = hit["_source"]
                content = metadata_of(source).get("content")
                if isinstance(content, str):
                    action = json.dumps({"index": {"_index": name, "_id": hit["_id"]}}, ensure_ascii=False)
                    document = {**source, CONTENT_FIELD: content}
                    lines.append((action, json.dumps(document, ensure_ascii=False, allow_nan=False)))
            if lines:
                await store._bulk("LEXICAL_UPSERT", self.sibling(index), lines)
            if len(hits) < _COPY_PAGE:
                break
            body["search_after"] = hits[-1]["sort"]
        mapping = {"_meta": {LEXICAL_META_KEY: {**meta, "filled": True}}}
        await store._send("LEXICAL_UPSERT", index, store.client.indices.put_mapping(index=name, body=mapping))

    # --- writes -----------------------------------------------------------------------------------

    async def upsert(
        self, index: str, ids: Sequence[str], texts: Sequence[str], metadata: Sequence[Mapping[str, Any]]
    ) -> None:
        """Insert or replace one document per id (the text searched and the metadata filtered on)."""
        if not ids:
            return
        from .store import document_id

        store = self._store()
        await self._ensure(store, index)
        native = store._index(self.sibling(index))
        lines: list[tuple[str, str | None]] = []
        for rid, text, meta in zip(ids, texts, metadata, strict=True):
            source = {RECORD_ID_FIELD: rid, CONTENT_FIELD: text, **metadata_fields(meta)}
            action = json.dumps({"index": {"_index": native, "_id": document_id(rid)}}, ensure_ascii=False)
            lines.append((action, json.dumps(source, ensure_ascii=False, allow_nan=False)))
        await store._bulk("LEXICAL_UPSERT", self.sibling(index), lines)

    async def delete(self, index: str, flt: Node) -> int:
        """Delete the documents ``flt`` matches (the vector side's filter, translated the same way). The
        count is not reported (0); nothing happens when the sibling was never written."""
        query = OpenSearchFilterTranslator().translate(flt)
        if query == MATCH_NONE:
            return 0
        store = self._store()
        try:
            await store._by_query(
                "LEXICAL_DELETE", self.sibling(index), store.client.delete_by_query, {"query": query}
            )
        except IndexNotFoundError:
            return 0
        return 0

    async def drop(self, index: str) -> None:
        """Delete the sibling index (with its vector index)."""
        store = self._store()
        self._ready.discard(index)
        try:
            await store.client.indices.delete(index=store._index(self.sibling(index)))
        except NotFoundError:
            return
        except TransportError as exc:
            raise store._typed("DELETE_INDEX", index, exc) from exc

    # --- search -----------------------------------------------------------------------------------

    async def search(self, index: str, query: str, *, top_k: int, flt: Node | None) -> list[LexicalHit]:
        """The ``top_k`` documents ``flt`` keeps, best BM25 first (ties by ``record_id``). Nothing for a
        query without a word, or before the first write."""
        words = query_words(query)
        if not words or top_k < 1:
            return []
        clause = OpenSearchFilterTranslator().translate(flt) if flt is not None else MATCH_ALL
        if clause == MATCH_NONE:
            return []
        match = {"match": {CONTENT_FIELD: {"query": " ".join(words), "operator": "or"}}}
        filters = [] if clause == MATCH_ALL else [clause]
        body = {
            "size": top_k,
            "_source": _SOURCE,
            "query": {"bool": {"must": [match], "filter": filters}},
            "sort": [{"_score": "desc"}, {RECORD_ID_FIELD: "asc"}],
            "track_scores": True,
        }
        store = self._store()
        await self._ensure(store, index)  # created and filled by the first search too
        hits = await store._search(self.sibling(index), body)
        return [
            LexicalHit(str(h["_source"][RECORD_ID_FIELD]), float(h["_score"]), metadata_of(h["_source"]))
            for h in hits
        ]
