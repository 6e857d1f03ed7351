"""LangGraph's own store tests, run on ``MastraStore``.

LangGraph ships no conformance suite for stores (``langgraph-checkpoint-conformance`` 0.0.2 covers
checkpointers only); its store behaviour is pinned by ``tests/test_store.py`` of the langgraph-checkpoint
4.3.2 sdist, written against ``InMemoryStore``. Every test here is one of those, its assertions kept as
written, run on three stores: ``InMemoryStore`` itself (so the port is shown faithful), and ``MastraStore``
on the SQLite default and on qdrant-edge. Left out: the tests of LangGraph's own machinery that are not
store behaviour (``AsyncBatchedBaseStore`` batching and cancellation, ``_dedupe_ops``, ``get_text_at_path``,
``validate_op_namespace``) and ``test_vector_store_initialization`` (``InMemoryStore``'s attributes).

``CharacterEmbeddings`` is the sdist's ``tests/embed_test_utils.py``. Both files are
Copyright (c) 2024 LangChain, Inc., MIT License.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, InvalidNamespaceError, PutOp

from .conftest import StoreFactory


class CharacterEmbeddings(Embeddings):
    """Simple character-frequency based embeddings using random projections."""

    def __init__(self, dims: int = 50, seed: int = 42):
        self._rng = random.Random(seed)
        self.dims = dims
        self._char_projections: defaultdict[str, list[float]] = defaultdict(
            lambda: [self._rng.gauss(0, 1 / math.sqrt(self.dims)) for _ in range(self.dims)]
        )

    def _embed_one(self, text: str) -> list[float]:
        counts = Counter(text)
        total = sum(counts.values())
        if total == 0:
            return [0.0] * self.dims
        embedding = [0.0] * self.dims
        for char, count in counts.items():
            weight = count / total
            char_proj = self._char_projections[char]
            for i, proj in enumerate(char_proj):
                embedding[i] += weight * proj
        norm = math.sqrt(sum(x * x for x in embedding))
        if norm > 0:
            embedding = [x / norm for x in embedding]
        return embedding

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._embed_one(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._embed_one(text)


@pytest.fixture
def fake_embeddings() -> CharacterEmbeddings:
    return CharacterEmbeddings(dims=500)


def indexed(make_store: StoreFactory, embeddings: CharacterEmbeddings, **extra: Any) -> BaseStore:
    return make_store(index={"dims": embeddings.dims, "embed": embeddings, **extra})


# --- namespaces ---------------------------------------------------------------------------------------


def test_list_namespaces_basic(make_store: StoreFactory) -> None:
    store = make_store()
    namespaces = [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
        ("users", "123"),
        ("users", "456", "settings"),
        ("admin", "users", "789"),
    ]
    for i, ns in enumerate(namespaces):
        store.put(namespace=ns, key=f"id_{i}", value={"data": f"value_{i:02d}"})

    result = store.list_namespaces(prefix=("a", "b"))
    assert sorted(result) == sorted(
        [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")]
    )
    result = store.list_namespaces(suffix=("f",))
    assert sorted(result) == sorted([("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")])
    result = store.list_namespaces(prefix=("a",), suffix=("f",))
    assert sorted(result) == sorted([("a", "b", "f"), ("a", "c", "f")])
    result = store.list_namespaces(prefix=("a", "b"), max_depth=3)
    assert sorted(result) == sorted([("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")])
    result = store.list_namespaces(prefix=("a", "b"), limit=2)
    assert result == [("a", "b", "c"), ("a", "b", "d", "e")]
    result = store.list_namespaces(prefix=("a", "b"), offset=2)
    assert result == [("a", "b", "d", "i"), ("a", "b", "f")]
    result = store.list_namespaces(prefix=("a", "*", "f"))
    assert sorted(result) == sorted([("a", "b", "f"), ("a", "c", "f")])
    result = store.list_namespaces(suffix=("*", "f"))
    assert sorted(result) == sorted([("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")])
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]


def test_list_namespaces_with_wildcards(make_store: StoreFactory) -> None:
    store = make_store()
    namespaces = [
        ("users", "123"),
        ("users", "456"),
        ("users", "789", "settings"),
        ("admin", "users", "789"),
        ("guests", "123"),
        ("guests", "456", "preferences"),
    ]
    for i, ns in enumerate(namespaces):
        store.put(namespace=ns, key=f"id_{i}", value={"data": f"value_{i:02d}"})

    result = store.list_namespaces(prefix=("users", "*"))
    assert sorted(result) == sorted([("users", "123"), ("users", "456"), ("users", "789", "settings")])
    assert store.list_namespaces(suffix=("*", "preferences")) == [("guests", "456", "preferences")]
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []
    store.put(namespace=("admin", "users", "settings", "789"), key="foo", value={"data": "some_val"})


def test_list_namespaces_pagination(make_store: StoreFactory) -> None:
    store = make_store()
    for i in range(20):
        store.put(
            namespace=("namespace", f"sub_{i:02d}"), key=f"id_{i:02d}", value={"data": f"value_{i:02d}"}
        )
    for offset in (0, 5, 15):
        result = store.list_namespaces(prefix=("namespace",), limit=5, offset=offset)
        assert result == [("namespace", f"sub_{i:02d}") for i in range(offset, offset + 5)]


def test_list_namespaces_max_depth(make_store: StoreFactory) -> None:
    store = make_store()
    namespaces = [
        ("a", "b", "c", "d"),
        ("a", "b", "c", "e"),
        ("a", "b", "f"),
        ("a", "g"),
        ("h", "i", "j", "k"),
    ]
    for i, ns in enumerate(namespaces):
        store.put(namespace=ns, key=f"id_{i}", value={"data": f"value_{i:02d}"})
    assert sorted(store.list_namespaces(max_depth=2)) == sorted([("a", "b"), ("a", "g"), ("h", "i")])


def test_list_namespaces_no_conditions(make_store: StoreFactory) -> None:
    store = make_store()
    namespaces = [("a", "b"), ("c", "d"), ("e", "f", "g")]
    for i, ns in enumerate(namespaces):
        store.put(namespace=ns, key=f"id_{i}", value={"data": f"value_{i:02d}"})
    assert sorted(store.list_namespaces()) == sorted(namespaces)


def test_list_namespaces_empty_store(make_store: StoreFactory) -> None:
    assert make_store().list_namespaces() == []


# --- search -------------------------------------------------------------------------------------------


def test_search_pages_match_full_listing(make_store: StoreFactory) -> None:
    store = make_store()
    items_per_namespace = 7
    for ns in [("a",), ("a", "b"), ("ab",), ("a", "c", "d")]:
        for i in range(items_per_namespace):
            store.put(ns, f"k{i}", {"i": i, "even": i % 2 == 0})

    def keys(items: list[Any]) -> list[tuple[tuple[str, ...], str]]:
        return [(item.namespace, item.key) for item in items]

    full = keys(store.search(("a",), limit=100))
    assert {ns for ns, _ in full} == {("a",), ("a", "b"), ("a", "c", "d")}
    assert len(full) == 3 * items_per_namespace
    paged = [
        key for offset in range(0, len(full), 4) for key in keys(store.search(("a",), limit=4, offset=offset))
    ]
    assert paged == full
    even = keys(store.search(("a",), filter={"even": True}, limit=100))
    assert keys(store.search(("a",), filter={"even": True}, limit=3, offset=2)) == even[2:5]


def test_vector_search_scores_every_item(
    make_store: StoreFactory, fake_embeddings: CharacterEmbeddings
) -> None:
    store = indexed(make_store, fake_embeddings)
    for i in range(4):
        store.put(("test",), f"other{i}", {"text": f"zzz qqq {i}"})
    store.put(("test",), "match", {"text": "apple pie"})
    assert [r.key for r in store.search(("test",), query="apple pie", limit=1)] == ["match"]


async def test_cannot_put_empty_namespace(make_store: StoreFactory) -> None:
    store = make_store()
    doc = {"foo": "bar"}
    for bad in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "foo", doc)
        with pytest.raises(InvalidNamespaceError):
            await store.aput(bad, "foo", doc)

    await store.aput(("foo", "langgraph", "foo"), "bar", doc)
    assert (await store.aget(("foo", "langgraph", "foo"), "bar")).value == doc  # type: ignore[union-attr]
    assert (await store.asearch(("foo", "langgraph", "foo"), query="bar"))[0].value == doc
    await store.adelete(("foo", "langgraph", "foo"), "bar")
    assert (await store.aget(("foo", "langgraph", "foo"), "bar")) is None
    store.put(("foo", "langgraph", "foo"), "bar", doc)
    assert store.get(("foo", "langgraph", "foo"), "bar").value == doc  # type: ignore[union-attr]
    assert store.search(("foo", "langgraph", "foo"), query="bar")[0].value == doc
    store.delete(("foo", "langgraph", "foo"), "bar")
    assert store.get(("foo", "langgraph", "foo"), "bar") is None

    # Past the public put API
    await store.abatch([PutOp(("langgraph", "foo"), "bar", doc)])
    assert (await store.aget(("langgraph", "foo"), "bar")).value == doc  # type: ignore[union-attr]
    assert (await store.asearch(("langgraph", "foo")))[0].value == doc
    await store.adelete(("langgraph", "foo"), "bar")
    assert (await store.aget(("langgraph", "foo"), "bar")) is None
    store.batch([PutOp(("langgraph", "foo"), "bar", doc)])
    assert store.get(("langgraph", "foo"), "bar").value == doc  # type: ignore[union-attr]
    assert store.search(("langgraph", "foo"))[0].value == doc
    store.delete(("langgraph", "foo"), "bar")
    assert store.get(("langgraph", "foo"), "bar") is None


INVALID_NAMESPACES: list[tuple[Any, ...]] = [("foo.bar",), ("foo\x00",), ("foo", ""), (123,)]
NAMESPACE_METHODS = ["get", "delete", "search", "prefix", "suffix"]


@pytest.mark.parametrize("namespace", INVALID_NAMESPACES)
@pytest.mark.parametrize("method", NAMESPACE_METHODS)
def test_rejects_invalid_namespace_labels(
    make_store: StoreFactory, monkeypatch: pytest.MonkeyPatch, namespace: tuple[Any, ...], method: str
) -> None:
    store = make_store()
    calls: list[Any] = []
    # On the class, as LangGraph's test spies on InMemoryStore.batch (its instances have __slots__).
    monkeypatch.setattr(type(store), "batch", lambda self, ops: calls.append(ops))
    call: Callable[[], Any] = {
        "get": lambda: store.get(namespace, "key"),
        "delete": lambda: store.delete(namespace, "key"),
        "search": lambda: store.search(namespace),
        "prefix": lambda: store.list_namespaces(prefix=namespace),
        "suffix": lambda: store.list_namespaces(suffix=namespace),
    }[method]
    with pytest.raises(InvalidNamespaceError):
        call()
    assert calls == []


@pytest.mark.parametrize("namespace", INVALID_NAMESPACES)
@pytest.mark.parametrize("method", NAMESPACE_METHODS)
async def test_async_rejects_invalid_namespace_labels(
    make_store: StoreFactory, monkeypatch: pytest.MonkeyPatch, namespace: tuple[Any, ...], method: str
) -> None:
    store = make_store()
    calls: list[Any] = []

    async def abatch(self: Any, ops: Any) -> None:
        calls.append(ops)

    monkeypatch.setattr(type(store), "abatch", abatch)
    call: Callable[[], Any] = {
        "get": lambda: store.aget(namespace, "key"),
        "delete": lambda: store.adelete(namespace, "key"),
        "search": lambda: store.asearch(namespace),
        "prefix": lambda: store.alist_namespaces(prefix=namespace),
        "suffix": lambda: store.alist_namespaces(suffix=namespace),
    }[method]
    with pytest.raises(InvalidNamespaceError):
        await call()
    assert calls == []


def test_search_and_listing_keep_empty_prefixes_and_wildcards(make_store: StoreFactory) -> None:
    store = make_store()
    store.put(("tenant", "a_%"), "key", {"v": 1})
    store.put(("tenant", "b", "child"), "key", {"v": 1})
    assert len(store.search(())) == 2
    assert [item.namespace for item in store.search(("tenant", "a_%"))] == [("tenant", "a_%")]
    assert sorted(store.list_namespaces(prefix=("tenant", "*"), suffix=("*",))) == [
        ("tenant", "a_%"),
        ("tenant", "b", "child"),
    ]


async def test_async_search_and_listing_keep_empty_prefixes_and_wildcards(make_store: StoreFactory) -> None:
    store = make_store()
    await store.aput(("tenant", "a_%"), "key", {"v": 1})
    await store.aput(("tenant", "b", "child"), "key", {"v": 1})
    assert len(await store.asearch(())) == 2
    assert [item.namespace for item in await store.asearch(("tenant", "a_%"))] == [("tenant", "a_%")]
    assert sorted(await store.alist_namespaces(prefix=("tenant", "*"), suffix=("*",))) == [
        ("tenant", "a_%"),
        ("tenant", "b", "child"),
    ]


# --- the semantic index -------------------------------------------------------------------------------

DOCS = [
    ("doc1", {"text": "short text"}),
    ("doc2", {"text": "longer text document"}),
    ("doc3", {"text": "longest text document here"}),
    ("doc4", {"description": "text in description field"}),
    ("doc5", {"content": "text in content field"}),
    ("doc6", {"body": "text in body field"}),
]


def test_vector_insert_with_auto_embedding(
    make_store: StoreFactory, fake_embeddings: CharacterEmbeddings
) -> None:
    store = indexed(make_store, fake_embeddings)
    for key, value in DOCS:
        store.put(("test",), key, value)
    results = store.search(("test",), query="long text")
    assert len(results) > 0
    doc_order = [r.key for r in results]
    assert "doc2" in doc_order
    assert "doc3" in doc_order


async def test_async_vector_insert_with_auto_embedding(
    make_store: StoreFactory, fake_embeddings: CharacterEmbeddings
) -> None:
    store = indexed(make_store, fake_embeddings)
    for key, value in DOCS:
        await store.aput(("test",), key, value)
    results = await store.asearch(("test",), query="long text")
    assert len(results) > 0
    doc_order = [r.key for r in results]
    assert "doc2" in doc_order
    assert "doc3" in doc_order


def test_vector_update_with_embedding(make_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    store = indexed(make_store, fake_embeddings)
    store.put(("test",), "doc1", {"text": "zany zebra Xerxes"})
    store.put(("test",), "doc2", {"text": "something about dogs"})
    store.put(("test",), "doc3", {"text": "text about birds"})

    results_initial = store.search(("test",), query="Zany Xerxes")
    assert len(results_initial) > 0
    assert results_initial[0].key == "doc1"
    initial_score = results_initial[0].score
    assert initial_score is not None

    store.put(("test",), "doc1", {"text": "new text about dogs"})
    results_after = store.search(("test",), query="Zany Xerxes")
    after_score = next((r.score for r in results_after if r.key == "doc1"), 0.0)
    assert after_score is not None
    assert after_score < initial_score

    results_new = store.search(("test",), query="new text about dogs")
    for r in results_new:
        if r.key == "doc1":
            assert r.score is not None
            assert r.score > after_score

    store.put(("test",), "doc4", {"text": "new text about dogs"}, index=False)
    results_new = store.search(("test",), query="new text about dogs", limit=3)
    assert not any(r.key == "doc4" for r in results_new)


async def test_async_vector_update_with_embedding(
    make_store: StoreFactory, fake_embeddings: CharacterEmbeddings
) -> None:
    store = indexed(make_store, fake_embeddings)
    await store.aput(("test",), "doc1", {"text": "zany zebra Xerxes"})
    await store.aput(("test",), "doc2", {"text": "something about dogs"})
    await store.aput(("test",), "doc3", {"text": "text about birds"})

    results_initial = await store.asearch(("test",), query="Zany Xerxes")
    assert len(results_initial) > 0
    assert results_initial[0].key == "doc1"
    initial_score = results_initial[0].score
    assert initial_score is not None

    await store.aput(("test",), "doc1", {"text": "new text about dogs"})
    results_after = await store.asearch(("test",), query="Zany Xerxes")
    after_score = next((r.score for r in results_after if r.key == "doc1"), 0.0)
    assert after_score is not None
    assert after_score < initial_score

    results_new = await store.asearch(("test",), query="new text about dogs")
    for r in results_new:
        if r.key == "doc1":
            assert r.score is not None
            assert r.score > after_score

    await store.aput(("test",), "doc4", {"text": "new text about dogs"}, index=False)
    results_new = await store.asearch(("test",), query="new text about dogs", limit=3)
    assert not any(r.key == "doc4" for r in results_new)


FILTER_DOCS = [
    ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
    ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
    ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
    ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
]


def test_vector_search_with_filters(make_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    store = indexed(make_store, fake_embeddings)
    for key, value in FILTER_DOCS:
        store.put(("test",), key, value)

    results = store.search(("test",), query="apple", filter={"color": "red"})
    assert len(results) == 2
    assert results[0].key == "doc1"
    results = store.search(("test",), query="car", filter={"color": "red"})
    assert len(results) == 2
    assert results[0].key == "doc2"
    results = store.search(("test",), query="bbbbluuu", filter={"score": {"$gt": 3.2}})
    assert len(results) == 3
    assert results[0].key == "doc4"
    results = store.search(("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})
    assert len(results) == 1
    assert results[0].key == "doc3"


async def test_async_vector_search_with_filters(
    make_store: StoreFactory, fake_embeddings: CharacterEmbeddings
) -> None:
    store = indexed(make_store, fake_embeddings)
    for key, value in FILTER_DOCS:
        await store.aput(("test",), key, value)

    results = await store.asearch(("test",), query="apple", filter={"color": "red"})
    assert len(results) == 2
    assert results[0].key == "doc1"
    results = await store.asearch(("test",), query="car", filter={"color": "red"})
    assert len(results) == 2
    assert results[0].key == "doc2"
    results = await store.asearch(("test",), query="bbbbluuu", filter={"score": {"$gt": 3.2}})
    assert len(results) == 3
    assert results[0].key == "doc4"
    results = await store.asearch(("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})
    assert len(results) == 1
    assert results[0].key == "doc3"


def test_vector_search_pagination(make_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    store = indexed(make_store, fake_embeddings)
    for i in range(5):
        store.put(("test",), f"doc{i}", {"text": f"test document number {i}"})
    results_page1 = store.search(("test",), query="test", limit=2)
    results_page2 = store.search(("test",), query="test", limit=2, offset=2)
    assert len(results_page1) == 2
    assert len(results_page2) == 2
    assert results_page1[0].key != results_page2[0].key
    assert len(store.search(("test",), query="test", limit=10)) == 5


async def test_async_vector_search_pagination(
    make_store: StoreFactory, fake_embeddings: CharacterEmbeddings
) -> None:
    store = indexed(make_store, fake_embeddings)
    for i in range(5):
        await store.aput(("test",), f"doc{i}", {"text": f"test document number {i}"})
    results_page1 = await store.asearch(("test",), query="test", limit=2)
    results_page2 = await store.asearch(("test",), query="test", limit=2, offset=2)
    assert len(results_page1) == 2
    assert len(results_page2) == 2
    assert results_page1[0].key != results_page2[0].key
    assert len(await store.asearch(("test",), query="test", limit=10)) == 5


async def test_embed_with_path(make_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    store = indexed(make_store, fake_embeddings, fields=["key0", "key1", "key3"])
    doc1 = {"key1": "xxx", "key2": "yyy", "key3": "zzz"}  # key0 missing: no error, 2 vectors
    doc2 = {"key0": "uuu", "key1": "vvv", "key2": "www", "key3": "xxx"}  # 3 vectors
    await store.aput(("test",), "doc1", doc1)
    await store.aput(("test",), "doc2", doc2)

    results = await store.asearch(("test",), query="xxx")
    assert len(results) == 2
    assert results[0].key != results[1].key
    ascore, bscore = results[0].score, results[1].score
    assert ascore is not None
    assert bscore is not None
    assert ascore == pytest.approx(bscore, abs=1e-5)

    results = await store.asearch(("test",), query="uuu")
    assert len(results) == 2
    assert results[0].key != results[1].key
    assert results[0].key == "doc2"
    assert results[0].score is not None
    assert results[0].score > results[1].score  # type: ignore[operator]
    assert ascore == pytest.approx(results[0].score, abs=1e-5)

    results = await store.asearch(("test",), query="www")  # not indexed: lower for both
    assert len(results) == 2
    assert results[0].score < ascore  # type: ignore[operator]
    assert results[1].score < ascore  # type: ignore[operator]

    store_no_defaults = indexed(make_store, CharacterEmbeddings(dims=500), fields=["key17"])
    doc3 = {"key0": "aaa", "key1": "bbb", "key2": "ccc", "key3": "ddd"}
    doc4 = {"key0": "eee", "key1": "bbb", "key2": "fff", "key3": "ggg"}
    await store_no_defaults.aput(("test",), "doc3", doc3, index=["key0", "key1"])
    await store_no_defaults.aput(("test",), "doc4", doc4, index=["key1", "key3"])

    results = await store_no_defaults.asearch(("test",), query="aaa")
    assert len(results) == 2
    assert results[0].key == "doc3"
    assert results[0].score is not None
    assert results[0].score > results[1].score  # type: ignore[operator]
    results = await store_no_defaults.asearch(("test",), query="ggg")
    assert len(results) == 2
    assert results[0].key == "doc4"
    assert results[0].score is not None
    assert results[0].score > results[1].score  # type: ignore[operator]
    results = await store_no_defaults.asearch(("test",), query="bbb")
    assert len(results) == 2
    assert results[0].key != results[1].key
    assert results[0].score == results[1].score
    results = await store_no_defaults.asearch(("test",), query="ccc")
    assert len(results) == 2
    assert all(r.score < ascore for r in results)  # type: ignore[operator]

    await store_no_defaults.aput(("test",), "doc5", {"key0": "hhh", "key1": "iii"}, index=False)
    results = await store_no_defaults.asearch(("test",), query="hhh")
    assert len(results) == 3
    doc5_result = next(r for r in results if r.key == "doc5")
    assert doc5_result.score is None


def test_non_ascii(make_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    store = indexed(make_store, fake_embeddings)
    texts = ["这是中文", "これは日本語です", "이건 한국어야", "Это русский", "यह रूसी है"]
    for i, text in enumerate(texts, 1):
        store.put(("user_123", "memories"), str(i), {"text": text})
    for i, text in enumerate(texts, 1):
        assert store.search(("user_123", "memories"), query=text)[0].key == str(i)
