"""The SQLite store's approximate route (``stores/sqlite/ann.py``, issue 28), exercised for real with the
threshold lowered to a few hundred rows.

* recall@k against the exact route on the same rows ≥ 0.99, with exact scores;
* filters stay exact (random filters on thread, role and dates; the tenant scope): every result matches,
  recall ≥ 0.99 against the exact route;
* deleted or updated-away vectors never come back; rows written by another connection after the build are
  found; a restart attaches the persisted graph without building it again; ``:memory:`` builds in memory.

The exact route is the same store class with the approximate index switched off (a threshold above the
row count), reading the same file. No timing anywhere.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from mastra_memory.filters import evaluate
from mastra_memory.stores.sqlite.settings import SQLiteSettings
from mastra_memory.stores.sqlite.store import SQLiteVector

pytest.importorskip("faiss")

INDEX = "ann"
DIM = 16
ROWS = 3_000
USERS = 2
THREADS = 6
K = 10
THRESHOLD = 200


def _data(seed: int, rows: int = ROWS) -> tuple[npt.NDArray[np.float32], list[dict[str, Any]]]:
    """Clustered vectors (as embeddings are) and Memory-like metadata."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, DIM)).astype(np.float32)
    vectors = centres[rng.integers(0, 40, rows)] + 0.4 * rng.standard_normal((rows, DIM)).astype(np.float32)
    metadata = [
        {
            "resource_id": f"u{i % USERS}",
            "thread_id": f"u{i % USERS}-t{(i // USERS) % THREADS}",
            "role": "user" if i % 3 else "assistant",
            "created_at": 1_700_000_000 + i,
        }
        for i in range(rows)
    ]
    return vectors, metadata


def _store(path: Path, threshold: int = THRESHOLD, background: bool = False) -> SQLiteVector:
    url = str(path) if path.name != ":memory:" else ":memory:"
    return SQLiteVector(SQLiteSettings(url=url, ann_threshold=threshold, ann_background=background))


@pytest.fixture
async def filled(tmp_path: Path) -> AsyncIterator[tuple[SQLiteVector, SQLiteVector, Path]]:
    """(approximate store with its graph built, exact store), both on one file of ``ROWS`` rows."""
    path = tmp_path / "ann.db"
    vectors, metadata = _data(1)
    ann, exact = _store(path), _store(path, threshold=10**9)
    await ann.create_index(INDEX, DIM, "cosine", metadata_indexes=["thread_id", "resource_id"])
    await ann.upsert(INDEX, vectors, metadata, [f"r{i:05d}" for i in range(ROWS)])
    await ann.build_ann_index(INDEX)
    try:
        yield ann, exact, path
    finally:
        await ann.close()
        await exact.close()


async def _both(
    ann: SQLiteVector, exact: SQLiteVector, query: npt.NDArray[np.float32], flt: Any = None
) -> tuple[list[Any], list[Any]]:
    a = await ann.query(INDEX, query.tolist(), top_k=K, filter=flt)
    e = await exact.query(INDEX, query.tolist(), top_k=K, filter=flt)
    return a, e


def _queries(seed: int, count: int) -> npt.NDArray[np.float32]:
    vectors, _ = _data(1)
    rng = np.random.default_rng(seed)
    picked = vectors[rng.integers(0, ROWS, count)]
    return (picked + 0.3 * rng.standard_normal(picked.shape)).astype(np.float32)


def _recall(pairs: list[tuple[list[Any], list[Any]]]) -> float:
    hits = sum(len({r.id for r in a} & {r.id for r in e}) for a, e in pairs)
    return hits / max(1, sum(len(e) for _, e in pairs))


def _assert_exact_scores(a: list[Any], e: list[Any]) -> None:
    """Every returned score is the exact one (re-ranking), so a shared id has the exact route's score."""
    exact = {r.id: r.score for r in e}
    for r in a:
        if r.id in exact:
            assert r.score == pytest.approx(exact[r.id], abs=1e-6)
    assert [r.score for r in a] == sorted((r.score for r in a), reverse=True)


@pytest.mark.timeout(120)
async def test_graph_is_built_persisted_and_recalls_like_exact(
    filled: tuple[SQLiteVector, SQLiteVector, Path],
) -> None:
    ann, exact, path = filled
    assert ann._ann.builds == 1  # the store's approximate route (private: what it holds is the point)
    assert (path.parent / "ann.db.ann" / INDEX / "current.json").exists()
    pairs = [await _both(ann, exact, q) for q in _queries(2, 60)]
    assert _recall(pairs) >= 0.99
    for a, e in pairs:
        _assert_exact_scores(a, e)
    assert ann._ann.graph(INDEX, DIM, "cosine") is not None


