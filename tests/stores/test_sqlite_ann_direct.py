"""The SQLite store's direct approximate route (``stores/sqlite/ann_direct.py``, issue 28): a store that has
not loaded the index answers a large search from the persisted graph and the candidates' rows in the file.

* a fresh store's answers match the exact route's (recall ≥ 0.99, exact scores, stored vectors) and it
  never loads the index (the point of the route: no full matrix read on a cold start);
* random filters (tenant, thread, role, dates) stay exact through it: every result matches, seed printed;
* its own writes after the start (new rows, a row moved onto the query, deletions) are seen at once, still
  without loading, and carry over a restart (``changes.json``), also from a process that only wrote;
  enough of them are added to the graph in the background;
* a scope below the threshold (a thread) is answered exactly from the graph's vectors — the exact route's
  ids in its order, with ties, own writes and deletions — without reading the scope's rows; a first build
  holds each scope's rows together (by user, then thread), and saves its positions by seq;
* another connection's write, or a filter too narrow for the unfiltered graph search, sends the search to
  the snapshot route, whose answers are the exact route's.

The exact route is the same store class with the approximate index switched off, on the same file. No
timing anywhere.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mastra_memory.filters import evaluate
from mastra_memory.stores.sqlite import store as store_module
from mastra_memory.stores.sqlite.ann_faiss import map_in
from mastra_memory.stores.sqlite.ann_files import GraphFiles
from mastra_memory.stores.sqlite.ann_graph import AnnGraph
from mastra_memory.stores.sqlite.store import SQLiteVector

from .test_sqlite_ann import (
    DIM,
    INDEX,
    THREADS,
    USERS,
    K,
    _assert_exact_scores,
    _data,
    _queries,
    _recall,
    _store,
)

pytest.importorskip("faiss")

ROWS = 3_000  # as test_sqlite_ann's data, whose _queries draw from these rows


@pytest.fixture
async def built(tmp_path: Path) -> AsyncIterator[tuple[Path, SQLiteVector]]:
    """(a file of ``ROWS`` rows whose graph is built and persisted, the exact store on it)."""
    path = tmp_path / "direct.db"
    vectors, metadata = _data(1, rows=ROWS)
    builder = _store(path)
    try:
        await builder.create_index(INDEX, DIM, "cosine", metadata_indexes=["thread_id", "resource_id"])
        await builder.upsert(INDEX, vectors, metadata, [f"r{i:05d}" for i in range(ROWS)])
        await builder.build_ann_index(INDEX)
    finally:
        await builder.close()
    exact = _store(path, threshold=10**9)
    try:
        yield path, exact
    finally:
        await exact.close()


def _loaded(store: SQLiteVector) -> bool:
    """Whether the store read the whole index into memory (what the direct route avoids)."""
    return INDEX in store._snapshots


async def _pair(store: SQLiteVector, exact: SQLiteVector, q: Any, flt: Any = None, **kw: Any) -> Any:
    a = await store.query(INDEX, q.tolist(), top_k=K, filter=flt, **kw)
    e = await exact.query(INDEX, q.tolist(), top_k=K, filter=flt, **kw)
    return a, e


@pytest.mark.timeout(120)
async def test_a_fresh_store_answers_from_the_graph_without_loading(
    built: tuple[Path, SQLiteVector],
) -> None:
    path, exact = built
    store = _store(path)
    try:
        pairs = []
        for i, q in enumerate(_queries(11, 60)):
            flt = [None, {"resource_id": "u0"}, {"role": "user"}][i % 3]
            a, e = await _pair(store, exact, q, flt)
            if flt is not None:
                assert all(evaluate(flt, r.metadata) for r in a)
            _assert_exact_scores(a, e)
            pairs.append((a, e))
        assert _recall(pairs) >= 0.99
        assert not _loaded(store)
        assert store._ann.builds == 0
        a, e = await _pair(store, exact, _queries(12, 1)[0], include_vector=True)
        shared = {r.id: r.vector for r in e}
        for r in a:
            if r.id in shared:
                assert r.vector == pytest.approx(shared[r.id], abs=0)  # the stored float32 values
        assert not _loaded(store)
    finally:
        await store.close()


@pytest.mark.timeout(240)
async def test_random_filters_stay_exact_on_the_direct_route(built: tuple[Path, SQLiteVector]) -> None:
    path, exact = built
    seed = random.randrange(2**32)
    print(f"seed {seed}")
    rng = random.Random(seed)
    store = _store(path)
    try:
        pairs = []
        for q in _queries(seed, 80):
            user = f"u{rng.randrange(USERS)}"
            choice = rng.randrange(5)
            flt: dict[str, Any] = {"resource_id": user}
            if choice == 1:
                start = 1_700_000_000 + rng.randrange(ROWS // 2)
                flt["created_at"] = {"$gte": start, "$lt": start + rng.randrange(1_200, 2_500)}
            elif choice == 2:
                flt["$or"] = [{"role": "assistant"}, {"thread_id": f"{user}-t{rng.randrange(THREADS)}"}]
            elif choice == 3:
                flt = {"role": {"$ne": "assistant"}}
            elif choice == 4:
                flt["thread_id"] = {"$ne": f"{user}-t0"}
            a, e = await _pair(store, exact, q, flt)
            for r in a:
                assert evaluate(flt, r.metadata), (seed, flt, r)
            assert len(a) == len(e), (seed, flt)
            _assert_exact_scores(a, e)
            pairs.append((a, e))
        assert _recall(pairs) >= 0.99, seed
        assert not _loaded(store), seed  # every one of these filters keeps enough of the candidates
    finally:
        await store.close()


@pytest.mark.timeout(120)
async def test_own_writes_are_seen_and_carry_over_a_restart(built: tuple[Path, SQLiteVector]) -> None:
    path, exact = built
    queries = _queries(13, 12)
    store = _store(path)
    try:
        new = queries[:4]  # written before the first search, as a memory saves the message it recalls for
        meta = [{"resource_id": "u0", "thread_id": "u0-t0", "role": "user", "created_at": 1} for _ in new]
        await store.upsert(INDEX, new, meta, [f"new{i}" for i in range(len(new))])
        for i, q in enumerate(new):
            a, e = await _pair(store, exact, q, {"resource_id": "u0"})
            assert a[0].id == f"new{i}" == e[0].id
        # A row moved onto the query (the graph holds its old vector), then the best hit deleted.
        target = queries[5]
        far, _ = await _pair(store, exact, -target)
        moved = far[0].id
        await store.update_vector(INDEX, id=moved, update={"vector": target.tolist()})
        a, e = await _pair(store, exact, target)
        assert a[0].id == moved == e[0].id
        assert a[0].score == pytest.approx(1.0, abs=1e-6)
        best, _ = await _pair(store, exact, queries[6])
        await store.delete_vectors(INDEX, ids=[best[0].id])
        a, e = await _pair(store, exact, queries[6])
        assert best[0].id not in {r.id for r in a}
        assert [r.id for r in a] == [r.id for r in e]
        assert not _loaded(store)
    finally:
        await store.close()
    assert list((path.parent / "direct.db.ann" / INDEX).glob("*/changes.json"))
    reopened = _store(path)
    try:
        for i, q in enumerate(new):
            a, _ = await _pair(reopened, exact, q, {"resource_id": "u0"})
            assert a[0].id == f"new{i}"
        a, _ = await _pair(reopened, exact, target)
        assert a[0].id == moved
        a, _ = await _pair(reopened, exact, queries[6])
        assert best[0].id not in {r.id for r in a}
        assert not _loaded(reopened)  # the saved changes made the direct route usable after the restart
    finally:
        await reopened.close()


@pytest.mark.timeout(120)
async def test_another_writer_sends_the_search_to_the_snapshot_route(
    built: tuple[Path, SQLiteVector],
) -> None:
    path, exact = built
    queries = _queries(14, 6)
    store, other = _store(path), _store(path, threshold=10**9)
    try:
        await _pair(store, exact, queries[0], {"resource_id": "u1"})
        assert not _loaded(store)
        meta = [{"resource_id": "u1", "thread_id": "u1-t0", "role": "user", "created_at": 1} for _ in queries]
        await other.upsert(INDEX, queries, meta, [f"o{i}" for i in range(len(queries))])
        for i, q in enumerate(queries):
            a, e = await _pair(store, exact, q, {"resource_id": "u1"})
            assert a[0].id == f"o{i}" == e[0].id
            assert [r.id for r in a] == [r.id for r in e]
        assert _loaded(store)  # a change it did not make: the graph is checked against the whole index
    finally:
        await store.close()
        await other.close()


@pytest.mark.timeout(120)
async def test_a_narrow_filter_goes_to_the_snapshot_route(tmp_path: Path) -> None:
    """More rows than the direct route ever fetches (4,096), and a filter keeping 1 row in 100 of them."""
    rows = 6_000
    path = tmp_path / "narrow.db"
    vectors, metadata = _data(15, rows=rows)
    builder = _store(path)
    await builder.create_index(INDEX, DIM, "cosine", metadata_indexes=["resource_id"])
    await builder.upsert(INDEX, vectors, metadata, [f"r{i:05d}" for i in range(rows)])
    await builder.build_ann_index(INDEX)
    await builder.close()
    store, exact = _store(path), _store(path, threshold=10**9)
    try:
        rng = np.random.default_rng(16)
        q = vectors[7] + 0.3 * rng.standard_normal(DIM).astype(np.float32)
        flt = {"resource_id": "u0", "created_at": {"$gte": 1_700_000_000, "$lt": 1_700_000_060}}
        a, e = await _pair(store, exact, q, flt)
        assert [r.id for r in a] == [r.id for r in e]
        assert all(evaluate(flt, r.metadata) for r in a)
        assert _loaded(store)
    finally:
        await store.close()
        await exact.close()


@pytest.mark.timeout(120)
async def test_a_process_that_only_writes_saves_its_changes(built: tuple[Path, SQLiteVector]) -> None:
    path, exact = built
    q = _queries(17, 1)[0]
    writer = _store(path)
    try:
        await writer.upsert(INDEX, [q.tolist()], [{"resource_id": "u1", "role": "user"}], ["written"])
    finally:
        await writer.close()
    reader = _store(path)
    try:
        a, e = await _pair(reader, exact, q, {"resource_id": "u1"})
        assert a[0].id == "written" == e[0].id
        assert not _loaded(reader)
    finally:
        await reader.close()


@pytest.mark.timeout(180)
async def test_many_own_writes_extend_the_graph_in_the_background(built: tuple[Path, SQLiteVector]) -> None:
    """Past 1,000 changed rows the direct route adds them to the graph (they are read on every search
    until then), keeps answering meanwhile, and never loads the index."""
    path, exact = built
    more, meta = _data(18, rows=1_200)
    store = _store(path, background=True)
    try:
        await store.upsert(INDEX, more, meta, [f"m{i:04d}" for i in range(len(more))])
        queries = _queries(19, 20)
        await _pair(store, exact, queries[0])  # starts the extension
        for _ in range(1_200):
            if store._ann.builds:
                break
            await asyncio.sleep(0.05)
        assert store._ann.builds == 1
        pairs = [await _pair(store, exact, q) for q in queries]
        assert _recall(pairs) >= 0.99
        graph = store._ann.graph(INDEX, DIM, "cosine")
        assert graph is not None
        assert graph.size == ROWS + len(more)
        got = await store.query(INDEX, more[5].tolist(), top_k=K)
        assert got[0].id == "m0005"
        assert not _loaded(store)
    finally:
        await store.close()


@pytest.mark.timeout(120)
async def test_a_small_scope_is_exact_from_the_graphs_vectors(
    built: tuple[Path, SQLiteVector], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Threads hold 250 rows, under this store's threshold (300): exact search, scored from the graph (from
    100 rows here; 5,000 by default, below which a scope snapshot reads them faster)."""
    path, exact = built
    monkeypatch.setattr(store_module, "_GRAPH_SCOPE_ROWS", 100)
    store = _store(path, threshold=300)
    rng = random.Random(20)
    try:
        # Ties: one vector given to 30 rows of a thread, in no id order (the order is score, then id).
        tie = _queries(21, 1)[0]
        ids = [f"tie{i:02d}" for i in rng.sample(range(30), 30)]
        meta = [{"resource_id": "u0", "thread_id": "u0-t1", "role": "user", "created_at": 1} for _ in ids]
        await store.upsert(INDEX, [tie.tolist()] * len(ids), meta, ids)
        queries = _queries(22, 40)
        await store.delete_vectors(INDEX, ids=["r00002"])  # in u0-t1
        moved = "r00014"  # u0-t1 too
        await store.update_vector(INDEX, id=moved, update={"vector": queries[3].tolist()})
        for i, q in enumerate([tie, *queries]):
            flt = {"thread_id": f"u{i % USERS}-t{(i // USERS) % THREADS}"} if i else {"thread_id": "u0-t1"}
            a, e = await _pair(store, exact, q, flt)
            assert [r.id for r in a] == [r.id for r in e], (i, flt)
            _assert_exact_scores(a, e)
        a, _ = await _pair(store, exact, queries[3], {"thread_id": "u0-t1"})
        assert a[0].id == moved
        assert not _loaded(store)
        assert len(store._scopes[INDEX]) == 0  # no scope snapshot was read either
    finally:
        await store.close()


