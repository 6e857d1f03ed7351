"""The vector API's filter-only query and ``delete_filter`` next to Mastra's own stores (issue 26, section 2;
docs/spec.md §3.1), by running ``@mastra/pg``'s ``PgVector`` and ``@mastra/libsql``'s ``LibSQLVector``
(``mastra/vector_api.mjs``) on the same records as this project's pgvector and SQLite stores.

* A query without a query vector: ``@mastra/pg`` and this project's pgvector return the same ids in the
  same order (the first ``top_k`` matches by id), every score 0.
* An upsert with ``delete_filter``: the same records remain on both.
* [Δ] Without a vector and without (or with an empty) filter, Mastra refuses and this project lists the
  index; ``deleteFilter: {}`` deletes nothing on Mastra and is refused here; ``@mastra/libsql`` refuses a
  query without a vector and ignores ``deleteFilter``, where the SQLite store answers and replaces.

The PostgreSQL server comes from ``mastra_memory_pgvector.testing`` (or ``MASTRA_MEMORY_TEST_PG_DSN``);
without the adapter or a PostgreSQL installation the tests skip saying so, and fail under CI.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.errors import ValidationError
from mastra_memory.stores.sqlite.store import SQLiteVector
from mastra_memory.vector import MastraVector
from mastra_memory_conformance.missing import missing, started

from .mastra_runner import run_mastra

try:
    from mastra_memory_pgvector import PgVector, PgVectorSettings
    from mastra_memory_pgvector.testing.server import ServerUnavailable, local_server
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    missing(f"the pgvector adapter is not installed ({exc}); pip install -e adapters/pgvector")

DIMENSION = 3
QUERY = [1.0, 0.0, 0.0]


def _record(rid: str, n: int, **metadata: Any) -> dict[str, Any]:
    return {"id": rid, "vector": [1.0, 0.1 * n, 0.05 * (n % 3)], "metadata": {"kind": "chunk", **metadata}}


RECORDS = [
    _record("doc-a-2", 1, source="a", chunk=2),
    _record("doc-b-0", 2, source="b", chunk=0),
    _record("doc-a-0", 3, source="a", chunk=0),
    _record("m-1", 4, source="c", chunk=0),
    _record("doc-a-10", 5, source="a", chunk=10),
    _record("doc-a-1", 6, source="a", chunk=1),
]
LIST_FILTER: dict[str, Any] = {"kind": "chunk"}
LIST_TOP_K = 3
REPLACE = {
    "records": [
        _record("doc-a-0", 7, source="a", chunk=0, v=2),
        _record("doc-a-9", 8, source="a", chunk=1, v=2),
    ],
    "deleteFilter": {"source": "a"},
}
EMPTY_REPLACE = {"records": [_record("z-1", 9, source="z")]}


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    """The DSN of the pgvector adapter's test server, started for this module (or the existing one
    ``MASTRA_MEMORY_TEST_PG_DSN`` names)."""
    existing = os.environ.get("MASTRA_MEMORY_TEST_PG_DSN", "").strip()
    if existing:
        yield existing
        return
    with started(
        local_server(), "PostgreSQL (the pgvector adapter's test server)", (ServerUnavailable,)
    ) as url:
        yield url


@pytest.fixture(scope="module")
def mastra(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Mastra's answers, both stores, from one Node process."""
    folder = tmp_path_factory.mktemp("mastra-libsql")
    return run_mastra(
        {
            "pg": {"url": pg_url, "schema": "public", "index": f"interop_{uuid.uuid4().hex[:10]}"},
            "libsql": {"url": f"file:{folder / 'vectors.db'}", "index": "interop_vectors"},
            "dimension": DIMENSION,
            "records": RECORDS,
            "listFilter": LIST_FILTER,
            "listTopK": LIST_TOP_K,
            "replace": REPLACE,
            "emptyReplace": EMPTY_REPLACE,
            "queryVector": QUERY,
        },
        script="vector_api.mjs",
    )


