"""The LanceDB store on a real embedded database (a temporary directory per test)."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mastra_memory.filters import evaluate

from mastra_memory_lancedb.settings import LanceDBSettings
from mastra_memory_lancedb.store import LanceDBVector

DIM = 8
KEYS = [
    "a",
    "it'em",
    'qu"ote',
    "back\\slash",
    "'; DROP TABLE x; --",
    "br[ack]et",
    "😀",
    "new\nline",
    "sp ace",
]
VALUES: list[Any] = [
    None, True, False, 0, 1, 1.0, 2, -1.5, 0.5, 2**53 - 1, 2**63 - 1, 2**64 + 1, 1e300,
    "", "a", "b", "A", "'; DROP TABLE x; --", "' OR '1'='1", 'a"b', "back\\slash", "é", "😀", "nul\x00char",
    "line\nbreak", ["a", 1], [1, "a"], [None, 2], [], {"k": 1},
]  # fmt: skip


def vector(seed: int, dim: int = DIM) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(x) for x in rng.normal(size=dim)]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[LanceDBVector]:
    lance = LanceDBVector(LanceDBSettings(url=str(tmp_path / "db"), index_min_rows=256))
    yield lance
    await lance.close()


async def ids_matching(store: LanceDBVector, index: str, flt: dict[str, Any], n: int) -> set[str]:
    return {hit.id for hit in await store.query(index, vector(0), top_k=n, filter=flt)}


async def test_upsert_merges_on_id_and_never_overwrites(store: LanceDBVector) -> None:
    await store.create_index("docs", DIM)
    await store.upsert("docs", [vector(1), vector(2)], [{"v": 1}, {"v": 2}], ["a", "b"])
    await store.upsert("docs", [vector(3), vector(4)], [{"v": 3}, {"v": 4}], ["b", "c"])
    listed = await store.query("docs", None, top_k=10)
    assert {h.id: h.metadata for h in listed} == {"a": {"v": 1}, "b": {"v": 3}, "c": {"v": 4}}
    assert (await store.describe_index("docs")).count == 3


async def test_hostile_keys_and_values_round_trip_and_filter_exactly(store: LanceDBVector) -> None:
    records = {
        f"r{i}": {key: value, "n": i} for i, (key, value) in enumerate(itertools.product(KEYS, VALUES))
    }
    await store.create_index("hostile", DIM)
    await store.upsert(
        "hostile", [vector(i) for i in range(len(records))], list(records.values()), list(records)
    )
    stored = await store.query("hostile", None, top_k=len(records))
    assert {h.id: h.metadata for h in stored} == records  # lossless, types included
    scalars = [v for v in VALUES if not isinstance(v, (list, dict))]
    filters: list[dict[str, Any]] = []
    for key in KEYS:
        filters += [{key: value} for value in scalars]
        filters += [{key: {"$ne": "a"}}, {key: {"$gt": 0.5}}, {key: {"$lte": "b"}}, {key: {"$gte": ""}}]
        filters += [{key: {"$in": [1, "a", None]}}, {key: {"$nin": [2, "'; DROP TABLE x; --"]}}]
        filters += [{key: {"$exists": False}}, {key: {"$size": 2}}, {key: {"$regex": "^a|b$"}}]
        filters += [{key: {"$contains": "a"}}, {key: {"$all": ["a", 1]}}]
    for flt in filters:
        expected = {rid for rid, meta in records.items() if evaluate(flt, meta)}
        assert await ids_matching(store, "hostile", flt, len(records)) == expected, flt


async def test_metadata_indexes_build_label_list_indexes(store: LanceDBVector) -> None:
    await store.create_index("mem", DIM, metadata_indexes=["thread_id", "resource_id"])
    info = await store._open("QUERY", "mem")
    kinds = {tuple(i.columns): i.index_type for i in await info.table.list_indices()}
    assert kinds[("id",)] == "BTree"
    assert sorted(kinds[(column,)] for column in info.indexed.values()) == ["LabelList", "LabelList"]
    metas: list[dict[str, Any]] = [
        {"thread_id": "t1", "resource_id": "r1"},
        {"thread_id": ["t2", "t1"], "resource_id": "r1"},
        {"thread_id": 1, "resource_id": "r2"},
        {"resource_id": "r2"},
    ]
    await store.upsert("mem", [vector(i) for i in range(4)], metas, ["m0", "m1", "m2", "m3"])
    assert await ids_matching(store, "mem", {"thread_id": "t1"}, 10) == {"m0", "m1"}
    assert await ids_matching(store, "mem", {"thread_id": {"$in": ["t2", 1]}}, 10) == {"m1", "m2"}
    assert await ids_matching(store, "mem", {"thread_id": {"$ne": "t1"}}, 10) == {"m2", "m3"}
    both = {"$and": [{"resource_id": "r1"}, {"thread_id": "t2"}]}
    assert await ids_matching(store, "mem", both, 10) == {"m1"}


@pytest.mark.parametrize(
    ("config", "options"),
    [
        ({"type": "hnsw", "m": 8, "ef_construction": 32}, {}),
        ({"type": "ivfflat", "lists": 4}, {"quantization": "pq"}),
    ],
)
async def test_ann_indexes_reach_top_k_under_narrow_filters(
    store: LanceDBVector, config: dict[str, Any], options: dict[str, Any]
) -> None:
    n = 1200
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(n, 16))
    metas = [{"bucket": i % 100, "rare": i in (5, 600, 1100)} for i in range(n)]
    await store.create_index("ann", 16, metric="euclidean", index_config=config, **options)
    await store.upsert("ann", matrix.tolist(), metas, [f"v{i:04d}" for i in range(n)])
    info = await store._open("QUERY", "ann")
    assert info.has_ann
    assert any(list(i.columns) == ["vector"] for i in await info.table.list_indices())
    query = rng.normal(size=16)
    rare = await store.query("ann", query.tolist(), top_k=10, filter={"rare": True})
    assert {h.id for h in rare} == {"v0005", "v0600", "v1100"}  # min(top_k, matching), never fewer
    bucket = await store.query("ann", query.tolist(), top_k=10, filter={"bucket": 7})
    assert len(bucket) == 10
    assert all(int(h.id[1:]) % 100 == 7 for h in bucket)
    for hit in bucket:  # re-ranked with full vectors: portable scores are exact
        distance = np.linalg.norm(matrix[int(hit.id[1:])].astype(np.float32) - query)
        assert hit.score == pytest.approx(1 / (1 + distance), abs=1e-4)


async def test_long_undecided_match_lists_switch_to_an_exact_scan(store: LanceDBVector) -> None:
    n = 2600  # list-valued fields are judged by the evaluator; > 2000 matches cannot be an id list
    rng = np.random.default_rng(3)
    matrix = rng.normal(size=(n, DIM))
    metas = [{"tags": ["x", i % 3]} for i in range(n)]
    ids = [f"t{i:04d}" for i in range(n)]
    await store.create_index("scan", DIM, index_config={"type": "flat"})
    await store.upsert("scan", matrix.tolist(), metas, ids)
    query = rng.normal(size=DIM)
    hits = await store.query(
        "scan", query.tolist(), top_k=5, filter={"tags": {"$in": ["x"]}, "$nor": [{"tags": 0}]}
    )
    norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(query)
    scores = matrix @ query / norms
    wanted = sorted((i for i in range(n) if i % 3 != 0), key=lambda i: -scores[i])[:5]
    assert [h.id for h in hits] == [ids[i] for i in wanted]
    assert [h.score for h in hits] == pytest.approx([scores[i] for i in wanted], abs=1e-6)


async def test_update_and_delete_by_emulated_filters(store: LanceDBVector) -> None:
    await store.create_index("emu", DIM)
    metas: list[dict[str, Any]] = [{"s": "apple"}, {"s": "Banana"}, {"s": ["x", "banana"]}, {"t": 1}]
    await store.upsert("emu", [vector(i) for i in range(4)], metas, ["a", "b", "c", "d"])
    await store.update_vector(
        "emu", filter={"s": {"$regex": "an", "$options": "i"}}, update={"metadata": {"u": 1}}
    )
    listed = {h.id: h.metadata for h in await store.query("emu", None, top_k=10)}
    assert listed == {"a": {"s": "apple"}, "b": {"u": 1}, "c": {"u": 1}, "d": {"t": 1}}
    await store.delete_vectors("emu", filter={"s": {"$contains": "pp"}})
    assert {h.id for h in await store.query("emu", None, top_k=10)} == {"b", "c", "d"}
    await store.update_vector("emu", id="d", update={"vector": vector(9)})
    hit = (await store.query("emu", vector(9), top_k=1, include_vector=True))[0]
    assert hit.id == "d"
    assert hit.metadata == {"t": 1}
    assert hit.vector == pytest.approx(vector(9), abs=1e-6)


async def test_a_delete_that_matches_nothing_commits_no_table_version(store: LanceDBVector) -> None:
    # Every save deletes the stale vectors of its messages first (docs/spec.md §5.4); for new messages
    # that delete matches nothing and must not cost a Lance version (a write towards the next optimize).
    await store.create_index("mem", DIM, metadata_indexes=["message_id"])
    await store.upsert("mem", [vector(1), vector(2)], [{"message_id": "a"}, {"message_id": "b"}], ["a", "b"])
    info = await store._open("QUERY", "mem")
    before = await info.table.version()
    await store.delete_vectors("mem", filter={"message_id": {"$in": ["x", "y"]}})
    assert await info.table.version() == before
    assert info.writes == 1
    await store.delete_vectors("mem", filter={"message_id": {"$in": ["a", "x"]}})
    assert await info.table.version() == before + 1
    assert {h.id for h in await store.query("mem", None, top_k=10)} == {"b"}


async def test_a_label_index_on_a_key_unique_per_record_is_dropped_and_filters_stay_exact(
    tmp_path: Path,
) -> None:
    lance = LanceDBVector(LanceDBSettings(url=str(tmp_path / "db"), optimize_every=1))
    await lance.create_index("mem", DIM, metadata_indexes=["thread_id", "message_id"])
    n = 1200
    ids = [f"m{i}" for i in range(n)]
    metas: list[dict[str, Any]] = [{"thread_id": f"t{i % 10}", "message_id": r} for i, r in enumerate(ids)]
    metas[7]["message_id"] = ["m7", "alias"]  # a list value is matched element-wise, index or not
    await lance.upsert("mem", [vector(i) for i in range(n)], metas, ids)  # one write, then an optimize
    info = await lance._open("QUERY", "mem")
    kinds = {tuple(i.columns): i.index_type for i in await info.table.list_indices()}
    assert (info.indexed["message_id"],) not in kinds  # ~1 distinct value per row: bitmaps cost, not help
    assert kinds[(info.indexed["thread_id"],)] == "LabelList"  # 10 distinct values: kept
    flt: dict[str, Any] = {"message_id": {"$in": ["m5", "m700", "alias", "nope"]}}
    assert await ids_matching(lance, "mem", flt, 10) == {"m5", "m700", "m7"}
    assert await ids_matching(lance, "mem", {"thread_id": "t3"}, n) == set(ids[3::10])
    await lance.delete_vectors("mem", filter={"message_id": {"$in": ["m5", "alias"]}})
    assert (await lance.describe_index("mem")).count == n - 2
    await lance.close()


async def test_another_store_sees_writes_at_once(tmp_path: Path) -> None:
    url = str(tmp_path / "shared")
    first, second = LanceDBVector(url), LanceDBVector(url)
    await first.create_index("shared", DIM)
    await second.describe_index("shared")
    await first.upsert("shared", [vector(1)], [{"k": "v"}], ["x"])
    assert [h.id for h in await second.query("shared", vector(1), top_k=3, filter={"k": "v"})] == ["x"]
    await first.close()
    await second.close()


def test_settings_accept_mastra_spellings_and_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    assert LanceDBSettings.model_validate({"uri": "s3://b/db", "apiKey": "k"}).url == "s3://b/db"
    assert LanceDBSettings(url="lancedb:///data/lance").url == "/data/lance"
    monkeypatch.setenv("MASTRA_MEMORY_LANCEDB_URL", "/from/env")
    monkeypatch.setenv("MASTRA_MEMORY_LANCEDB_INDEX_MIN_ROWS", "1000")
    from_env = LanceDBSettings()
    assert (from_env.url, from_env.index_min_rows) == ("/from/env", 1000)
    with pytest.raises(ValueError, match="either url or uri"):
        LanceDBSettings.model_validate({"url": "a", "uri": "b"})