@pytest.mark.timeout(120)
async def test_a_small_scope_is_read_from_the_file(built: tuple[Path, SQLiteVector]) -> None:
    """Below 5,000 rows a scope snapshot answers (read in milliseconds), even with a graph on disk."""
    path, exact = built
    store = _store(path, threshold=300)
    try:
        q = _queries(23, 1)[0]
        a, e = await _pair(store, exact, q, {"thread_id": "u1-t3"})
        assert [r.id for r in a] == [r.id for r in e]
        assert len(store._scopes[INDEX]) == 1
    finally:
        await store.close()


@pytest.mark.timeout(120)
async def test_a_first_build_groups_each_scopes_rows(
    built: tuple[Path, SQLiteVector], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows arrive interleaved (row i: user i % 4); the graph holds each user's rows together, each
    thread's inside them, in seq order within a thread, with the positions by seq saved beside it. A build
    saved without that file (an older version) still answers a scope exactly."""
    path, exact = built
    root = Path(f"{path}.ann") / INDEX
    stored = GraphFiles(root).load(DIM, "cosine")
    assert stored is not None
    assert stored.order is not None
    seqs = stored.seqs
    assert np.array_equal(seqs[stored.order], np.sort(seqs))
    _, metadata = _data(1, rows=ROWS)
    keys = [(metadata[s - 1]["resource_id"], metadata[s - 1]["thread_id"], int(s)) for s in seqs]
    assert keys == sorted(keys)  # seq is the row's rowid, from 1
    assert len({m["thread_id"] for m in metadata}) == USERS * THREADS
    (root / stored.build / "order.npy").unlink()
    monkeypatch.setattr(store_module, "_GRAPH_SCOPE_ROWS", 100)
    store = _store(path, threshold=300)
    try:
        for i, q in enumerate(_queries(24, 8)):
            flt = {"thread_id": f"u{i % USERS}-t{(i // USERS) % THREADS}"}
            a, e = await _pair(store, exact, q, flt)
            assert [r.id for r in a] == [r.id for r in e], flt
            _assert_exact_scores(a, e)
        assert not _loaded(store)
        assert len(store._scopes[INDEX]) == 0
    finally:
        await store.close()


@pytest.mark.timeout(120)
async def test_without_scope_indexes_a_build_keeps_seq_order(tmp_path: Path) -> None:
    path = tmp_path / "plain.db"
    vectors, metadata = _data(2, rows=400)
    store = _store(path, threshold=300)
    try:
        await store.create_index(INDEX, DIM, "cosine")
        await store.upsert(INDEX, vectors, metadata, [f"r{i:05d}" for i in range(400)])
        await store.build_ann_index(INDEX)
    finally:
        await store.close()
    stored = GraphFiles(Path(f"{path}.ann") / INDEX).load(DIM, "cosine")
    assert stored is not None
    assert np.array_equal(stored.seqs, np.arange(1, 401))


@pytest.mark.timeout(120)
async def test_a_store_opens_its_graphs_in_the_background(built: tuple[Path, SQLiteVector]) -> None:
    """Constructing a store on a file with a persisted graph opens that graph on a background thread; the
    first search uses that very graph (no second open) and answers as the exact route does. A file without a
    graph starts no thread."""
    path, exact = built
    store = _store(path)
    try:
        warming = store._ann._warming
        assert warming is not None
        opened = warming.result(timeout=60)
        assert set(opened) == {INDEX}
        q = _queries(25, 1)[0]
        a, e = await _pair(store, exact, q, {"resource_id": "u1"})
        assert [r.id for r in a] == [r.id for r in e]
        assert store._ann._graphs[INDEX] is opened[INDEX]
        assert not _loaded(store)
    finally:
        await store.close()
    plain = _store(path.with_name("other.db"))
    try:
        assert plain._ann._warming is None
        assert plain._ann._pool is None
    finally:
        await plain.close()


@pytest.mark.timeout(120)
async def test_a_scopes_positions_are_kept_until_a_write(
    built: tuple[Path, SQLiteVector], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thread searched again reuses the positions found the first time; after a write (its best row moved
    out of it, another thread's moved in onto the query, then deleted) they are found again and the answer
    follows."""
    path, exact = built
    monkeypatch.setattr(store_module, "_GRAPH_SCOPE_ROWS", 100)
    store = _store(path, threshold=300)
    thread = {"thread_id": "u1-t2"}
    try:
        q1, q2 = _queries(26, 2)
        for q in (q1, q2):
            a, e = await _pair(store, exact, q, thread)
            assert [r.id for r in a] == [r.id for r in e]
        graph = store._ann._graphs[INDEX]
        assert graph is not None
        held = graph.scopes._held
        assert len(held) == 1
        first = next(iter(held.values()))[1]
        a, _ = await _pair(store, exact, q1, thread)
        assert next(iter(held.values()))[1] is first  # reused, not found again
        out = a[0].id  # moved out of the thread, onto the query: its position must not count any more
        await store.update_vector(INDEX, id=out, update={"vector": q1.tolist(), "metadata": {
            "resource_id": "u0", "thread_id": "u0-t0", "role": "user", "created_at": 1}})  # fmt: skip
        a, e = await _pair(store, exact, q1, thread)
        assert out not in {r.id for r in a}
        assert [r.id for r in a] == [r.id for r in e]
        moved = "r00000"  # thread u0-t0
        await store.update_vector(INDEX, id=moved, update={"vector": q2.tolist(), "metadata": {
            "resource_id": "u1", "thread_id": "u1-t2", "role": "user", "created_at": 1}})  # fmt: skip
        a, e = await _pair(store, exact, q2, thread)
        assert a[0].id == moved
        assert [r.id for r in a] == [r.id for r in e]
        await store.delete_vectors(INDEX, ids=[moved])
        a, e = await _pair(store, exact, q2, thread)
        assert moved not in {r.id for r in a}
        assert [r.id for r in a] == [r.id for r in e]
        _assert_exact_scores(a, e)
        assert not _loaded(store)
    finally:
        await store.close()


def _mapped_kb(graph_file: str) -> int:
    """Resident kB of this process's mappings of ``graph_file`` (``/proc/self/smaps``)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if "-" in line.split(" ", 1)[0] and len(line.split()) >= 5:  # a mapping's header line
            inside = line.endswith(graph_file)
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


async def _wide_file(path: Path, rows: int = 20_000, dim: int = 64) -> np.random.Generator:
    """A file of ``rows`` random ``dim``-d vectors of two users, its graph built (5 MB of graph vectors at
    the defaults, of which one search visits a few hundred pages at most)."""
    rng = np.random.default_rng(28)
    builder = _store(path)
    try:
        await builder.create_index(INDEX, dim, "cosine", metadata_indexes=["resource_id"])
        for start in range(0, rows, 5_000):
            block = rng.standard_normal((5_000, dim), dtype=np.float32)
            meta = [{"resource_id": f"u{i % 2}"} for i in range(start, start + 5_000)]
            await builder.upsert(INDEX, block, meta, [f"r{i:05d}" for i in range(start, start + 5_000)])
        await builder.build_ann_index(INDEX)
    finally:
        await builder.close()
    return rng


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="needs Linux's /proc/self/smaps")
@pytest.mark.timeout(180)
async def test_map_in_maps_every_page_of_a_graphs_vectors(tmp_path: Path) -> None:
    """Opening a persisted graph maps its links, not its vectors; ``map_in`` then maps every page of them."""
    path = tmp_path / "mapped.db"
    await _wide_file(path)
    stored = GraphFiles(Path(f"{path}.ann") / INDEX).load(64, "cosine")
    assert stored is not None
    graph_file = str(Path(f"{path}.ann") / INDEX / stored.build / "graph.faiss")
    graph = AnnGraph(stored.index, stored.seqs, 64, "cosine", stored.generation, stored.build)
    block = graph.stored()
    before = _mapped_kb(graph_file)
    map_in(block, threading.Event())
    assert _mapped_kb(graph_file) - before >= 0.9 * block.nbytes / 1024


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="needs Linux's /proc/self/smaps")
@pytest.mark.timeout(180)
async def test_a_graph_in_use_gets_its_pages_mapped_in(tmp_path: Path) -> None:
    """The first search that uses the persisted graph has its vectors mapped in, in the background, once;
    opening it at start does not."""
    path = tmp_path / "mapped.db"
    rng = await _wide_file(path)
    store = _store(path, threshold=5_000)
    try:
        warming = store._ann._warming
        assert warming is not None
        graph = warming.result(timeout=60)[INDEX]
        assert not graph.mapped_in
        query = rng.standard_normal(64).tolist()
        assert len(await store.query(INDEX, query, top_k=K, filter={"resource_id": "u0"})) == K
        assert graph.mapped_in
        pool = store._ann._pool
        assert pool is not None
        pool.submit(lambda: None).result(timeout=60)  # one worker: the mapping has finished
        folder = Path(f"{path}.ann") / INDEX / graph.build
        assert _mapped_kb(str(folder / "graph.faiss")) >= graph.stored().nbytes // 1024
        assert not _loaded(store)
    finally:
        await store.close()
