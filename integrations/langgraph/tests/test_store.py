"""What ``MastraStore`` adds to LangGraph's contract, and what the contract leaves to a store: the filter
language (LangGraph's six operators against ``InMemoryStore``, typed errors before any I/O), tenant
isolation with hostile labels and keys, TTLs, values, batches, ``Memory`` as the backing store."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import GetOp, Item, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore
from mastra_memory import FilterError, Memory, ValidationError, create_vector

from mastra_memory_langgraph import MastraStore

from .conftest import OURS, StoreFactory, build
from .test_langgraph_store_tests import CharacterEmbeddings

pytestmark = pytest.mark.parametrize("kind", OURS)

# --- the filter language ------------------------------------------------------------------------------

OPERATORS = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]


def _records(rng: random.Random) -> list[dict[str, Any]]:
    # Numbers (ints and floats) and strings: the values on which LangGraph's InMemoryStore and §2.3 agree
    # (InMemoryStore reads True == 1 and compares "7" > 5 as numbers; §2.4 keeps types apart).
    return [
        {
            "n": rng.choice([0, 1, 2, 2.5, 3, -1, 10]),
            "m": rng.choice([0.5, 1, 4, 7]),
            # No "": its character embedding is a zero vector, which InMemoryStore scores 0 and a cosine
            # index cannot hold (docs/spec.md §3.3), so MastraStore leaves it unscored.
            "s": rng.choice(["apple", "banana", "cherry", "Banana", "date"]),
            **({"opt": rng.choice([1, 2])} if rng.random() < 0.5 else {}),
        }
        for _ in range(30)
    ]


def _filters(rng: random.Random) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for _ in range(60):
        flt: dict[str, Any] = {}
        for field in rng.sample(["n", "m", "s", "opt"], rng.randint(1, 2)):
            op = rng.choice(OPERATORS if field in ("n", "m") else ["$eq", "$ne"])
            operand: Any = (
                rng.choice(["apple", "Banana", "zzz"]) if field == "s" else rng.choice([0, 1, 2, 2.5, 7])
            )
            flt[field] = operand if op == "$eq" and rng.random() < 0.5 else {op: operand}
        out.append(flt)
    return out


def test_the_six_operators_select_what_langgraphs_store_selects(make_store: StoreFactory) -> None:
    rng = random.Random(29)
    reference, ours = InMemoryStore(), make_store()
    for i, value in enumerate(_records(rng)):
        reference.put(("docs",), f"k{i:02d}", value)
        ours.put(("docs",), f"k{i:02d}", value)
    for flt in _filters(rng):
        expected = [r.key for r in reference.search(("docs",), filter=flt, limit=100)]
        assert [r.key for r in ours.search(("docs",), filter=flt, limit=100)] == expected, flt


async def test_filters_combine_with_a_semantic_query(make_store: StoreFactory) -> None:
    rng = random.Random(7)
    reference = InMemoryStore(index={"dims": 64, "fields": ["s"], "embed": CharacterEmbeddings(dims=64)})
    ours = make_store(index={"dims": 64, "fields": ["s"], "embed": CharacterEmbeddings(dims=64)})
    for i, value in enumerate(_records(rng)):
        await reference.aput(("docs",), f"k{i:02d}", value)
        await ours.aput(("docs",), f"k{i:02d}", value)
    for flt in _filters(rng)[:20]:
        expected = await reference.asearch(("docs",), query="apple", filter=flt, limit=100)
        found = await ours.asearch(("docs",), query="apple", filter=flt, limit=100)
        assert {r.key for r in found} == {r.key for r in expected}, flt
        scores = {r.key: r.score for r in expected}
        for r in found:
            assert r.score == pytest.approx(scores[r.key], abs=1e-4)


def test_our_filter_language_goes_beyond_the_six(make_store: StoreFactory) -> None:
    store = make_store()
    store.put(("docs",), "a", {"tags": ["x", "y"], "n": 1, "user": {"age": 30}})
    store.put(("docs",), "b", {"tags": ["y"], "n": 2, "user": {"age": 40}})
    store.put(("docs",), "c", {"tags": [], "n": True})

    def keys(flt: dict[str, Any]) -> list[str]:
        return [r.key for r in store.search(("docs",), filter=flt)]

    assert keys({"tags": "x"}) == ["a"]  # an element of a list field (docs/spec.md §2.3)
    assert keys({"n": {"$in": [2, 5]}}) == ["b"]
    assert keys({"user.age": {"$gte": 35}}) == ["b"]
    assert keys({"$or": [{"n": 1}, {"tags": {"$size": 0}}]}) == ["a", "c"]
    assert keys({"n": 1}) == ["a"]  # True is not 1 (§2.4)
    assert keys({"n": {"$exists": False}}) == []


@pytest.mark.parametrize(
    "flt",
    [
        {"n": {"$foo": 1}},
        {"n": {"$gt": None}},
        {"$and": []},
        {"n": {"$regex": "(?i)x"}},
        {"n": {"$gt": 1, "m": 2}},
        {"n": {"$eq": [1, 2]}},
    ],
)
async def test_a_filter_we_cannot_honour_is_a_typed_error_before_any_io(
    make_store: StoreFactory, monkeypatch: pytest.MonkeyPatch, flt: dict[str, Any]
) -> None:
    store = make_store()
    assert isinstance(store, MastraStore)

    async def no_io(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the storage was read")

    monkeypatch.setattr(store.storage, "list_threads", no_io)
    with pytest.raises(FilterError):
        store.search(("docs",), filter=flt)
    with pytest.raises(FilterError):
        await store.asearch(("docs",), filter=flt, query="x")
    with pytest.raises(FilterError):  # one bad op fails its batch before any op runs
        await store.abatch([PutOp(("docs",), "k", {"n": 1}), SearchOp(("docs",), flt)])


# --- tenant isolation ---------------------------------------------------------------------------------

HOSTILE_LABELS = [
    "a",
    "ab",
    "a_%",
    "%",
    "*",
    "'; DROP TABLE mastra_threads; --",
    '"quoted"',
    "back\\slash",
    "with/slash",
    "lg_ns_0",
    "ünïcødé",
    "🙂",
    " ",
    "x" * 2000,
]
HOSTILE_KEYS = ["", "k", "../etc/passwd", "\x00", "key.with.dots", "$where", "ключ", "k" * 5000, "*", "%"]


def test_namespaces_never_leak_into_each_other(make_store: StoreFactory) -> None:
    store = make_store()
    namespaces: list[tuple[str, ...]] = [(label,) for label in HOSTILE_LABELS] + [
        ("users", label) for label in HOSTILE_LABELS
    ]
    namespaces += [("users", "a", "nested")]
    for ns in namespaces:
        for key in HOSTILE_KEYS:
            store.put(ns, key, {"ns": list(ns), "key": key})
    for ns in namespaces:
        for key in HOSTILE_KEYS:
            item = store.get(ns, key)
            assert item is not None
            assert item.value == {"ns": list(ns), "key": key}
        found = store.search(ns, limit=1000)
        assert {(r.namespace, r.key) for r in found} == {
            (other, key) for other in namespaces if other[: len(ns)] == ns for key in HOSTILE_KEYS
        }
    assert sorted(store.list_namespaces(limit=1000)) == sorted(namespaces)
    # A prefix is label by label, never text: ("a",) is not ("ab",) nor ("a_%",).
    assert {r.namespace for r in store.search(("a",), limit=1000)} == {("a",)}
    assert {r.namespace for r in store.search(("*",), limit=1000)} == {("*",)}
    assert store.get(("users",), "a") is None
    store.delete(("users", "a"), "k")
    assert store.get(("users", "a"), "k") is None
    assert store.get(("users", "a", "nested"), "k") is not None
    assert store.get(("a",), "k") is not None


async def test_scopes_on_one_storage_never_see_each_other(kind: str, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'shared.db'}"

    def vector() -> Any:
        return (
            create_vector(db) if kind == "sqlite" else create_vector("qdrant", edge_path=str(tmp_path / "e"))
        )

    index = {"dims": 32, "embed": "hash/32"}
    alice = MastraStore(db, vector=vector(), index=index, scope="tenant-alice")
    bob = MastraStore(db, vector=vector(), index=index, scope="tenant-bob")
    await alice.aput(("memories",), "seat", {"text": "window seat"})
    await bob.aput(("memories",), "seat", {"text": "aisle seat"})
    assert (await alice.aget(("memories",), "seat")).value == {"text": "window seat"}  # type: ignore[union-attr]
    assert (await bob.aget(("memories",), "seat")).value == {"text": "aisle seat"}  # type: ignore[union-attr]
    assert [r.value["text"] for r in await alice.asearch((), query="seat")] == ["window seat"]
    assert [r.value["text"] for r in await bob.asearch((), query="seat")] == ["aisle seat"]
    await bob.adelete(("memories",), "seat")
    assert await alice.aget(("memories",), "seat") is not None
    await alice.aclose()
    await bob.aclose()


# --- TTL ----------------------------------------------------------------------------------------------


async def test_expired_items_are_gone_and_swept(make_store: StoreFactory) -> None:
    store = make_store(index={"dims": 32, "embed": "hash/32"})
    assert isinstance(store, MastraStore)
    assert store.supports_ttl
    await store.aput(("t",), "short", {"text": "short lived"}, ttl=0.05)  # 3 s
    await store.aput(("t",), "long", {"text": "long lived"}, ttl=60)
    await store.aput(("t", "sub"), "forever", {"text": "forever"})
    assert {r.key for r in await store.asearch(("t",), query="lived")} == {"short", "long", "forever"}
    await asyncio.sleep(3.2)
    assert await store.aget(("t",), "short") is None
    assert {r.key for r in await store.asearch(("t",))} == {"long", "forever"}
    assert {r.key for r in await store.asearch(("t",), query="short lived")} == {"long", "forever"}
    assert await store.alist_namespaces() == [("t",), ("t", "sub")]
    assert await store.asweep_ttl() == 1
    assert await store.asweep_ttl() == 0
    assert store.semantic is not None
    stats = await store.semantic.vector.describe_index(store.semantic.index_name)
    assert stats.count == 2  # the swept item's vector went with it


async def test_reads_refresh_a_ttl_unless_told_not_to(make_store: StoreFactory) -> None:
    store = make_store(ttl={"default_ttl": 0.03, "refresh_on_read": True})
    assert isinstance(store, MastraStore)
    await store.aput(("t",), "k", {"v": 1})  # default_ttl applies: 1.8 s

    async def expires() -> int:
        stored = await store._load(("t",), "k")
        assert stored is not None
        assert stored.expires_at_ms is not None
        return stored.expires_at_ms

    first = await expires()
    await asyncio.sleep(0.05)
    await store.aget(("t",), "k", refresh_ttl=False)
    assert await expires() == first
    await store.aget(("t",), "k")
    assert await expires() > first
    refreshed = await expires()
    await asyncio.sleep(0.05)
    await store.asearch(("t",))
    assert await expires() > refreshed
    item = await store.aget(("t",), "k")
    assert item is not None
    assert item.updated_at == item.created_at


async def test_a_ttl_must_be_positive_minutes(make_store: StoreFactory) -> None:
    store = make_store()
    with pytest.raises(ValidationError):
        await store.aput(("t",), "k", {"v": 1}, ttl=-1)
    assert await store.aget(("t",), "k") is None


async def test_the_sweeper_runs_in_the_background(make_store: StoreFactory) -> None:
    store = make_store()
    assert isinstance(store, MastraStore)
    await store.aput(("t",), "k", {"v": 1}, ttl=0.001)
    await asyncio.sleep(0.1)
    task = await store.start_ttl_sweeper(sweep_interval_minutes=0.002)
    for _ in range(200):  # at most 10 s
        if not (await store.storage.list_threads({"resource_id": store.scope})).total:
            break
        await asyncio.sleep(0.05)
    assert (await store.storage.list_threads({"resource_id": store.scope})).total == 0
    await store.stop_ttl_sweeper()
    assert task.done()


# --- values, batches, Memory --------------------------------------------------------------------------


async def test_values_round_trip_and_timestamps_follow_updates(make_store: StoreFactory) -> None:
    store = make_store()
    value = {
        "text": "ünï 🙂",
        "nested": {"$key": [1, 2.5, None, True], "a.b": {"deep": "x"}},
        "": "empty key",
    }
    await store.aput(("v",), "k", value)
    first = await store.aget(("v",), "k")
    assert first is not None
    assert first.value == value
    await asyncio.sleep(0.01)
    await store.aput(("v",), "k", {"text": "changed"})
    second = await store.aget(("v",), "k")
    assert second is not None
    assert second.value == {"text": "changed"}
    assert second.created_at == first.created_at
    assert second.updated_at > first.updated_at


async def test_a_value_we_cannot_keep_is_refused_and_nothing_is_stored(make_store: StoreFactory) -> None:
    store = make_store(index={"dims": 32, "embed": "hash/32"})
    assert isinstance(store, MastraStore)
    with pytest.raises(ValidationError, match="not JSON"):
        await store.aput(("v",), "set", {"tags": {1, 2}})
    with pytest.raises(ValidationError, match="KiB"):
        await store.aput(("v",), "big", {"text": "x" * 70_000})
    assert await store.asearch(("v",)) == []
    assert store.semantic is not None
    assert (await store.semantic.vector.list_indexes()) == [] or (
        await store.semantic.vector.describe_index(store.semantic.index_name)
    ).count == 0


async def test_a_batch_runs_in_order(make_store: StoreFactory) -> None:
    store = make_store()
    results = await store.abatch(
        [
            PutOp(("b",), "k", {"v": 1}),
            GetOp(("b",), "k"),
            PutOp(("b",), "k", {"v": 2}),
            GetOp(("b",), "k"),
            PutOp(("b",), "k", None),
            GetOp(("b",), "k"),
            SearchOp(("b",)),
        ]
    )
    assert results[0] is None
    assert results[2] is None
    assert results[4] is None
    assert isinstance(results[1], Item)
    assert results[1].value == {"v": 1}
    assert isinstance(results[3], Item)
    assert results[3].value == {"v": 2}
    assert results[5] is None
    assert results[6] == []


async def test_a_memory_lends_its_storage_and_vector_store(kind: str, tmp_path: Path) -> None:
    memory = Memory(storage=f"sqlite:///{tmp_path / 'memory.db'}", embedder="hash/32")
    store = MastraStore(memory, index={"dims": 32, "embed": "hash/32"})
    assert store.storage is memory.storage
    await store.aput(("m",), "k", {"text": "kept beside the conversations"})
    assert [r.key for r in await store.asearch(("m",), query="kept")] == ["k"]
    # The items are threads of the store's own resource, apart from every user's conversations.
    assert (await memory.storage.list_threads({"resource_id": "user-1"})).total == 0
    await memory.close()


async def test_without_a_vector_store_the_index_shares_the_sqlite_file(kind: str, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'one.db'}"
    store = MastraStore(db, index={"dims": 32, "embed": "hash/32"})  # as Memory(storage=db) would
    await store.aput(("m",), "k", {"text": "one file"})
    assert [r.key for r in await store.asearch(("m",), query="one file")] == ["k"]
    vector = create_vector(db)
    assert (await vector.describe_index("langgraph_store")).count == 1
    await vector.close()
    await store.aclose()


def test_a_bad_index_config_is_refused(kind: str, tmp_path: Path) -> None:
    from mastra_memory import ConfigError

    with pytest.raises(ConfigError, match="dims"):
        build(kind, tmp_path, index={"dims": 0, "embed": "hash/8"})
    with pytest.raises(ConfigError, match="embed"):
        build(kind, tmp_path, index={"dims": 8})


async def test_a_label_no_storage_can_hold_is_refused_before_any_write(make_store: StoreFactory) -> None:
    store = make_store()
    with pytest.raises(ValidationError):  # an unpaired surrogate is not Unicode text (docs/spec.md §4.1)
        await store.aput(("\ud800",), "k", {"v": 1})
    assert await store.alist_namespaces() == []
    await store.aput(("ok",), "\ud800", {"v": 1})  # a key is kept inside the JSON text, escaped
    item = await store.aget(("ok",), "\ud800")
    assert item is not None
    assert item.key == "\ud800"
