"""Hybrid recall's lexical side on PostgreSQL: full-text search beside the vectors (``lexical_search``).

Layout. One table per schema, ``mastra_memory_lexical``: ``(index_name, id)`` primary key, ``content``
(the text searched), ``metadata jsonb`` (the vector's metadata, written as the vector side writes it) and
``tsv``, a stored generated ``to_tsvector('english', content)`` with a GIN index. GIN indexes on
``metadata -> 'resource_id'``, ``'thread_id'`` and ``'message_id'`` serve the scopes of recall and the
deletes. It is created at the first write or search, in both layouts: with ``layout="mastra"`` it is
this project's own table beside ``@mastra/pg``'s, whose tables are never altered (docs/spec.md §4.7); it
has no ``vector_id``/``embedding`` column, so neither side's index listing takes it for an index.

Backfill. The first search of an index copies, once, the texts its vector table already holds (the indexer
keeps each chunk's text in the metadata as ``content``) and records the index in
``mastra_memory_lexical_indexes``: vectors written before hybrid recall existed need no reindex.

Filters. The filter (tenant scope and ``semanticRecall.filter``) is translated by the vector store's own
translator (:mod:`.translate`, over the ``metadata`` column), so it means exactly what it means on the vector
side (docs/spec.md §5.3 step 7.3).

Queries. User text never reaches tsquery syntax: the distinct words (``\\w+``) of the query, each a bound
parameter of ``plainto_tsquery``, are joined with tsquery's OR (``||``), as the SQLite store joins its FTS5
terms; ``ts_rank_cd`` (cover density, normalised by the log of the document length) ranks the rows the
filter keeps. PostgreSQL's ranking has no inverse document frequency, unlike SQLite's BM25: the English
configuration's stop words keep the commonest words out of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from mastra_memory.filters.ast import Node
from mastra_memory.memory.index.lexical import LexicalHit, StoreLexicalIndex, query_words
from mastra_memory.vector.records import escape_nul, unescape_nul

from .connection import Connection, quote_ident
from .layout import metadata_text
from .translate import PgFilterTranslator

if TYPE_CHECKING:
    from .store import PgVector

__all__ = ["LEXICAL_TABLE", "PgLexicalIndex", "drop_lexical_rows", "query_words"]

LEXICAL_TABLE: Final = "mastra_memory_lexical"
#: The indexes whose texts were copied from their vector table (the first search's backfill).
FILLED_TABLE: Final = "mastra_memory_lexical_indexes"
#: The text search configuration of the ``tsv`` column and of the queries (stemming, stop words).
TEXT_SEARCH_CONFIG: Final = "english"
#: Metadata keys with a GIN index: recall's scopes and the key deletes select on (as the translator writes
#: equality on them: ``(metadata -> 'key') @> value``).
INDEXED_KEYS: Final = ("thread_id", "resource_id", "message_id")


def _table(schema: str) -> str:
    return f"{quote_ident(schema)}.{LEXICAL_TABLE}"


def _schema(schema: str) -> list[str]:
    table = _table(schema)
    statements = [
        f'CREATE TABLE IF NOT EXISTS {table} (index_name text COLLATE "C" NOT NULL, '
        'id text COLLATE "C" NOT NULL, content text NOT NULL, '
        "metadata jsonb NOT NULL DEFAULT '{}'::jsonb, "
        f"tsv tsvector GENERATED ALWAYS AS (to_tsvector('{TEXT_SEARCH_CONFIG}'::regconfig, content)) STORED, "
        f"CONSTRAINT {LEXICAL_TABLE}_pkey PRIMARY KEY (index_name, id))",
        f"CREATE INDEX IF NOT EXISTS {LEXICAL_TABLE}_tsv_idx ON {table} USING gin (tsv)",
    ]
    for key in INDEXED_KEYS:
        statements.append(
            f"CREATE INDEX IF NOT EXISTS {LEXICAL_TABLE}_{key}_idx ON {table} "
            f"USING gin ((metadata -> '{key}') jsonb_path_ops)"
        )
    statements.append(
        f"CREATE TABLE IF NOT EXISTS {quote_ident(schema)}.{FILLED_TABLE} "
        '(index_name text COLLATE "C" PRIMARY KEY)'
    )
    return statements


async def _create(conn: Connection, schema: str) -> None:
    """The tables, created once under a lock (concurrent CREATE ... IF NOT EXISTS can still collide)."""
    await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"{schema}.{LEXICAL_TABLE}",))
    for statement in _schema(schema):
        await conn.execute(statement)


async def _exists(conn: Connection, schema: str) -> bool:
    row = await (await conn.execute("SELECT to_regclass(%s)", (_table(schema),))).fetchone()
    return row is not None and row[0] is not None


async def drop_lexical_rows(conn: Connection, schema: str, index: str) -> None:
    """Delete the lexical rows of ``index`` (its vector index is being deleted), in the caller's
    transaction; nothing when the table was never created."""
    if await _exists(conn, schema):
        await conn.execute(f"DELETE FROM {_table(schema)} WHERE index_name = %s", (index,))
        await conn.execute(
            f"DELETE FROM {quote_ident(schema)}.{FILLED_TABLE} WHERE index_name = %s", (index,)
        )


class PgLexicalIndex(StoreLexicalIndex["PgVector"]):
    """PostgreSQL full-text search over the texts written beside a :class:`~.store.PgVector`'s indexes.

    Made by ``PgVector.lexical_index()``; it runs on the store's connection pool, in the store's schema.
    """

    store_name = "PgVector"

    def __init__(self, vector: PgVector) -> None:
        super().__init__(vector)
        self.schema = vector.schema
        self._ready = False
        self._filled: set[str] = set()

    async def _run(self, operation: str, fn: Any) -> Any:
        return await self._store()._run(operation, fn)

    # --- writes -----------------------------------------------------------------------------------

    async def upsert(
        self, index: str, ids: Sequence[str], texts: Sequence[str], metadata: Sequence[Mapping[str, Any]]
    ) -> None:
        """Insert or replace one row per id (the text searched and the metadata filtered on)."""
        if not ids:
            return
        rows = [
            # PostgreSQL text cannot hold U+0000: a space in the searched text, escaped in ids (as vectors).
            (index, escape_nul(rid), text.replace("\x00", " "), metadata_text(meta))
            for rid, text, meta in zip(ids, texts, metadata, strict=True)
        ]
        rows.sort(key=lambda r: r[1])  # one lock order for concurrent upserts
        table = _table(self.schema)

        async def write(conn: Connection) -> None:
            if not self._ready:
                await _create(conn, self.schema)
            async with conn.cursor() as cur:
                await cur.executemany(
                    f"INSERT INTO {table} (index_name, id, content, metadata) VALUES (%s, %s, %s, %s::jsonb) "
                    "ON CONFLICT (index_name, id) DO UPDATE SET content = EXCLUDED.content, "
                    "metadata = EXCLUDED.metadata",
                    rows,
                )

        await self._run("LEXICAL_UPSERT", write)
        self._ready = True

    async def delete(self, index: str, flt: Node) -> int:
        """Delete the rows ``flt`` matches (the vector side's filter, translated the same way); returns how
        many. Nothing when the table was never created."""
        fragment = PgFilterTranslator().translate(flt)
        table = _table(self.schema)

        async def delete(conn: Connection) -> int:
            if not self._ready and not await _exists(conn, self.schema):
                return 0
            cursor = await conn.execute(
                f"DELETE FROM {table} WHERE index_name = %(m_index)s AND ({fragment.sql})",
                {**fragment.params, "m_index": index},
            )
            return cursor.rowcount

        deleted: int = await self._run("LEXICAL_DELETE", delete)
        return deleted

    async def drop(self, index: str) -> None:
        """Delete every lexical row of ``index``."""

        async def drop(conn: Connection) -> None:
            await drop_lexical_rows(conn, self.schema, index)

        await self._run("LEXICAL_DROP", drop)

    # --- search -----------------------------------------------------------------------------------

    async def search(self, index: str, query: str, *, top_k: int, flt: Node | None) -> list[LexicalHit]:
        """The ``top_k`` rows ``flt`` keeps, best rank first (ties by id). Nothing for a query without a
        word, or before the first write."""
        words = query_words(query)
        if not words or top_k < 1:
            return []
        fragment = PgFilterTranslator().translate(flt) if flt is not None else None
        config = f"'{TEXT_SEARCH_CONFIG}'::regconfig"
        tsquery = " || ".join(f"plainto_tsquery({config}, %(m_w{i})s)" for i in range(len(words)))
        params: dict[str, Any] = {f"m_w{i}": w for i, w in enumerate(words)}
        params.update(fragment.params if fragment is not None else {})
        params.update({"m_index": index, "m_k": top_k})
        where = f"AND ({fragment.sql})" if fragment is not None else ""
        sql = (
            f"SELECT id, metadata, ts_rank_cd(tsv, m_query.q, 1) AS rank "
            f"FROM {_table(self.schema)}, (SELECT {tsquery} AS q) AS m_query "
            f"WHERE index_name = %(m_index)s AND tsv @@ m_query.q {where} "
            "ORDER BY rank DESC, id LIMIT %(m_k)s"
        )

        async def search(conn: Connection) -> list[LexicalHit]:
            if index not in self._filled:
                await self._fill(conn, index)
            rows = await (await conn.execute(sql, params)).fetchall()
            return [LexicalHit(unescape_nul(r[0]), float(r[2]), r[1]) for r in rows]

        hits: list[LexicalHit] = await self._run("LEXICAL_SEARCH", search)
        self._filled.add(index)
        self._ready = True
        return hits

    async def _fill(self, conn: Connection, index: str) -> None:
        """The first search of an index copies the texts its vector table already holds (the indexer keeps
        each chunk's text in the metadata as ``content``), once: vectors written before hybrid recall
        existed, or while the texts were not written, need no reindex. Later writes keep both in step."""
        await _create(conn, self.schema)
        filled = f"{quote_ident(self.schema)}.{FILLED_TABLE}"
        done = await (
            await conn.execute(f"SELECT 1 FROM {filled} WHERE index_name = %s", (index,))
        ).fetchone()
        if done is not None:
            return
        vector = self._store()
        source = await (await conn.execute("SELECT to_regclass(%s)", (vector._real(index),))).fetchone()
        if source is not None and source[0] is not None:
            await conn.execute(
                f"INSERT INTO {_table(self.schema)} (index_name, id, content, metadata) "
                f"SELECT %s, id, metadata ->> 'content', metadata FROM {vector._table(index)} "
                "WHERE jsonb_typeof(metadata -> 'content') = 'string' "
                "ON CONFLICT (index_name, id) DO NOTHING",
                (index,),
            )
        await conn.execute(f"INSERT INTO {filled} (index_name) VALUES (%s) ON CONFLICT DO NOTHING", (index,))
