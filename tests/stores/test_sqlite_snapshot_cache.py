"""The SQLite store's in-memory snapshot, columnar filters and translation cache stay exact (issue 19).

* Writes through this store patch the cached matrix instead of reloading it, and the results stay equal to
  a brute-force recomputation (numpy scores over every record, the reference evaluator for filters) after
  any interleaving of upserts, updates and deletes through this store and through a second store on the
  same file (another connection, as another process would write).
* Filters on top-level keys run over columnar copies only while no row holds a list or an object (or an
  integer beyond float64) at the key; one such value sends the key back to the exact SQL, and the result is
  the same either way.
* The stale-vector delete of every save (``message_id $in [...]``) is answered from the index Memory asks
  for (EXPLAIN QUERY PLAN, not timing).
* The translation cache never merges filters that translate differently (``1``, ``1.0``, ``True``; two
  tenants' ids).
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mastra_memory.filters import evaluate, parse
from mastra_memory.memory.index.indexer import MessageIndexer
from mastra_memory.stores.sqlite.snapshot import evaluate_filter
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector
from mastra_memory.stores.sqlite.translate import register_sql_functions, translate_cached
from mastra_memory.stores.sqlite.vector_rows import column_rows

from .test_sqlite_filter_differential import check_record_set, operator_documents, scalar_lists, scalars

INDEX = "snap"
DIM = 4
FILTERS: list[dict[str, Any] | None] = [
    None,
    {"tenant": "t1"},
    {"tenant": {"$in": ["t0", "t2"]}},
    {"n": {"$gte": 3, "$lt": 7}},
    {"$or": [{"tenant": "t1"}, {"n": {"$lt": 2}}]},
    {"tenant": {"$ne": "t0"}, "flag": True},
    {"n": {"$exists": False}},
    {"label": {"$gt": "b"}},
    {"label": {"$regex": "^a"}},
]


def _metadata(rng: random.Random) -> dict[str, Any]:
    meta: dict[str, Any] = {"tenant": f"t{rng.randrange(3)}", "label": rng.choice(["a", "ab", "b", "c"])}
    if rng.random() < 0.8:
        meta["n"] = rng.choice([rng.randrange(10), rng.randrange(10) + 0.5])
    if rng.random() < 0.5:
        meta["flag"] = rng.random() < 0.5
    return meta


def _vector(rng: random.Random) -> list[float]:
    return [rng.uniform(-1, 1) for _ in range(DIM)]


def _expected(
    records: dict[str, tuple[list[float], dict[str, Any]]], query: list[float], flt: Any, k: int
) -> list[tuple[str, float]]:
    """Brute force: cosine in float64 over every record the reference evaluator accepts, (-score, id)."""
    q = np.asarray(query)
    scored = []
    for rid, (vector, meta) in records.items():
        if flt is not None and not evaluate(flt, meta):
            continue
        v = np.asarray(vector)
        scored.append((rid, float(v @ q / (np.linalg.norm(v) * np.linalg.norm(q)))))
    scored.sort(key=lambda item: (-item[1], item[0]))
    return scored[:k]


async def _check(
    store: SQLiteVector, records: dict[str, tuple[list[float], dict[str, Any]]], rng: random.Random
) -> None:
    query = _vector(rng)
    for flt in FILTERS:
        got = await store.query(INDEX, query, top_k=5, filter=flt)
        want = _expected(records, query, flt, 5)
        assert [h.id for h in got] == [rid for rid, _ in want], flt
        assert [h.score for h in got] == pytest.approx([s for _, s in want], abs=1e-5)
        for hit in got:
            assert hit.metadata == records[hit.id][1]


async def test_the_patched_snapshot_equals_a_recomputation_after_interleaved_writes(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    ours, theirs = SQLiteVector(path), SQLiteVector(path)
    rng = random.Random(19)
    records: dict[str, tuple[list[float], dict[str, Any]]] = {}
    try:
        await ours.create_index(INDEX, DIM)
        for step in range(160):
            writer = ours if rng.random() < 0.75 else theirs
            action = rng.choice(
                ["upsert", "upsert", "update_id", "update_filter", "delete_ids", "delete_filter"]
            )
            if action == "upsert" or not records:
                ids = [f"r{rng.randrange(60)}" for _ in range(rng.randrange(1, 6))]
                ids = list(dict.fromkeys(ids))
                rows = [(_vector(rng), _metadata(rng)) for _ in ids]
                await writer.upsert(INDEX, [r[0] for r in rows], [r[1] for r in rows], ids)
                records.update(zip(ids, rows, strict=True))
            elif action == "update_id":
                rid = rng.choice(sorted(records))
                vector, meta = records[rid]
                if rng.random() < 0.5:
                    vector = _vector(rng)
                    await writer.update_vector(INDEX, id=rid, update={"vector": vector})
                else:
                    meta = _metadata(rng)
                    await writer.update_vector(INDEX, id=rid, update={"metadata": meta})
                records[rid] = (vector, meta)
            elif action == "update_filter":
                flt = {"tenant": f"t{rng.randrange(3)}", "n": {"$lt": 5}}
                meta = _metadata(rng)
                hit = [rid for rid, (_, m) in records.items() if evaluate(flt, m)]
                if hit:
                    await writer.update_vector(INDEX, filter=flt, update={"metadata": meta})
                    records.update({rid: (records[rid][0], meta) for rid in hit})
            elif action == "delete_ids":
                gone = rng.sample(sorted(records), k=min(len(records), rng.randrange(1, 8)))
                await writer.delete_vectors(INDEX, ids=[*gone, "never-stored"])
                for rid in gone:
                    del records[rid]
            else:
                flt = {"label": rng.choice(["a", "c"]), "tenant": f"t{rng.randrange(3)}"}
                await writer.delete_vectors(INDEX, filter=flt)
                records = {rid: r for rid, r in records.items() if not evaluate(flt, r[1])}
            await _check(ours if step % 3 else theirs, records, rng)
    finally:
        await ours.close()
        await theirs.close()


async def test_own_writes_patch_the_snapshot_and_a_foreign_write_reloads_it(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    ours, theirs = SQLiteVector(path), SQLiteVector(path)
    try:
        await ours.create_index(INDEX, DIM)
        await ours.upsert(INDEX, [[1, 0, 0, 0], [0, 1, 0, 0]], [{"k": "a"}, {"k": "b"}], ["x", "y"])
        assert [h.id for h in await ours.query(INDEX, [1, 0, 0, 0], top_k=1, filter={"k": "a"})] == ["x"]
        loaded = ours._snapshots[INDEX]
        await ours.upsert(INDEX, [[0, 0, 1, 0]], [{"k": "a"}], ["z"])  # append
        await ours.upsert(INDEX, [[0, 1, 0, 0]], [{"k": "c"}], ["x"])  # replace in place
        await ours.delete_vectors(INDEX, ids=["y"])  # tombstone
        await ours.delete_vectors(INDEX, ids=["z"])  # the last row: its seq is given out again
        await ours.upsert(INDEX, [[0, 0, 1, 0]], [{"k": "a"}], ["z"])
        hits = await ours.query(INDEX, [0, 0, 1, 0], top_k=5, filter={"k": "a"})
        assert [h.id for h in hits] == ["z"]
        assert ours._snapshots[INDEX] is loaded  # patched, never reloaded
        await theirs.upsert(INDEX, [[1, 0, 0, 0]], [{"k": "a"}], ["w"])  # another connection
        hits = await ours.query(INDEX, [1, 0, 0, 0], top_k=5, filter={"k": "a"})
        assert [h.id for h in hits] == ["w", "z"]
        assert ours._snapshots[INDEX] is not loaded  # the foreign delta was seen: reloaded
    finally:
        await ours.close()
        await theirs.close()


async def test_mass_deletes_compact_the_snapshot_and_keep_results_exact() -> None:
    store = SQLiteVector(":memory:")
    rng = random.Random(5)
    try:
        await store.create_index(INDEX, DIM)
        records = {f"r{i:03d}": (_vector(rng), _metadata(rng)) for i in range(400)}
        ids = list(records)
        await store.upsert(INDEX, [records[i][0] for i in ids], [records[i][1] for i in ids], ids)
        await _check(store, records, rng)
        for start in range(0, 360, 40):
            gone = ids[start : start + 40]
            await store.delete_vectors(INDEX, ids=gone)
            for rid in gone:
                del records[rid]
            await _check(store, records, rng)
        assert store._snapshots[INDEX].n < 400  # tombstones were compacted away
    finally:
        await store.close()


@pytest.mark.parametrize(
    ("odd", "flt"),
    [
        (["r1", "r9"], {"resource_id": "r1"}),  # a list: equality is element-wise
        ({"r1": 1}, {"resource_id": {"$exists": True}}),  # an object
        (2**60 + 1, {"resource_id": {"$gte": 0}}),  # an integer float64 cannot hold exactly
        (-(2**60) - 1, {"$not": {"resource_id": {"$lt": 0}}}),
    ],
)
async def test_an_odd_value_sends_the_key_back_to_exact_sql(odd: Any, flt: dict[str, Any]) -> None:
    store = SQLiteVector(":memory:")
    try:
        await store.create_index(INDEX, DIM)
        records = {f"p{i}": ([1.0, float(i), 0.0, 0.0], {"resource_id": f"r{i % 3}"}) for i in range(6)}
        ids = list(records)
        await store.upsert(INDEX, [records[i][0] for i in ids], [records[i][1] for i in ids], ids)
        node = parse(flt)

        async def in_memory() -> bool:
            """Whether the columnar evaluator answers ``node`` (run on the store's worker thread)."""

            def decide(conn: sqlite3.Connection) -> bool:
                snapshot = store._snapshots[INDEX]
                return evaluate_filter(node, snapshot, partial(column_rows, conn, INDEX, None)) is not None

            return await store._db.run(decide)

        async def same_as_evaluator() -> None:
            got = await store.query(INDEX, [1.0, 0.0, 0.0, 0.0], top_k=20, filter=flt)
            assert sorted(h.id for h in got) == sorted(r for r, (_, m) in records.items() if evaluate(flt, m))

        await same_as_evaluator()
        assert await in_memory()  # plain strings: answered from the column
        await store.upsert(INDEX, [[1.0, 9.0, 0.0, 0.0]], [{"resource_id": odd}], ["odd"])
        records["odd"] = ([1.0, 9.0, 0.0, 0.0], {"resource_id": odd})
        await same_as_evaluator()
        assert not await in_memory()  # the facts changed: the exact SQL decides
        await store.delete_vectors(INDEX, ids=["odd"])
        del records["odd"]
        await same_as_evaluator()
        assert await in_memory()  # the odd row is gone: back to the column
    finally:
        await store.close()


async def test_the_save_delete_by_message_id_uses_the_index(tmp_path: Path) -> None:
    path = str(tmp_path / "memory.db")
    vector, storage = SQLiteVector(path), SQLiteStorage(path)
    try:
        name = await MessageIndexer(storage, vector, None).ensure_index(DIM)
        fragment = vector.translate_filter({"message_id": {"$in": ["m1", "m2", "m3"]}})
    finally:
        await vector.close()
        await storage.close()
    with sqlite3.connect(path) as conn:
        register_sql_functions(conn)
        plan = [
            row[3]
            for row in conn.execute(
                f'EXPLAIN QUERY PLAN DELETE FROM "mastra_vectors__{name}" WHERE {fragment.sql} RETURNING seq',
                dict(fragment.params),
            )
        ]
    table_steps = [step for step in plan if f"mastra_vectors__{name}" in step]
    assert table_steps, plan
    assert all(step.startswith("SEARCH") and "USING INDEX" in step for step in table_steps), plan


async def test_the_translation_cache_keeps_types_and_tenants_apart() -> None:
    store = SQLiteVector(":memory:")
    try:
        await store.create_index(INDEX, DIM)
        values: list[Any] = [1, 1.5, True, "1", None]
        ids = [f"v{i}" for i in range(len(values))]
        await store.upsert(
            INDEX, [[1.0, float(i), 0, 0] for i in range(len(values))], [{"a": v} for v in values], ids
        )
        for operand in [1, 1.0, True, "1", "t1", "t2", None]:
            for _ in range(2):  # the second query is served from the cache
                got = await store.query(INDEX, [1.0, 0, 0, 0], top_k=10, filter={"a": operand})
                want = {rid for rid, v in zip(ids, values, strict=True) if evaluate({"a": operand}, {"a": v})}
                assert {h.id for h in got} == want, operand
        one, true = translate_cached(parse({"a": 1})), translate_cached(parse({"a": True}))
        assert one.sql != true.sql
        assert translate_cached(parse({"a": 1})) is one  # a hit
        t1, t2 = (
            translate_cached(parse({"resource_id": "t1"})),
            translate_cached(parse({"resource_id": "t2"})),
        )
        assert list(t1.params.values()) != list(t2.params.values())
    finally:
        await store.close()


async def test_appends_beyond_the_spare_rows_keep_results_exact() -> None:
    store = SQLiteVector(":memory:")
    rng = random.Random(8)
    try:
        await store.create_index(INDEX, DIM)
        records: dict[str, tuple[list[float], dict[str, Any]]] = {}
        for batch in range(8):  # loaded with 10 rows, then 3,500 more: the arrays grow twice
            ids = [f"g{batch}-{i:04d}" for i in range(10 if batch == 0 else 500)]
            rows = [(_vector(rng), _metadata(rng)) for _ in ids]
            await store.upsert(INDEX, [r[0] for r in rows], [r[1] for r in rows], ids)
            records.update(zip(ids, rows, strict=True))
            await _check(store, records, rng)
        assert store._snapshots[INDEX].n == len(records)
    finally:
        await store.close()


# Plain scalars only (no list, no object): the metadata on which the columnar evaluator answers, and
# filters over the same top-level keys with every operator of the differential test.
PLAIN_KEYS = ("a", "b", "é", "d$ollar")
plain_metadata = st.dictionaries(st.sampled_from(PLAIN_KEYS), scalars, max_size=4)
_keys = st.sampled_from(PLAIN_KEYS)
plain_leaves = st.one_of(
    st.builds(lambda k, v: {k: v}, _keys, scalars),
    st.builds(lambda k, vs: {k: vs}, _keys, scalar_lists),
    st.builds(lambda k, d: {k: d}, _keys, operator_documents(st.builds(lambda k, v: {k: v}, _keys, scalars))),
)
plain_filters = st.recursive(
    plain_leaves,
    lambda inner: st.one_of(
        st.builds(
            lambda op, cs: {op: cs},
            st.sampled_from(("$and", "$or", "$nor")),
            st.lists(inner, min_size=1, max_size=3),
        ),
        st.builds(lambda d: {"$not": d}, inner),
    ),
    max_leaves=5,
)


def test_columnar_filters_equal_the_reference_evaluator() -> None:
    profile = settings()

    @settings(profile, max_examples=max(profile.max_examples // 2, 50))
    @given(records=st.lists(plain_metadata, max_size=8), flts=st.lists(plain_filters, min_size=4, max_size=8))
    def compare(records: list[dict[str, Any]], flts: list[dict[str, Any]]) -> None:
        async def scenario() -> None:
            store = SQLiteVector(":memory:")
            try:
                await check_record_set(store, records, flts)
            finally:
                await store.close()

        asyncio.run(scenario())

    compare()
