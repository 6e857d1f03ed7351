"""Hybrid recall's lexical side on LanceDB: Lance's native full-text search (BM25) over a sibling table of
each vector table (``lexical_search``).

Layout. Beside the table ``<name>`` lives ``<name>-lexical`` (a portable index name has no ``-``, so it is
never another index; ``list_indexes`` leaves it out), created by the first write or search with, in the
same commit, the texts the vector table already holds (each chunk's text is in its metadata as
``content``), so vectors written before hybrid recall existed need no reindex. Columns: ``id``,
``content`` (the text searched), ``metadata`` (JSON text), ``_mastra_json`` (the same document as JSONB,
what filters read, as in the vector table: :mod:`.layout`) and the vector table's index columns (one per
indexed key: filters on those keys resolve in SQL; a sibling made without them is rebuilt). An ``FTS``
inverted index on ``content`` (Lance's own, no tantivy: English stemming, stop words, lower case, ASCII
folding) is built at the first write or search; rows written after it are searched too (Lance scans the
unindexed rows), and the table is optimised every ``optimize_every`` writes, which indexes them.

Filters. The vector store's own translation (:mod:`.translate`) over ``_mastra_json``, resolved exactly as
the vector side resolves it (:meth:`~.store.LanceDBVector._decided`: rows SQL cannot decide are judged by the
reference evaluator) and applied as a *prefilter* of the full-text search, so the ``top_k`` are the best among
the rows the filter keeps (docs/spec.md §5.3 step 7.3).

Queries. Lance parses no syntax in a plain text query (it becomes one match query over the tokens); still,
only the distinct words (``\\w+``, at most 64) of the text are sent. Scores are Lance's BM25 ``_score``, ties
by id.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import pyarrow as pa
from lancedb.index import FTS
from mastra_memory.errors import IndexNotFoundError
from mastra_memory.filters import matches
from mastra_memory.filters.ast import Node
from mastra_memory.memory.index.lexical import LexicalHit, StoreLexicalIndex, query_words

from .layout import INDEX_PREFIX, JSON_FIELD, TableInfo, metadata_json, string_values
from .translate import FALSE, TRUE, LanceDBTranslator, LanceFilter, sql_string
from .translate import JSON_COLUMN as _JSON

if TYPE_CHECKING:
    from .store import LanceDBVector

__all__ = ["LEXICAL_SUFFIX", "LanceDBLexicalIndex", "is_lexical_table", "query_words"]

logger = logging.getLogger("mastra_memory_lancedb.lexical")

#: The suffix of a vector table's sibling (``-`` never occurs in a portable index name).
LEXICAL_SUFFIX: Final = "-lexical"
CONTENT: Final = "content"
SCHEMA: Final = pa.schema(
    [
        pa.field("id", pa.utf8(), nullable=False),
        pa.field(CONTENT, pa.utf8(), nullable=False),
        pa.field("metadata", pa.utf8(), nullable=False),
        JSON_FIELD,
    ]
)
_DELETE_CHUNK: Final = 1000


def _schema(keys: Sequence[str]) -> pa.Schema:
    """The sibling's columns: :data:`SCHEMA` and, as in its vector table (:func:`.layout.schema`), one index
    column per indexed key, so a filter on those keys resolves exactly in SQL instead of by reading every
    row's JSON (the stale-row delete of every save: 9–18 ms a save at a few hundred rows without them,
    growing with the table; docs/performance.md)."""
    fields = [
        pa.field(f"{INDEX_PREFIX}{i}", pa.list_(pa.utf8()), nullable=False, metadata={"mastra.key": key})
        for i, key in enumerate(keys)
    ]
    return pa.schema([*SCHEMA, *fields])


def _rows(ids: list[str], texts: list[str], documents: list[str], keys: Sequence[str]) -> pa.Table:
    columns: dict[str, Any] = {
        "id": pa.array(ids, pa.utf8()),
        CONTENT: pa.array(texts, pa.utf8()),
        "metadata": pa.array(documents, pa.utf8()),
        _JSON: pa.array(documents, pa.json_(pa.utf8())),
    }
    if keys:
        parsed = [json.loads(d) for d in documents]
        for i, key in enumerate(keys):
            columns[f"{INDEX_PREFIX}{i}"] = pa.array(
                [string_values(d.get(key)) for d in parsed], pa.list_(pa.utf8())
            )
    return pa.table(columns, schema=_schema(keys))


def _translator(info: TableInfo) -> LanceDBTranslator:
    return LanceDBTranslator(info.indexed) if info.indexed else LanceDBTranslator()


def is_lexical_table(name: str) -> bool:
    """Whether the table ``name`` is a sibling of texts (no vector index)."""
    return name.endswith(LEXICAL_SUFFIX)


class LanceDBLexicalIndex(StoreLexicalIndex["LanceDBVector"]):
    """Lance full-text search over the texts written beside a :class:`~.store.LanceDBVector`'s tables.

    Made by ``LanceDBVector.lexical_index()`` (one per store); it uses the store's connection.
    """

    store_name = "LanceDB"

    def __init__(self, vector: LanceDBVector) -> None:
        super().__init__(vector)
        self._tables: dict[str, TableInfo] = {}
        self._indexed: set[str] = set()  # siblings whose FTS index exists

    async def _open(self, index: str, *, create: bool) -> TableInfo | None:
        info = self._tables.get(index)
        if info is not None:
            return info
        store = self._store()
        try:
            vectors: TableInfo | None = await store._open("LEXICAL_SEARCH", index)
        except IndexNotFoundError:
            vectors = None
        keys = list(vectors.indexed) if vectors is not None else []
        schema = _schema(keys)
        db = await store._connection()
        name = index + LEXICAL_SUFFIX
        table = None
        try:
            table = await db.open_table(name)
        except ValueError as exc:
            if "not found" not in str(exc) and "does not exist" not in str(exc):
                raise
        if table is not None and (await table.schema()).names != schema.names:
            # Made before siblings carried their vector table's index columns (or for an older table of
            # that name): rebuilt from the vector table, which holds every text (module docstring).
            table.close()
            await db.drop_table(name, ignore_missing=True)
            self._indexed.discard(index)
            table = None
        if table is None:
            if not create:
                return None
            # Created with the texts the vector table already holds, in one commit (module docstring).
            copied = await self._copied(vectors, keys)
            table = await db.create_table(name, data=copied, schema=schema, exist_ok=True)
        # Only what the store's filter resolution reads (``_decided``): the table, its schema and index
        # columns, no vector.
        indexed = {key: f"{INDEX_PREFIX}{i}" for i, key in enumerate(keys)}
        info = TableInfo(table, schema, 0, "cosine", {}, indexed, has_ann=False)
        self._tables[index] = info
        return info

    async def _copied(self, vectors: TableInfo | None, keys: Sequence[str]) -> pa.Table:
        """The texts of the vector table (each chunk's text is in its metadata as ``content``)."""
        store = self._store()
        ids: list[str] = []
        texts: list[str] = []
        documents: list[str] = []
        if vectors is not None:
            async for batch in store._batches(vectors, TRUE, ["id", "metadata"]):
                for rid, document in zip(batch["id"].to_pylist(), batch["metadata"].to_pylist(), strict=True):
                    content = json.loads(document).get("content")
                    if isinstance(content, str):
                        ids.append(rid)
                        texts.append(content)
                        documents.append(document)
        return _rows(ids, texts, documents, keys)

    # --- writes -----------------------------------------------------------------------------------

    async def upsert(
        self, index: str, ids: Sequence[str], texts: Sequence[str], metadata: Sequence[Mapping[str, Any]]
    ) -> None:
        """Insert or replace one row per id (the text searched and the metadata filtered on)."""
        if not ids:
            return
        info = await self._open(index, create=True)
        assert info is not None
        rows = _rows(list(ids), list(texts), [metadata_json(m) for m in metadata], list(info.indexed))
        async with info.lock:
            merge = info.table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
            await merge.execute(rows)
            await self._maintain(index, info)

    async def _maintain(self, index: str, info: TableInfo) -> None:
        """The FTS index at the first write; an optimise (which indexes new rows) every ``optimize_every``
        writes. Never fails a write: unindexed rows are still searched."""
        info.writes += 1
        try:
            if index not in self._indexed:
                if not any(list(i.columns) == [CONTENT] for i in await info.table.list_indices()):
                    await info.table.create_index(CONTENT, config=FTS(with_position=False))
                self._indexed.add(index)
            elif info.writes % self._store().settings.optimize_every == 0:
                await info.table.optimize()
        except Exception:
            logger.warning("lancedb full-text index maintenance failed; it is retried later", exc_info=True)

    async def delete(self, index: str, flt: Node) -> int:
        """Delete the rows ``flt`` matches (the vector side's filter, resolved the same way); returns how
        many. Nothing when the sibling was never written."""
        info = await self._open(index, create=False)
        if info is None:
            return 0
        resolved = _translator(info).translate(flt)
        store = self._store()
        where = await store._decided(info, resolved)
        async with info.lock:
            if where:
                if where == FALSE:
                    return 0
                count = int(await info.table.count_rows(None if where == TRUE else where))
                if count:
                    await info.table.delete(where)
                    await self._maintain(index, info)
                return count
            ids = (await store._matching_rows(info, resolved, ["id"]))["id"].to_pylist()
            for start in range(0, len(ids), _DELETE_CHUNK):
                chunk = ", ".join(sql_string(i) for i in ids[start : start + _DELETE_CHUNK])
                await info.table.delete(f"id IN ({chunk})")
            if ids:
                await self._maintain(index, info)
            return len(ids)

    async def drop(self, index: str) -> None:
        """Drop the sibling table (with its vector table)."""
        info = self._tables.pop(index, None)
        self._indexed.discard(index)
        if info is not None:
            info.table.close()
        db = await self._store()._connection()
        await db.drop_table(index + LEXICAL_SUFFIX, ignore_missing=True)

    def forget(self) -> None:
        """Close the open siblings (the store is closing)."""
        for info in self._tables.values():
            info.table.close()
        self._tables.clear()
        self._indexed.clear()

    # --- search -----------------------------------------------------------------------------------

    async def search(self, index: str, query: str, *, top_k: int, flt: Node | None) -> list[LexicalHit]:
        """The ``top_k`` rows ``flt`` keeps, best BM25 first (ties by id). Nothing for a query without a
        word, or before the first write."""
        words = query_words(query)
        if not words or top_k < 1:
            return []
        info = await self._open(index, create=True)
        assert info is not None
        if index not in self._indexed:
            if not await info.table.count_rows():
                return []
            async with info.lock:
                await self._maintain(index, info)  # the FTS index of a table made by a search
        text = " ".join(words)
        if flt is None:
            return await self._search(info, text, TRUE, top_k)
        resolved = _translator(info).translate(flt)
        where = await self._store()._decided(info, resolved)
        if where == FALSE:
            return []
        if where:
            return await self._search(info, text, where, top_k)
        # Too many rows SQL cannot decide to list their ids: prefilter by the upper bound, judge each hit
        # with the reference evaluator, and widen until top_k are kept or the candidates run out.
        limit = top_k * 4
        while True:
            hits, candidates = await self._candidates(info, text, resolved.upper, limit, resolved)
            if len(hits) >= top_k or candidates < limit:
                return hits[:top_k]
            limit *= 4

    async def _search(self, info: TableInfo, text: str, where: str, limit: int) -> list[LexicalHit]:
        hits, _ = await self._candidates(info, text, where, limit, None)
        return hits

    async def _candidates(
        self, info: TableInfo, text: str, where: str, limit: int, judge: LanceFilter | None
    ) -> tuple[list[LexicalHit], int]:
        """The best ``limit`` rows ``judge`` accepts among the full-text hits ``where`` keeps, and how many
        hits were read."""
        query = info.table.query().nearest_to_text(text, columns=CONTENT)
        if where != TRUE:
            query = query.where(where)
        # A few rows beyond the limit, so rows tied at the cut-off are ordered by id.
        table = await query.select(["id", "metadata", "_score"]).limit(limit + 8).to_arrow()
        rows = sorted(
            zip(
                table["id"].to_pylist(),
                table["metadata"].to_pylist(),
                table["_score"].to_pylist(),
                strict=True,
            ),
            key=lambda r: (-float(r[2]), r[0]),
        )
        hits: list[LexicalHit] = []
        for rid, text_metadata, score in rows:
            document = json.loads(text_metadata)
            if judge is not None and not matches(judge.node, document):
                continue
            hits.append(LexicalHit(rid, float(score), document))
        return hits[:limit], len(rows)
