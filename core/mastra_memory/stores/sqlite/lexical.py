"""The lexical side of hybrid recall on the embedded SQLite store: SQLite FTS5 BM25 beside the vectors.

Layout. Per vector index ``<index>``, in the same file: ``mastra_lexical__<index>`` (seq, id, metadata as
JSON text, content) holds what the indexer wrote beside each vector -- the same id, the same metadata, the
chunk's text -- and ``mastra_lexical_fts__<index>``, an external-content FTS5 table over ``content``
(tokenizer ``porter unicode61``: English stemming, Unicode case folding) kept in step by triggers. The
metadata column is the one the vector table has, so a filter is translated by the store's own translator
(``translate.py``) and means exactly what it means on the vector side: tenant scope and
``semanticRecall.filter`` included (docs/spec.md §5.3 step 7.3).

Lifetime. The tables of an index are created by its first search (a hybrid recall), in one transaction
that also copies every text the vector table already holds (the indexer stores each chunk's text in its
metadata as ``content``): a store that never runs a hybrid recall pays nothing for it, and an index written
before hybrid recall existed needs no reindex. From then on the indexer keeps them in step: its writes and
deletes check, inside their own transaction, that the tables exist, so no write falls between the copy and
the first write.

Queries. User text never reaches FTS5's query syntax: the words (``\\w+``) of the query become quoted
terms joined with ``OR`` (so ``"``, ``*``, ``NEAR``, ``OR``, ``-`` and ``:`` are words or nothing), and
``bm25()`` ranks the rows the filter keeps. Scores are returned as ``-bm25`` (higher is better).

Connections. One private connection per object (the vector store's connection is its own business),
opened by the first call and used by one call at a time, under a lock, from a worker thread; :meth:`close`
closes it. Opening one per call cost about 2 ms (connect, then parse the file's schema) on every recall and
every save. For ``:memory:`` one connection is the only choice: a new one would be another, empty, database.
It runs WAL's ``synchronous = NORMAL`` as the vector store's connection does: the lexical rows are no more
durable than the vectors they sit beside, and a lost tail of the WAL loses the same suffix of writes a
crash between the two transactions would.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

from ...filters.ast import Node
from ...memory.index.lexical import LexicalHit, query_words
from ...vector.records import PORTABLE_INDEX_NAME
from .connection import BUSY_TIMEOUT_MS, MEMORY, sqlite_path, write_transaction
from .translate import register_sql_functions, translate_cached
from .vector_rows import TABLE_PREFIX as VECTOR_TABLE_PREFIX

__all__ = ["LexicalHit", "SQLiteLexicalIndex", "fts_query"]

T = TypeVar("T")

DOCS_PREFIX: Final = "mastra_lexical__"
FTS_PREFIX: Final = "mastra_lexical_fts__"
#: Metadata keys with an expression index: the scopes of recall and the keys deletes select on.
INDEXED_KEYS: Final = ("thread_id", "resource_id", "message_id")


def fts_query(text: str) -> str | None:
    """``text`` as an FTS5 query that is only words: each distinct word quoted, joined with ``OR``.

    None when the text has no word. Quoting makes every FTS5 keyword and operator (``NEAR``, ``AND``,
    ``*``, ``^``, column filters) a plain term; ``\\w`` holds no ``"``, so a quote never needs escaping.
    """
    words = query_words(text)
    return " OR ".join(f'"{w}"' for w in words) if words else None


def _names(index: str) -> tuple[str, str]:
    # Index names were validated by the vector template; checked again because they become identifiers.
    if not PORTABLE_INDEX_NAME.fullmatch(index):
        raise ValueError(f"not a portable index name: {index!r}")
    return f"{DOCS_PREFIX}{index}", f"{FTS_PREFIX}{index}"


def _schema(index: str) -> list[str]:
    docs, fts = _names(index)
    statements = [
        f"CREATE TABLE IF NOT EXISTS {docs} (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, "
        "metadata TEXT NOT NULL, content TEXT NOT NULL)",
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {fts} USING fts5(content, content='{docs}', "
        "content_rowid='seq', tokenize='porter unicode61')",
        f"CREATE TRIGGER IF NOT EXISTS {docs}_ai AFTER INSERT ON {docs} BEGIN "
        f"INSERT INTO {fts}(rowid, content) VALUES (new.seq, new.content); END",
        f"CREATE TRIGGER IF NOT EXISTS {docs}_ad AFTER DELETE ON {docs} BEGIN "
        f"INSERT INTO {fts}({fts}, rowid, content) VALUES ('delete', old.seq, old.content); END",
        f"CREATE TRIGGER IF NOT EXISTS {docs}_au AFTER UPDATE ON {docs} BEGIN "
        f"INSERT INTO {fts}({fts}, rowid, content) VALUES ('delete', old.seq, old.content); "
        f"INSERT INTO {fts}(rowid, content) VALUES (new.seq, new.content); END",
    ]
    for key in INDEXED_KEYS:
        statements.append(
            f"CREATE INDEX IF NOT EXISTS {docs}_{key} ON {docs} (json_extract(metadata, '$.\"{key}\"'))"
        )
    return statements


def _create(conn: sqlite3.Connection, index: str) -> None:
    """Create the index's tables and copy in the texts its vector table holds (one write transaction)."""
    docs, _ = _names(index)
    for statement in _schema(index):
        conn.execute(statement)
    vectors = f"{VECTOR_TABLE_PREFIX}{index}"
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (vectors,))
    if found.fetchone() is not None:
        conn.execute(
            f"INSERT INTO {docs} (id, metadata, content) SELECT id, metadata, json_extract(metadata, "
            f"'$.\"content\"') FROM {vectors} WHERE json_type(metadata, '$.\"content\"') = 'text' "
            "ORDER BY seq ON CONFLICT (id) DO NOTHING"
        )