async def _ours(store: MastraVector) -> dict[str, Any]:
    """This project's answers to the script's calls, on ``store``."""
    index = f"interop_{uuid.uuid4().hex[:10]}"

    async def upsert(records: list[dict[str, Any]], **extra: Any) -> None:
        await store.upsert(
            index,
            [r["vector"] for r in records],
            [r["metadata"] for r in records],
            [r["id"] for r in records],
            **extra,
        )

    def hits(results: list[Any]) -> list[dict[str, Any]]:
        return [{"id": r.id, "score": r.score, "metadata": r.metadata} for r in results]

    async def everything() -> list[dict[str, Any]]:
        return hits(await store.query(index, QUERY, top_k=100))

    try:
        await store.create_index(index, DIMENSION)
        await upsert(RECORDS)
        answer: dict[str, Any] = {
            "listed": hits(await store.query(index, None, top_k=LIST_TOP_K, filter=LIST_FILTER)),
            "listedAll": hits(await store.query(index, None, top_k=100, filter=LIST_FILTER)),
            "withoutFilter": hits(await store.query(index, None, top_k=100)),
        }
        await upsert(REPLACE["records"], delete_filter=REPLACE["deleteFilter"])
        answer["afterReplace"] = await everything()
        with pytest.raises(ValidationError, match="empty filter"):
            await upsert(EMPTY_REPLACE["records"], delete_filter={})
        answer["afterEmptyReplace"] = await everything()
        await store.delete_index(index)
        return answer
    finally:
        await store.close()


def _ids(hits: list[dict[str, Any]]) -> list[str]:
    return [h["id"] for h in hits]


def test_a_filter_only_query_matches_mastras_pg(mastra: dict[str, Any], pg_url: str) -> None:
    ours = asyncio.run(_ours(PgVector(PgVectorSettings(url=pg_url, schema_name="public", pool_max_size=2))))
    theirs = mastra["pg"]
    assert "error" not in theirs["listed"], theirs["listed"]
    # The first top_k matches by id, score 0, on both.
    assert _ids(ours["listed"]) == _ids(theirs["listed"]["hits"]) == ["doc-a-0", "doc-a-1", "doc-a-10"]
    assert _ids(ours["listedAll"]) == _ids(theirs["listedAll"]["hits"]) == sorted(r["id"] for r in RECORDS)
    assert {h["score"] for h in ours["listedAll"]} == {h["score"] for h in theirs["listedAll"]["hits"]} == {0}
    assert [h["metadata"] for h in ours["listedAll"]] == [h["metadata"] for h in theirs["listedAll"]["hits"]]
    # [Δ] no vector and no (or an empty) filter: Mastra refuses, this project lists the index.
    assert "Either queryVector or filter" in theirs["withoutFilter"]["error"]
    assert "Either queryVector or filter" in theirs["emptyFilter"]["error"]
    assert _ids(ours["withoutFilter"]) == sorted(r["id"] for r in RECORDS)


def test_delete_filter_leaves_what_mastras_pg_leaves(mastra: dict[str, Any], pg_url: str) -> None:
    ours = asyncio.run(_ours(PgVector(PgVectorSettings(url=pg_url, schema_name="public", pool_max_size=2))))
    theirs = mastra["pg"]
    assert theirs["replaceCall"] == {"hits": []}
    by_id = {h["id"]: h["metadata"] for h in theirs["afterReplace"]["hits"]}
    assert {h["id"]: h["metadata"] for h in ours["afterReplace"]} == by_id
    assert set(by_id) == {"doc-a-0", "doc-a-9", "doc-b-0", "m-1"}
    assert by_id["doc-a-0"]["v"] == 2
    # [Δ] deleteFilter {}: Mastra deletes nothing and writes; this project refuses before any I/O.
    assert set(_ids(theirs["afterEmptyReplace"]["hits"])) == set(by_id) | {"z-1"}
    assert set(_ids(ours["afterEmptyReplace"])) == set(by_id)


def test_mastras_libsql_has_neither_where_sqlite_has_both(mastra: dict[str, Any], tmp_path: Path) -> None:
    """[Δ] ``@mastra/libsql`` 1.23.1 refuses a query without a vector and ignores ``deleteFilter``."""
    theirs = mastra["libsql"]
    assert "Metadata-only queries are not supported" in theirs["listed"]["error"]
    assert theirs["replaceCall"] == {"hits": []}
    kept = set(_ids(theirs["afterReplace"]["hits"]))
    assert kept == {r["id"] for r in RECORDS} | {"doc-a-9"}, "Mastra's LibSQL deleted nothing"
    ours = asyncio.run(_ours(SQLiteVector(url=str(tmp_path / "ours.db"))))
    assert set(_ids(ours["afterReplace"])) == {"doc-a-0", "doc-a-9", "doc-b-0", "m-1"}
    assert _ids(ours["listed"]) == ["doc-a-0", "doc-a-1", "doc-a-10"]
