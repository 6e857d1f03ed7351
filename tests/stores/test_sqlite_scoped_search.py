"""A scoped search on the SQLite store reads only that scope's slots, and stays exact (issue 28).

* A filter requiring a string at a top-level key (``resource_id``, ``thread_id``: every scoped recall) is
  evaluated over that key's postings alone: no array the size of the index is read (checked by counting
  the entries the evaluator looks at, not by timing).
* The postings may go stale (slots killed, reused, given another value; compaction); results stay equal to
  a brute-force recomputation after any interleaving of writes through this store and another store on
  the same file, with the postings rebuilt often (the rebuild threshold lowered) or never.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mastra_memory.filters import evaluate, parse
from mastra_memory.stores.sqlite import snapshot as snapshot_module
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


def _metadata(rng: random.Random) -> dict[str, Any]:
    user = rng.randrange(USERS)
    meta: dict[str, Any] = {
        "resource_id": f"u{user}",
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


@pytest.mark.parametrize("rebuild_min", [0, 10**9], ids=["rebuilt-often", "never-rebuilt"])
async def test_scoped_results_equal_a_recomputation_after_interleaved_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rebuild_min: int
) -> None:
    monkeypatch.setattr(Postings, "REBUILD_MIN", rebuild_min)
    path = str(tmp_path / "scoped.db")
    ours, theirs = SQLiteVector(path), SQLiteVector(path)
    rng = random.Random(28)
    records: dict[str, tuple[list[float], dict[str, Any]]] = {}
    try:
        await ours.create_index(INDEX, DIM)
        for step in range(150):
            writer = ours if rng.random() < 0.8 else theirs
            action = rng.choice(["upsert", "upsert", "upsert", "update", "delete_ids", "delete_filter"])
            if action == "upsert" or not records:
                ids = list(dict.fromkeys(f"r{rng.randrange(80)}" for _ in range(rng.randrange(1, 8))))
                rows = [(_vector(rng), _metadata(rng)) for _ in ids]
                await writer.upsert(INDEX, [r[0] for r in rows], [r[1] for r in rows], ids)
                records.update(zip(ids, rows, strict=True))
            elif action == "update":
                rid = rng.choice(sorted(records))
                meta = _metadata(rng)  # often another user: the slot changes value
                await writer.update_vector(INDEX, id=rid, update={"metadata": meta})
                records[rid] = (records[rid][0], meta)
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
            for flt in FILTERS:
                got = await reader.query(INDEX, query, top_k=5, filter=flt)
                assert [h.id for h in got] == _expected(records, query, flt), (step, flt)
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
