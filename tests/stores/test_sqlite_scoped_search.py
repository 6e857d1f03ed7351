"""A scoped search on the SQLite store reads only that scope's slots, and stays exact (issue 28).

* A filter requiring a string at a top-level key (``resource_id``, ``thread_id``: every scoped recall) is
  evaluated over that key's postings alone: no array the size of the index is read (checked by counting
  the entries the evaluator looks at, not by timing).
* The postings may go stale (slots killed, reused, given another value; compaction); results stay equal to
  a brute-force recomputation after any interleaving of writes through this store and another store on
  the same file, with the postings rebuilt often (the rebuild threshold lowered) or never.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mastra_memory.filters import evaluate, parse
from mastra_memory.stores.sqlite import snapshot as snapshot_module
from mastra_memory.stores.sqlite.scopes import ScopeCache, nonscalar_probe_sql, scopes_of, value_sql
from mastra_memory.stores.sqlite.snapshot import Postings, Snapshot, matching_slots
from mastra_memory.stores.sqlite.store import SQLiteVector

INDEX = "scoped"
DIM = 4
USERS = 5
FILTERS: list[dict[str, Any]] = [
    {"resource_id": "u1"},
    {"thread_id": "u2-t1"},
    {"resource_id": "u0", "thread_id": "u0-t0"},
    {"resource_id": {"$in": ["u1", "u3"]}},
    {"resource_id": "u4", "n": {"$gte": 3}},
    {"resource_id": "u2", "$or": [{"role": "user"}, {"n": {"$lt": 2}}]},
    {"resource_id": "nobody"},
    {"resource_id": "u3", "thread_id": {"$ne": "u3-t0"}},
]


def _metadata(rng: random.Random, lists: bool = False) -> dict[str, Any]:
    user = rng.randrange(USERS)
    meta: dict[str, Any] = {
        "resource_id": [f"u{user}"] if lists and rng.random() < 0.05 else f"u{user}",
        "thread_id": f"u{user}-t{rng.randrange(3)}",
        "role": rng.choice(["user", "assistant"]),
    }
    if rng.random() < 0.8:
        meta["n"] = rng.randrange(6)
    return meta


def _vector(rng: random.Random) -> list[float]:
    return [rng.uniform(-1, 1) for _ in range(DIM)]


def _expected(
    records: dict[str, tuple[list[float], dict[str, Any]]], query: list[float], flt: Any
) -> list[str]:
    q = np.asarray(query)
    scored = []
    for rid, (vector, meta) in records.items():
        if evaluate(flt, meta):
            v = np.asarray(vector)
            scored.append((-float(v @ q / (np.linalg.norm(v) * np.linalg.norm(q))), rid))
    return [rid for _, rid in sorted(scored)[:5]]


@pytest.mark.parametrize(
    ("rebuild_min", "indexed", "scope_rows", "lists"),
    [
        (0, False, 0, False),
        (10**9, False, 0, False),
        (10**9, True, 10**6, False),  # scope snapshots, patched by our writes
        (0, True, 25, False),  # scope snapshots evicted as soon as they outgrow a tiny budget
        (0, True, 10**6, True),  # now and then a list at resource_id: its scopes give way to the index
    ],
    ids=["postings-rebuilt-often", "postings-never-rebuilt", "scopes", "scopes-small-budget", "lists"],
)
async def test_scoped_results_equal_a_recomputation_after_interleaved_writes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    rebuild_min: int,
    indexed: bool,
    scope_rows: int,
    lists: bool,
) -> None:
    monkeypatch.setattr(Postings, "REBUILD_MIN", rebuild_min)
    patched: list[bool] = []
    real_upsert = ScopeCache.upsert

    def counting(*args: Any) -> bool:
        patched.append(real_upsert(*args))
        return patched[-1]

    monkeypatch.setattr(ScopeCache, "upsert", staticmethod(counting))
    path = str(tmp_path / "scoped.db")
    ours, theirs = SQLiteVector(path, scope_rows=scope_rows), SQLiteVector(path, scope_rows=scope_rows)
    rng = random.Random(28)
    records: dict[str, tuple[list[float], dict[str, Any]]] = {}
    try:
        keys = ["resource_id", "thread_id"] if indexed else []
        await ours.create_index(INDEX, DIM, metadata_indexes=keys)
        for step in range(150):
            writer = ours if rng.random() < 0.8 else theirs
            action = rng.choice(["upsert", "upsert", "upsert", "update", "delete_ids", "delete_filter"])
            if action == "upsert" or not records:
                ids = list(dict.fromkeys(f"r{rng.randrange(80)}" for _ in range(rng.randrange(1, 8))))
                rows = [(_vector(rng), _metadata(rng, lists=lists)) for _ in ids]
                await writer.upsert(INDEX, [r[0] for r in rows], [r[1] for r in rows], ids)
                records.update(zip(ids, rows, strict=True))
            elif action == "update":
                rid = rng.choice(sorted(records))
                vector, meta = records[rid]
                if rng.random() < 0.3:
                    vector = _vector(rng)
                    await writer.update_vector(INDEX, id=rid, update={"vector": vector})
                else:
                    meta = _metadata(rng)  # often another user: the row changes scope
                    await writer.update_vector(INDEX, id=rid, update={"metadata": meta})
                records[rid] = (vector, meta)
            elif action == "delete_ids":
                gone = rng.sample(sorted(records), k=min(len(records), rng.randrange(1, 10)))
                await writer.delete_vectors(INDEX, ids=gone)
                for rid in gone:
                    del records[rid]
            else:
                flt = {"resource_id": f"u{rng.randrange(USERS)}"}
                await writer.delete_vectors(INDEX, filter=flt)
                records = {rid: r for rid, r in records.items() if not evaluate(flt, r[1])}
            query = _vector(rng)
            reader = ours if step % 4 else theirs
            # Indexed: only scoped filters, as Memory sends; another would load the whole index for good.
            for flt in [f for f in FILTERS if not indexed or list(scopes_of(parse(f)))]:
                got = await reader.query(INDEX, query, top_k=5, filter=flt)
                assert [h.id for h in got] == _expected(records, query, flt), (step, flt)
        if indexed and not lists:
            assert True in patched  # scope snapshots were used and patched by our writes
    finally:
        await ours.close()
        await theirs.close()


def _snapshot(users: int, per_user: int) -> Snapshot:
    rows = users * per_user
    ids = [f"r{i}" for i in range(rows)]
    matrix = np.ones((rows, DIM), dtype=np.float32)
    snap = Snapshot("g", np.arange(1, rows + 1, dtype=np.int64), ids, matrix)
    metadata = {seq: {"resource_id": f"u{(seq - 1) % users}", "n": seq % 7} for seq in range(1, rows + 1)}

    def load(path: str) -> Any:
        key = path[3:-1]
        for seq, meta in metadata.items():
            value = meta.get(key)
            kind = None if value is None else ("text" if isinstance(value, str) else "integer")
            yield seq, kind, value

    snap.column("resource_id", load)
    snap.column("n", load)
    return snap


def test_a_scoped_filter_reads_only_the_scope(monkeypatch: pytest.MonkeyPatch) -> None:
    snap = _snapshot(users=50, per_user=20)  # 1,000 slots, 20 per user
    seen: list[int] = []
    real = snapshot_module._Evaluator._at

    def counting(self: Any, values: Any) -> Any:
        out = real(self, values)
        seen.append(int(out.size))
        return out

    monkeypatch.setattr(snapshot_module._Evaluator, "_at", counting)
    for flt, expected in [
        ({"resource_id": "u7"}, [s for s in range(1000) if s % 50 == 7]),
        (
            {"resource_id": "u7", "n": {"$gte": 3}},
            [s for s in range(1000) if s % 50 == 7 and (s + 1) % 7 >= 3],
        ),
    ]:
        seen.clear()
        slots = matching_slots(parse(flt), snap, lambda path: iter(()))
        assert slots is not None
        assert slots.tolist() == expected
        assert seen
        assert max(seen) <= 20, seen  # the user's 20 slots, never the 1,000

    # Without a string equality to narrow by, the whole snapshot is evaluated, as before.
    seen.clear()
    assert matching_slots(parse({"n": {"$gte": 3}}), snap, lambda path: iter(())) is not None
    assert max(seen) == 1000


async def test_a_cold_scoped_query_reads_only_the_scope(tmp_path: Path) -> None:
    path = str(tmp_path / "users.db")
    writer = SQLiteVector(path)
    rng = random.Random(7)
    try:
        await writer.create_index(INDEX, DIM, metadata_indexes=["thread_id", "resource_id", "message_id"])
        metas = [{"resource_id": f"u{i % 20}", "thread_id": f"u{i % 20}-t{i % 3}"} for i in range(400)]
        await writer.upsert(INDEX, [_vector(rng) for _ in metas], metas, [f"r{i}" for i in range(400)])
    finally:
        await writer.close()
    reader = SQLiteVector(path)  # a fresh process would start like this: nothing loaded
    try:
        query = _vector(rng)
        got = await reader.query(INDEX, query, top_k=3, filter={"resource_id": "u3"})
        assert {h.metadata["resource_id"] for h in got} == {"u3"}
        assert reader._snapshots == {}  # the whole matrix was never read
        cache = reader._scopes[INDEX]
        assert len(cache) == 1
        assert cache._rows == 20  # u3's rows alone
        # A write of this store to that scope patches it (no reload); the new row is found.
        await reader.upsert(INDEX, [query], [{"resource_id": "u3", "thread_id": "u3-t0"}], ["new"])
        got = await reader.query(INDEX, query, top_k=1, filter={"resource_id": "u3"})
        assert [h.id for h in got] == ["new"]
        assert cache._rows == 21
        # A list at the key: $eq traverses it, the expression index cannot; the whole index answers.
        await reader.upsert(INDEX, [query], [{"resource_id": ["u3", "u4"]}], ["listed"])
        got = await reader.query(INDEX, query, top_k=2, filter={"resource_id": "u3"})
        assert sorted(h.id for h in got) == ["listed", "new"]
        assert INDEX in reader._snapshots
    finally:
        await reader.close()


def test_the_scope_queries_use_their_indexes(tmp_path: Path) -> None:
    async def make() -> None:
        store = SQLiteVector(str(tmp_path / "plan.db"))
        try:
            await store.create_index(INDEX, DIM, metadata_indexes=["resource_id"])
        finally:
            await store.close()

    asyncio.run(make())
    table = f'"mastra_vectors__{INDEX}"'
    with sqlite3.connect(tmp_path / "plan.db") as conn:
        for sql, params in [
            (nonscalar_probe_sql(table, "resource_id"), ()),
            (
                f"SELECT seq, id, vector FROM {table} WHERE {value_sql('resource_id')} = ? ORDER BY seq",
                ("u",),
            ),
        ]:
            plan = " ".join(str(r[-1]) for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))
            assert "USING INDEX" in plan or "USING COVERING INDEX" in plan, plan


# (no integer beyond 2**53 here: one would send the key to the SQL, and the column would go untested)
KEY_VALUES: list[Any] = [None, True, False, 0, 1, 1.0, 0.0, 2, -3.5, "0", "1", "a", "", "missing"]
KEY_FILTERS: list[dict[str, Any]] = [
    {"k": None},
    {"k": True},
    {"k": False},
    {"k": 1},
    {"k": 0},
    {"k": "1"},
    {"k": {"$exists": False}},
    {"k": {"$exists": True}},
    {"k": {"$ne": None}},
    {"k": {"$gte": 1}},
    {"k": {"$in": [0, "a", True]}},
    {"k": {"$lt": 1}},
]


async def test_a_column_read_from_the_metadata_index_equals_one_read_from_the_json(tmp_path: Path) -> None:
    # The expression index cannot tell null from missing, nor true/false from 1/0: those rows are read again.
    rng = random.Random(3)
    records: dict[str, tuple[list[float], dict[str, Any]]] = {}
    for i in range(90):
        value = KEY_VALUES[i % len(KEY_VALUES)]
        records[f"r{i}"] = (_vector(rng), {} if value == "missing" else {"k": value})
    for indexed in (["k"], []):
        store = SQLiteVector(str(tmp_path / f"k{len(indexed)}.db"))
        try:
            await store.create_index(INDEX, DIM, metadata_indexes=indexed)
            ids = sorted(records)
            await store.upsert(INDEX, [records[i][0] for i in ids], [records[i][1] for i in ids], ids)
            query = _vector(rng)
            for flt in KEY_FILTERS:
                got = await store.query(INDEX, query, top_k=5, filter=flt)
                assert [h.id for h in got] == _expected(records, query, flt), (indexed, flt)
            assert "k" in store._snapshots[INDEX].columns  # answered from the column, not the SQL
        finally:
            await store.close()