@pytest.mark.timeout(240)
async def test_random_filters_stay_exact(filled: tuple[SQLiteVector, SQLiteVector, Path]) -> None:
    ann, exact, _ = filled
    seed = random.randrange(2**32)
    print(f"seed {seed}")
    rng = random.Random(seed)
    pairs = []
    for q in _queries(seed, 80):
        user = f"u{rng.randrange(USERS)}"
        choice = rng.randrange(6)
        flt: dict[str, Any] = {"resource_id": user}
        if choice == 1:
            flt["thread_id"] = {"$in": [f"{user}-t{rng.randrange(THREADS)}" for _ in range(2)]}
        elif choice == 2:
            start = 1_700_000_000 + rng.randrange(ROWS)
            flt["created_at"] = {"$gte": start, "$lt": start + rng.randrange(400, 2_500)}
        elif choice == 3:
            flt["$or"] = [{"role": "assistant"}, {"thread_id": f"{user}-t{rng.randrange(THREADS)}"}]
        elif choice == 4:
            flt = {"created_at": {"$lt": 1_700_000_000 + rng.randrange(500, ROWS)}, "role": {"$ne": "user"}}
        elif choice == 5:
            flt["thread_id"] = {"$ne": f"{user}-t0"}
        a, e = await _both(ann, exact, q, flt)
        for r in a:
            assert evaluate(flt, r.metadata), (seed, flt, r)
        assert len(a) == len(e)
        _assert_exact_scores(a, e)
        pairs.append((a, e))
    assert _recall(pairs) >= 0.99, seed


@pytest.mark.timeout(120)
async def test_deleted_and_updated_vectors_never_return(
    filled: tuple[SQLiteVector, SQLiteVector, Path],
) -> None:
    ann, exact, _ = filled
    queries = _queries(3, 20)
    for q in queries:
        a, _ = await _both(ann, exact, q)
        await ann.delete_vectors(INDEX, ids=[a[0].id])  # the best hit, deleted
        far = (-q).tolist()
        await ann.update_vector(INDEX, id=a[1].id, update={"vector": far})  # the second, moved away
        a2, e2 = await _both(ann, exact, q)
        assert a[0].id not in {r.id for r in a2}
        assert a[1].id not in {r.id for r in a2}
        assert [r.id for r in a2] == [r.id for r in e2]
    # A row moved onto the query is found although the graph holds its old vector.
    target = queries[0]
    a, _ = await _both(ann, exact, -target)
    await ann.update_vector(INDEX, id=a[0].id, update={"vector": target.tolist()})
    a2, e2 = await _both(ann, exact, target)
    assert a2[0].id == a[0].id == e2[0].id
    assert a2[0].score == pytest.approx(1.0, abs=1e-6)


@pytest.mark.timeout(120)
async def test_other_connections_writes_are_seen(filled: tuple[SQLiteVector, SQLiteVector, Path]) -> None:
    ann, exact, path = filled
    other = _store(path, threshold=10**9)
    try:
        queries = _queries(4, 10)
        await _both(ann, exact, queries[0])  # the graph is attached to the current snapshot
        # New rows equal to the queries (the best answers), a deleted best hit, a moved second hit.
        await other.upsert(
            INDEX,
            queries,
            [{"resource_id": "u0", "thread_id": "u0-t0", "role": "user", "created_at": 1} for _ in queries],
            [f"new{i}" for i in range(len(queries))],
        )
        before, _ = await _both(ann, exact, queries[1])
        victim = next(r.id for r in before if not r.id.startswith("new"))
        await other.delete_vectors(INDEX, ids=[victim])
        for i, q in enumerate(queries):
            a, e = await _both(ann, exact, q, {"resource_id": "u0"})
            assert a[0].id == f"new{i}"
            assert victim not in {r.id for r in a}
            assert [r.id for r in a] == [r.id for r in e]
    finally:
        await other.close()


@pytest.mark.timeout(120)
async def test_restart_attaches_the_persisted_graph(filled: tuple[SQLiteVector, SQLiteVector, Path]) -> None:
    ann, exact, path = filled
    graph_file = next((path.parent / "ann.db.ann" / INDEX).glob("*/graph.faiss"))
    stamp = graph_file.stat().st_mtime_ns
    await ann.close()
    reopened = _store(path)
    try:
        await reopened.build_ann_index(INDEX)  # the persisted graph holds every row: nothing to build
        pairs = [await _both(reopened, exact, q) for q in _queries(5, 30)]
        assert _recall(pairs) >= 0.99
        assert reopened._ann.builds == 0
        assert reopened._ann.graph(INDEX, DIM, "cosine") is not None
        assert graph_file.stat().st_mtime_ns == stamp
        assert len(list((path.parent / "ann.db.ann" / INDEX).glob("*/graph.faiss"))) == 1
    finally:
        await reopened.close()


