"""``PineconeVector`` against the adapter's Pinecone emulator through the official SDK (loopback HTTP)."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from mastra_memory import sync
from mastra_memory.errors import CapabilityError, IndexNotFoundError, ValidationError
from mastra_memory.plugins import create_vector

from mastra_memory_pinecone.settings import PineconeSettings
from mastra_memory_pinecone.store import PineconeVector, native_index_name
from mastra_memory_pinecone.testing.emulator import PineconeEmulator, running_emulator

from .conftest import settings_for


def vec(*head: float, dim: int = 4) -> list[float]:
    return [*head, *([0.0] * (dim - len(head)))]


async def test_reads_wait_for_indexing(store: PineconeVector, emulator: PineconeEmulator) -> None:
    """Writes are not visible at once; wait_for_indexing returns once they are."""
    await store.create_index("fresh", 4)
    await store.upsert("fresh", [vec(1.0), vec(0.0, 1.0)], [{"k": "a"}, {"k": "b"}], ["a", "b"])
    assert await store.query("fresh", vec(1.0), top_k=5) == []  # eventually consistent
    await store.wait_for_indexing("fresh")
    assert [h.id for h in await store.query("fresh", vec(1.0), top_k=5)] == ["a", "b"]
    await store.delete_vectors("fresh", ids=["a"])
    await store.wait_for_indexing("fresh")
    assert [h.id for h in await store.query("fresh", vec(1.0), top_k=5)] == ["b"]
    assert emulator.pending_writes("fresh") == 0


async def test_update_replaces_metadata_and_reads_its_own_writes(store: PineconeVector) -> None:
    """Pinecone's update merges keys; the spec replaces them, right after an upsert too (no wait)."""
    await store.create_index("upd", 4)
    await store.upsert("upd", [vec(1.0)], [{"a": 1, "b": 2}], ["r"])
    await store.update_vector("upd", id="r", update={"metadata": {"c": 3}})
    await store.update_vector("upd", id="missing", update={"metadata": {"c": 3}})  # no-op
    await store.wait_for_indexing("upd")
    hits = await store.query("upd", vec(1.0), top_k=5, include_vector=True)
    assert [(h.id, h.metadata) for h in hits] == [("r", {"c": 3})]
    assert hits[0].vector == pytest.approx(vec(1.0))


async def test_update_and_delete_by_filter(store: PineconeVector) -> None:
    await store.create_index("byf", 4)
    await store.upsert(
        "byf", [vec(1.0), vec(1.0, 1.0), vec(0.0, 1.0)], [{"g": "x"}, {"g": "x"}, {"g": "y"}], ["1", "2", "3"]
    )
    await store.update_vector("byf", filter={"g": "x"}, update={"metadata": {"g": "z", "n": 1}})
    await store.wait_for_indexing("byf")
    hits = {h.id: h.metadata for h in await store.query("byf", vec(1.0), top_k=5)}
    assert hits == {"1": {"g": "z", "n": 1}, "2": {"g": "z", "n": 1}, "3": {"g": "y"}}
    await store.delete_vectors("byf", filter={"g": {"$ne": "y"}})
    await store.wait_for_indexing("byf")
    assert [h.id for h in await store.query("byf", vec(1.0), top_k=5)] == ["3"]


async def test_ids_pinecone_cannot_take_are_mapped_and_returned(store: PineconeVector) -> None:
    ids = ["ascii-id", "ünïcode", "nul\x00inside", "😀"]
    await store.create_index("ids", 4)
    await store.upsert("ids", [vec(1.0, float(i)) for i in range(4)], [{"i": i} for i in range(4)], ids)
    await store.wait_for_indexing("ids")
    assert {h.id for h in await store.query("ids", vec(1.0), top_k=10)} == set(ids)
    await store.delete_vectors("ids", ids=["ünïcode"])
    await store.wait_for_indexing("ids")
    assert "ünïcode" not in {h.id for h in await store.query("ids", vec(1.0), top_k=10)}


