"""``upsert(..., delete_filter=...)`` in the ``MastraVector`` template (docs/spec.md §3.1, §2.9).

The manifest's ``upsert_delete_filter`` decides: ``"atomic"`` calls the store's ``_upsert_replacing`` hook
(one transaction), ``"sequential"`` deletes by filter and then upserts, ``"none"`` refuses with
``CapabilityError`` before any I/O. Stores here are the real SQLite store, once as it ships (atomic) and
once with another manifest (the template's other two paths).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError as PydanticValidationError

from mastra_memory.capabilities import AdapterCapabilities
from mastra_memory.errors import CapabilityError
from mastra_memory.stores.sqlite.store import SQLiteVector

IDX = "idx"


class _Sequential(SQLiteVector):
    capabilities = SQLiteVector.capabilities.model_copy(update={"upsert_delete_filter": "sequential"})


class _Refusing(SQLiteVector):
    capabilities = SQLiteVector.capabilities.model_copy(update={"upsert_delete_filter": "none"})


async def _seeded(store: SQLiteVector) -> SQLiteVector:
    await store.create_index(IDX, 2)
    await store.upsert(
        IDX,
        [[1.0, 0.0], [0.9, 0.1], [0.8, 0.2], [0.1, 0.9]],
        [{"source": "a", "n": 0}, {"source": "a", "n": 1}, {"source": "b", "n": 0}, {"source": "a", "n": 2}],
        ["a0", "a1", "b0", "a2"],
    )
    return store


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "vectors.db"


async def _ids(store: SQLiteVector) -> dict[str, dict[str, Any]]:
    return {r.id: r.metadata for r in await store.query(IDX, None, top_k=100)}


def test_the_manifest_defaults_to_none_and_sequential_needs_delete_by_filter() -> None:
    assert AdapterCapabilities(name="x").upsert_delete_filter == "none"
    with pytest.raises(PydanticValidationError, match="needs delete_by_filter"):
        AdapterCapabilities(name="x", delete_by_filter="none", upsert_delete_filter="sequential")
    assert SQLiteVector.capabilities.upsert_delete_filter == "atomic"


@pytest.mark.parametrize("kind", [SQLiteVector, _Sequential])
async def test_both_paths_replace_every_match(kind: type[SQLiteVector], path: Path) -> None:
    store = await _seeded(kind(url=str(path)))
    try:
        ids = await store.upsert(
            IDX,
            [[0.5, 0.5], [0.2, 0.8]],
            [{"source": "a", "n": 9}, {"source": "a", "n": 8}],
            ["a1", "a9"],
            delete_filter={"source": "a"},
        )
        assert ids == ["a1", "a9"]
        assert await _ids(store) == {
            "a1": {"source": "a", "n": 9},
            "a9": {"source": "a", "n": 8},
            "b0": {"source": "b", "n": 0},
        }
    finally:
        await store.close()


async def test_a_store_without_it_refuses_before_any_io(path: Path) -> None:
    store = await _seeded(_Refusing(url=str(path)))
    try:
        with pytest.raises(CapabilityError, match="cannot upsert with delete_filter") as raised:
            await store.upsert(IDX, [[0.5, 0.5]], [{"source": "a"}], ["a9"], delete_filter={"source": "a"})
        assert raised.value.id == "MASTRA_VECTOR_SQLITE_UPSERT_UNSUPPORTED"
        assert set(await _ids(store)) == {"a0", "a1", "a2", "b0"}
        # Without delete_filter the same store upserts as ever.
        await store.upsert(IDX, [[0.5, 0.5]], [{"source": "a"}], ["a9"])
        assert "a9" in await _ids(store)
    finally:
        await store.close()


async def test_the_patched_snapshot_matches_a_fresh_read(path: Path) -> None:
    """SQLite patches its in-memory snapshot (deleted rows, then upserted ones, whose seq may be the
    deleted last row's); queries through it must equal those of a store that reads the file afresh."""
    store = await _seeded(SQLiteVector(url=str(path)))
    try:
        query = [1.0, 0.2]
        await store.query(IDX, query, top_k=10, filter={"source": "a"})  # builds the snapshot and a column
        await store.upsert(
            IDX,
            [[0.3, 0.7], [0.6, 0.4]],
            [{"source": "c"}, {"source": "a", "n": 5}],
            ["c0", "a5"],
            delete_filter={"n": {"$gte": 1}},  # a1, a2 (the last row) and nothing of b0 (n 0)
        )
        patched = [
            (r.id, round(r.score, 6), r.metadata)
            for flt in ({"source": "a"}, {"source": "c"}, None)
            for r in await store.query(IDX, query, top_k=10, filter=flt)
        ]
        fresh_store = SQLiteVector(url=str(path))
        try:
            fresh = [
                (r.id, round(r.score, 6), r.metadata)
                for flt in ({"source": "a"}, {"source": "c"}, None)
                for r in await fresh_store.query(IDX, query, top_k=10, filter=flt)
            ]
        finally:
            await fresh_store.close()
        assert patched == fresh
        assert {rid for rid, _, _ in patched} == {"a0", "a5", "b0", "c0"}
    finally:
        await store.close()