@pytest.mark.timeout(120)
async def test_background_build_then_extension(tmp_path: Path) -> None:
    path = tmp_path / "bg.db"
    vectors, metadata = _data(6)
    store, exact = _store(path, background=True), _store(path, threshold=10**9)
    try:
        await store.create_index(INDEX, DIM, "cosine", metadata_indexes=["resource_id"])
        await store.upsert(INDEX, vectors[:2_000], metadata[:2_000], [f"r{i:05d}" for i in range(2_000)])
        queries = _queries(7, 20)
        a, e = await _both(store, exact, queries[0])  # exact meanwhile, starts the build
        assert [r.id for r in a] == [r.id for r in e]
        for _ in range(600):
            if store._ann.builds:
                break
            await asyncio.sleep(0.05)
        assert store._ann.builds == 1
        # Rows beyond the graph are searched exactly until the graph is extended with them.
        rest = [f"r{i:05d}" for i in range(2_000, ROWS)]
        await store.upsert(INDEX, vectors[2_000:], metadata[2_000:], rest)
        pairs = [await _both(store, exact, q) for q in queries]
        assert _recall(pairs) >= 0.99
        await store.build_ann_index(INDEX)
        await _both(store, exact, queries[0])
        graph = store._ann.graph(INDEX, DIM, "cosine")
        assert graph is not None
        assert graph.size == ROWS
        pairs = [await _both(store, exact, q) for q in queries]
        assert _recall(pairs) >= 0.99
        assert len(os.listdir(path.parent / "bg.db.ann" / INDEX)) == 3  # current.json, build.lock, one build
    finally:
        await store.close()
        await exact.close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("background", [True, False])
async def test_in_memory_database_builds_in_memory(background: bool) -> None:
    vectors, metadata = _data(8, rows=1_000)
    store = _store(Path(":memory:"), background=background)
    try:
        await store.create_index(INDEX, DIM, "cosine")
        await store.upsert(INDEX, vectors, metadata, [f"r{i:05d}" for i in range(1_000)])
        if background:
            await store.query(INDEX, vectors[0].tolist(), top_k=K)  # exact, starts the build
            for _ in range(600):
                if store._ann.builds:
                    break
                await asyncio.sleep(0.05)
        else:
            await store.build_ann_index(INDEX)
        hits = 0
        for q in _queries(9, 20):
            got = await store.query(INDEX, q.tolist(), top_k=K)
            norms = np.linalg.norm(vectors, axis=1) * np.linalg.norm(q)
            want = {f"r{i:05d}" for i in np.argsort(-(vectors @ q) / norms)[:K]}
            hits += len({r.id for r in got} & want)
        assert store._ann.builds == 1
        assert hits / (20 * K) >= 0.99
        await store.delete_vectors(INDEX, ids=[f"r{i:05d}" for i in range(200)])
        got = await store.query(INDEX, _queries(9, 1)[0].tolist(), top_k=K)
        assert all(int(r.id[1:]) >= 200 for r in got)
        # Extended on demand with new rows: a copy of the graph grows while searches use the old one.
        more, more_meta = _data(10, rows=300)
        await store.upsert(INDEX, more, more_meta, [f"m{i:03d}" for i in range(300)])
        await store.build_ann_index(INDEX)
        got = await store.query(INDEX, more[7].tolist(), top_k=K)
        assert got[0].id == "m007"
        graph = store._ann.graph(INDEX, DIM, "cosine")
        assert graph is not None
        assert graph.size == 1_300  # the 200 deleted positions stay, masked (a quarter would rebuild)
        assert store._ann.builds == 2
    finally:
        await store.close()


@pytest.mark.timeout(240)
async def test_interleaved_own_writes_keep_the_mapping_exact(
    filled: tuple[SQLiteVector, SQLiteVector, Path],
) -> None:
    """Our writes patch the graph's mapping without recomputing it (new rows, updates, deletes, a deleted
    last row's seq given to a new row, compactions): after each one, the row just written onto the query
    is the best hit, deleted rows never come back, and recall stays that of the exact route."""
    ann, exact, _ = filled
    seed = random.randrange(2**32)
    print(f"seed {seed}")
    rng = random.Random(seed)
    live = [f"r{i:05d}" for i in range(ROWS)]
    deleted: set[str] = set()
    pairs = []
    for step, q in enumerate(_queries(seed, 120)):
        op = rng.randrange(4)
        if op == 0:  # a new row on the query
            rid = f"n{step}"
            await ann.upsert(INDEX, [q.tolist()], [{"resource_id": "u0"}], [rid])
            live.append(rid)
        elif op == 1:  # an old row moved onto the query
            rid = rng.choice(live)
            await ann.update_vector(INDEX, id=rid, update={"vector": q.tolist()})
        elif op == 2:  # several rows deleted (now and then the last one: its seq comes back)
            gone = [live.pop(rng.randrange(len(live))) for _ in range(rng.randrange(1, 40))]
            if rng.random() < 0.3:
                gone.append(live.pop())
            await ann.delete_vectors(INDEX, ids=gone)
            deleted.update(gone)
            rid = f"d{step}"
            await ann.upsert(INDEX, [q.tolist()], [{"resource_id": "u1"}], [rid])
            live.append(rid)
        else:  # a row's metadata changed: its vector stays where it is in the graph
            rid = rng.choice(live)
            await ann.update_vector(INDEX, id=rid, update={"metadata": {"resource_id": "u1"}})
            await ann.update_vector(INDEX, id=rid, update={"vector": q.tolist()})
        a, e = await _both(ann, exact, q)
        assert a[0].id == rid, (seed, step, op)
        assert not deleted & {r.id for r in a}, (seed, step)
        _assert_exact_scores(a, e)
        pairs.append((a, e))
    assert _recall(pairs) >= 0.99, seed