@pytest.mark.parametrize("metric", ["euclidean", "dotproduct"])
async def test_zero_vectors_on_euclidean_and_dotproduct(store: PineconeVector, metric: str) -> None:
    """Pinecone refuses all-zero dense vectors; the adapter stores and queries them exactly anyway."""
    await store.create_index("zero", 4, metric)  # type: ignore[arg-type]
    await store.upsert("zero", [vec(), vec(3.0, 4.0)], [{}, {}], ["z", "v"])
    await store.wait_for_indexing("zero")
    hits = {h.id: h for h in await store.query("zero", vec(), top_k=5, include_vector=True)}
    assert hits["z"].vector == [0.0] * 4
    if metric == "dotproduct":
        assert hits["z"].score == 0.0
        assert hits["v"].score == 0.0
    else:
        assert hits["z"].score == pytest.approx(1.0)
        assert hits["v"].score == pytest.approx(1 / 6)
    hits = {h.id: h for h in await store.query("zero", vec(1.0), top_k=5)}
    want = 0.0 if metric == "dotproduct" else 1 / (1 + 1)
    assert hits["z"].score == pytest.approx(want, abs=1e-9)


async def test_scores_are_portable(store: PineconeVector) -> None:
    for metric, want in (("cosine", 0.6), ("dotproduct", 3.0), ("euclidean", 1 / (1 + math.sqrt(20)))):
        name = f"score_{metric}"
        await store.create_index(name, 4, metric)  # type: ignore[arg-type]
        await store.upsert(name, [vec(3.0, 4.0)], ids=["a"])
        await store.wait_for_indexing(name)
        [hit] = await store.query(name, vec(1.0), top_k=1)
        assert hit.score == pytest.approx(want, rel=1e-6), metric


async def test_pinecone_rules_are_checked_before_any_io(
    store: PineconeVector, emulator: PineconeEmulator
) -> None:
    await store.create_index("rules", 4)
    before = len(emulator.requests)
    bad: list[tuple[dict[str, Any], str]] = [
        ({"text": "x" * 41_000}, "40 KB"),
        ({"nums": [1, 2]}, "string-list-only"),
        ({"a.b": 1}, "dotted-keys-rejected"),
        ({"big": 2**63}, "int64-range"),
    ]
    for metadata, phrase in bad:
        with pytest.raises(ValidationError, match=phrase) as raised:
            await store.upsert("rules", [vec(1.0), vec(0.0, 1.0)], [{"ok": 1}, metadata], ["a", "b"])
        assert raised.value.id == "MASTRA_VECTOR_PINECONE_UPSERT_INVALID_METADATA"
        with pytest.raises(ValidationError, match=phrase):
            await store.update_vector("rules", id="a", update={"metadata": metadata})
    writes = [r for r in emulator.requests[before:] if r[1].endswith(("/upsert", "/update", "/delete"))]
    assert not writes, writes  # only the index's shape was read (docs/spec.md §3.3)


async def test_index_names_follow_pinecones_rule(store: PineconeVector) -> None:
    assert native_index_name("memory_messages_64") == "memory-messages-64"
    long = "a" + "_b" * 31
    native = native_index_name(long)
    assert len(native) <= 45
    assert native == native_index_name(native)
    assert native_index_name("ends_") != "ends-"
    assert native_index_name("ends_").startswith("ends-")
    await store.create_index(long, 4)
    assert native in await store.list_indexes()
    assert (await store.describe_index(long)).dimension == 4
    await store.delete_index(long)
    await store.delete_index(long)  # idempotent
    with pytest.raises(IndexNotFoundError):
        await store.query(long, vec(1.0))