class SQLiteLexicalIndex:
    """FTS5 BM25 search over the texts written beside an SQLite vector index (same file).

    Args:
        url: the SQLite store's URL or path (``SQLiteVector(url).settings.url``).
    """

    def __init__(self, url: str | Path) -> None:
        self.path = sqlite_path(url)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._ready: set[str] = set()

    # --- plumbing ---------------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self.path != MEMORY:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if self.path != MEMORY:
            conn.execute("PRAGMA synchronous = NORMAL")  # per connection; WAL is the vector store's
        register_sql_functions(conn)
        return conn

    def _with_connection(self, fn: Callable[[sqlite3.Connection], T], write: bool) -> T:
        with self._lock:
            if self._conn is None:
                self._conn = self._connect()
            conn = self._conn
            return write_transaction(conn, fn) if write else fn(conn)

    async def _run(self, fn: Callable[[sqlite3.Connection], T], *, write: bool = False) -> T:
        return await asyncio.to_thread(self._with_connection, fn, write)

    def _exists(self, conn: sqlite3.Connection, index: str) -> bool:
        if index in self._ready:
            return True
        docs, _ = _names(index)
        found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (docs,))
        if found.fetchone() is None:
            return False
        self._ready.add(index)  # tables are dropped only by drop(), which forgets them
        return True

    async def ensure(self, index: str) -> None:
        """Create the index's tables, filled from its vector table, unless they exist."""
        if index in self._ready:
            return

        def create(conn: sqlite3.Connection) -> None:
            if not self._exists(conn, index):
                _create(conn, index)

        await self._run(create, write=True)
        self._ready.add(index)

    # --- writes -----------------------------------------------------------------------------------

    async def upsert(
        self, index: str, ids: Sequence[str], texts: Sequence[str], metadata: Sequence[Mapping[str, Any]]
    ) -> None:
        """Insert or replace one row per id (the text searched and the metadata filtered on), once the
        index's tables exist (before, its first search copies the texts from the vector table)."""
        if not ids:
            return
        docs, _ = _names(index)
        rows = [
            (rid, json.dumps(dict(meta), ensure_ascii=False, allow_nan=False), text)
            for rid, text, meta in zip(ids, texts, metadata, strict=True)
        ]

        def write(conn: sqlite3.Connection) -> None:
            if not self._exists(conn, index):
                return
            conn.executemany(
                f"INSERT INTO {docs} (id, metadata, content) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE "
                "SET metadata = excluded.metadata, content = excluded.content",
                rows,
            )

        await self._run(write, write=True)

    async def delete(self, index: str, flt: Node) -> int:
        """Delete the rows ``flt`` matches (the vector side's filter, translated the same way); returns
        how many. An index never written is empty: nothing to delete."""
        docs, _ = _names(index)
        fragment = translate_cached(flt)

        def delete(conn: sqlite3.Connection) -> int:
            if not self._exists(conn, index):
                return 0
            return conn.execute(f"DELETE FROM {docs} WHERE {fragment.sql}", dict(fragment.params)).rowcount

        return await self._run(delete, write=True)

    async def drop(self, index: str) -> None:
        """Drop the index's lexical tables (with the vector index they belong to)."""
        docs, fts = _names(index)

        def drop(conn: sqlite3.Connection) -> None:
            conn.execute(f"DROP TABLE IF EXISTS {fts}")
            conn.execute(f"DROP TABLE IF EXISTS {docs}")

        await self._run(drop, write=True)
        self._ready.discard(index)

    # --- search -----------------------------------------------------------------------------------

    async def search(self, index: str, query: str, *, top_k: int, flt: Node | None) -> list[LexicalHit]:
        """The ``top_k`` rows ``flt`` keeps, best BM25 first (ties by id); nothing for a query without a
        word. The first search of an index creates its tables (:meth:`ensure`)."""
        match = fts_query(query)
        if match is None or top_k < 1:
            return []
        docs, fts = _names(index)
        fragment = translate_cached(flt) if flt is not None else None
        where = f"AND ({fragment.sql})" if fragment is not None else ""
        params: dict[str, Any] = {**(fragment.params if fragment else {}), "m_match": match, "m_k": top_k}
        sql = (
            f"SELECT d.id, d.metadata, bm25({fts}) AS rank FROM {fts} "
            f"JOIN {docs} AS d ON d.seq = {fts}.rowid WHERE {fts} MATCH :m_match {where} "
            "ORDER BY rank, d.id LIMIT :m_k"
        )

        await self.ensure(index)

        def search(conn: sqlite3.Connection) -> list[LexicalHit]:
            return [
                LexicalHit(rid, -float(rank), json.loads(meta))
                for rid, meta, rank in conn.execute(sql, params)
            ]

        return await self._run(search)

    def close(self) -> None:
        """Close the private connection (the next call opens a new one; for ``:memory:``, an empty one)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