async def test_update_by_filter_refuses_ten_thousand_matches(emulator: PineconeEmulator) -> None:
    store = PineconeVector(settings_for(emulator))
    try:
        await store.create_index("many", 2, "euclidean")
        n = 10_000
        await store.upsert(
            "many", [[1.0, float(i)] for i in range(n)], [{"g": "x"}] * n, [str(i) for i in range(n)]
        )
        with pytest.raises(CapabilityError, match="10,000"):
            await store.update_vector("many", filter={"g": "x"}, update={"metadata": {"g": "y"}})
        hits = await store.query("many", [1.0, 0.0], top_k=3, filter={"g": "y"})
        assert hits == []
    finally:
        await store.close()


@pytest.mark.parametrize("negation_matches_missing", [False, True])
async def test_negations_do_not_depend_on_missing_field_semantics(negation_matches_missing: bool) -> None:
    """§8.2 #8/#9/#12/#18 on an emulator whose $ne/$nin match missing fields, and on one where they do not."""
    with running_emulator(visibility_delay=0.01, negation_matches_missing=negation_matches_missing) as emu:
        store = PineconeVector(settings_for(emu))
        try:
            await store.create_index("neg", 4)
            records = {
                "C": {"available": False, "tags": ["sale"]},
                "D": {"available": True, "tags": []},
                "I": {},
            }
            await store.upsert(
                "neg", [vec(1.0, float(i)) for i in range(3)], list(records.values()), list(records)
            )
            await store.wait_for_indexing("neg")
            cases: dict[str, tuple[dict[str, Any], set[str]]] = {
                '{"available": {"$ne": true}}': ({"available": {"$ne": True}}, {"C", "I"}),
                '{"tags": {"$nin": ["sale"]}}': ({"tags": {"$nin": ["sale"]}}, {"D", "I"}),
                '{"tags": {"$exists": true}}': ({"tags": {"$exists": True}}, {"C", "D"}),
                '{"tags": null}': ({"tags": None}, {"I"}),
            }
            for label, (flt, want) in cases.items():
                got = {h.id for h in await store.query("neg", vec(1.0), top_k=10, filter=flt)}
                assert got == want, label
        finally:
            await store.close()


def test_settings_read_mastra_names_and_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MASTRA_MEMORY_PINECONE_API_KEY", "from-env")
    monkeypatch.setenv("MASTRA_MEMORY_PINECONE_NAMESPACE", "ns1")
    s = PineconeSettings()
    assert s.api_key is not None
    assert s.api_key.get_secret_value() == "from-env"
    assert s.namespace == "ns1"
    s = PineconeSettings.model_validate(
        {"apiKey": "k", "environment": "europe-west4-gcp", "controllerHostUrl": "http://127.0.0.1:1"}
    )
    assert (s.cloud, s.region, s.controller_host_url) == ("gcp", "europe-west4", "http://127.0.0.1:1")
    monkeypatch.delenv("MASTRA_MEMORY_PINECONE_API_KEY")
    monkeypatch.delenv("PINECONE_API_KEY", raising=False)
    with pytest.raises(ValueError, match="API key is required"):
        PineconeSettings()
    with pytest.raises(ValueError, match="region"):
        PineconeSettings(api_key="k", environment="nowhere")  # type: ignore[call-arg]


def test_the_plugin_and_the_blocking_facade(emulator: PineconeEmulator) -> None:
    store = create_vector("pinecone", api_key=emulator.api_key, controller_host_url=emulator.url)
    assert isinstance(store, PineconeVector)
    blocking = sync.wrap(store)
    blocking.create_index("blocking", 4)
    blocking.upsert("blocking", [vec(1.0)], [{"a": "b"}], ["x"])
    blocking.wait_for_indexing("blocking")
    assert [h.id for h in blocking.query("blocking", vec(1.0), top_k=1)] == ["x"]
    blocking.close()


async def test_concurrent_waits_and_writes(store: PineconeVector) -> None:
    await store.create_index("conc", 4)
    await asyncio.gather(
        *(store.upsert("conc", [vec(1.0, float(i))], [{"i": i}], ["same"]) for i in range(5))
    )
    await store.wait_for_indexing("conc")
    [hit] = await store.query("conc", vec(1.0), top_k=5)
    assert hit.metadata["i"] in range(5)
