"""The process-wide embedding cache (docs/spec.md §5.7, §6.5)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from mastra_memory.embedders import (
    EmbeddingCache,
    EmbedResult,
    embed_with_cache,
    get_embedding_cache,
)
from mastra_memory.embedders.base import cache_namespace
from mastra_memory.embedders.hash import HashEmbedder
from mastra_memory.errors import ConfigError, EmbeddingError

from .embedding_server import server_vector


class RecordingProvider:
    """A provider for these tests: vectors derived from the text, 10 tokens per text, calls recorded.

    ``gate`` holds calls until set; ``fail_with`` makes the next call raise; ``reply`` replaces the next
    result's embeddings.
    """

    def __init__(self, model_id: str = "test/recording", max_batch_size: int = 100, dim: int = 4) -> None:
        self.model_id = model_id
        self.dimension: int | None = None
        self.max_batch_size = max_batch_size
        self.dim = dim
        self.calls: list[list[str]] = []
        self.entered: asyncio.Queue[list[str]] = asyncio.Queue()
        self.gate: asyncio.Event | None = None
        self.fail_with: Exception | None = None
        self.reply: Any = None

    async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
        self.calls.append(list(texts))
        self.entered.put_nowait(list(texts))
        if self.gate is not None:
            await self.gate.wait()
        if self.fail_with is not None:
            error, self.fail_with = self.fail_with, None
            raise error
        if self.reply is not None:
            reply, self.reply = self.reply, None
            return EmbedResult(reply, None)
        dim = options.get("dimensions", self.dim)
        return EmbedResult([server_vector(t, dim) for t in texts], 10 * len(texts))


async def test_hits_skip_the_provider_and_usage_counts_only_misses() -> None:
    provider = RecordingProvider()

    first = await embed_with_cache(provider, ["a", "b"])
    second = await embed_with_cache(provider, ["b", "c", "a"])
    third = await embed_with_cache(provider, ["c"])

    assert provider.calls == [["a", "b"], ["c"]]
    assert first.embeddings == [server_vector("a", 4), server_vector("b", 4)]
    assert second.embeddings == [server_vector(t, 4) for t in ["b", "c", "a"]]
    assert (first.usage_tokens, second.usage_tokens, third.usage_tokens) == (20, 10, 0)
    assert get_embedding_cache().stats().hits == 3


async def test_duplicates_in_one_call_are_embedded_once() -> None:
    provider = RecordingProvider()

    result = await embed_with_cache(provider, ["x", "y", "x"])

    assert provider.calls == [["x", "y"]]
    assert result.embeddings == [server_vector("x", 4), server_vector("y", 4), server_vector("x", 4)]


async def test_misses_are_split_by_max_batch_size() -> None:
    provider = RecordingProvider(max_batch_size=2)

    await embed_with_cache(provider, ["cached"])
    await embed_with_cache(provider, ["a", "cached", "b", "c", "d", "e"])

    assert provider.calls == [["cached"], ["a", "b"], ["c", "d"], ["e"]]


async def test_usage_is_none_when_the_provider_reports_none() -> None:
    provider = RecordingProvider()
    provider.reply = [[1.0, 2.0]]

    result = await embed_with_cache(provider, ["a"])

    assert result.usage_tokens is None


async def test_returned_vectors_are_copies() -> None:
    provider = RecordingProvider()
    first = await embed_with_cache(provider, ["a"])
    first.embeddings[0][0] = 99.0

    second = await embed_with_cache(provider, ["a"])

    assert second.embeddings == [server_vector("a", 4)]


async def test_models_and_output_options_do_not_share_entries() -> None:
    one, other = RecordingProvider("test/one"), RecordingProvider("test/other")

    await embed_with_cache(one, ["a"])
    await embed_with_cache(other, ["a"])
    short = await embed_with_cache(one, ["a"], dimensions=2)
    await embed_with_cache(one, ["a"], api_key="k", timeout=5)  # transport options: same entry

    assert one.calls == [["a"], ["a"]]
    assert other.calls == [["a"]]
    assert short.embeddings == [server_vector("a", 2)]


async def test_cache_namespace_attribute_separates_configurations() -> None:
    full = RecordingProvider("test/model")
    shortened = RecordingProvider("test/model", dim=2)
    shortened.cache_namespace = cache_namespace("test/model", {"dimensions": 2})  # type: ignore[attr-defined]

    await embed_with_cache(full, ["a"])
    result = await embed_with_cache(shortened, ["a"])

    assert shortened.calls == [["a"]]
    assert result.embeddings == [server_vector("a", 2)]


async def test_least_recently_used_entry_is_evicted_at_capacity() -> None:
    cache = EmbeddingCache(max_entries=2)
    provider = RecordingProvider()

    await cache.embed(provider, ["a", "b"], {})
    await cache.embed(provider, ["a"], {})  # a is now the most recently used
    await cache.embed(provider, ["c"], {})  # evicts b
    await cache.embed(provider, ["a", "c"], {})
    await cache.embed(provider, ["b"], {})

    assert provider.calls == [["a", "b"], ["c"], ["b"]]
    assert len(cache) == 2


async def test_resize_and_clear() -> None:
    cache = EmbeddingCache(max_entries=10)
    provider = RecordingProvider()
    await cache.embed(provider, ["a", "b", "c"], {})

    cache.resize(1)
    assert len(cache) == 1
    await cache.embed(provider, ["c"], {})  # the most recent entry survived
    assert provider.calls == [["a", "b", "c"]]

    cache.clear()
    assert cache.stats() == type(cache.stats())(hits=0, misses=0, size=0, max_entries=1)


async def test_zero_capacity_stores_nothing() -> None:
    cache = EmbeddingCache(max_entries=0)
    provider = RecordingProvider()

    await cache.embed(provider, ["a"], {})
    await cache.embed(provider, ["a"], {})

    assert provider.calls == [["a"], ["a"]]


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_capacity_must_be_a_non_negative_integer(bad: Any) -> None:
    with pytest.raises(ConfigError, match="max_entries"):
        EmbeddingCache(max_entries=bad)


def test_process_wide_cache_defaults_to_1000_entries() -> None:
    assert get_embedding_cache() is get_embedding_cache()
    assert get_embedding_cache().max_entries == 1_000


async def test_failures_are_not_cached() -> None:
    provider = RecordingProvider()
    provider.fail_with = EmbeddingError("provider down")

    with pytest.raises(EmbeddingError, match="provider down"):
        await embed_with_cache(provider, ["a"])
    result = await embed_with_cache(provider, ["a"])

    assert provider.calls == [["a"], ["a"]]
    assert result.embeddings == [server_vector("a", 4)]


async def test_earlier_batches_stay_cached_when_a_later_batch_fails() -> None:
    class FailSecond(RecordingProvider):
        async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
            if texts == ["b"] and not any(call == ["b"] for call in self.calls):
                self.calls.append(list(texts))
                raise EmbeddingError("b failed")
            return await super().embed_many(texts, **options)

    provider = FailSecond(max_batch_size=1)
    with pytest.raises(EmbeddingError):
        await embed_with_cache(provider, ["a", "b"])
    await embed_with_cache(provider, ["a", "b"])

    assert provider.calls == [["a"], ["b"], ["b"]]


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ([[1.0, 2.0]], "returned 1 embeddings for 2 texts"),
        ([[1.0, 2.0], [1.0]], "different lengths"),
        ([[1.0, float("nan")], [1.0, 2.0]], "non-finite"),
        ([[1.0, float("inf")], [1.0, 2.0]], "non-finite"),
        ([[1.0, None], [1.0, 2.0]], "non-numeric"),
        ([[], []], "empty vectors"),
        ("not a list", "instead of a list"),
        ([1.0, 2.0], "not a vector"),
    ],
)
async def test_unusable_results_are_embedding_errors(reply: Any, problem: str) -> None:
    provider = RecordingProvider()
    provider.reply = reply

    with pytest.raises(EmbeddingError, match=problem):
        await embed_with_cache(provider, ["a", "b"])
    assert len(get_embedding_cache()) == 0


async def test_a_changed_dimension_for_the_same_model_is_an_error() -> None:
    provider = RecordingProvider()
    await embed_with_cache(provider, ["a"])
    provider.reply = [[1.0, 2.0]]

    with pytest.raises(EmbeddingError, match="returned 2-dimensional vectors but earlier calls returned 4"):
        await embed_with_cache(provider, ["b"])


async def test_concurrent_requests_for_the_same_text_share_one_provider_call() -> None:
    provider = RecordingProvider()
    provider.gate = asyncio.Event()

    first = asyncio.create_task(embed_with_cache(provider, ["shared", "one"]))
    second = asyncio.create_task(embed_with_cache(provider, ["shared", "two"]))
    assert await provider.entered.get() == ["shared", "one"]
    assert await provider.entered.get() == ["two"]
    provider.gate.set()
    results = await asyncio.gather(first, second)

    assert provider.calls == [["shared", "one"], ["two"]]
    assert results[0].embeddings[0] == results[1].embeddings[0] == server_vector("shared", 4)
    assert results[1].usage_tokens == 10  # only "two" was fetched by the second task


async def test_a_shared_failure_reaches_every_waiter_and_is_not_cached() -> None:
    provider = RecordingProvider()
    provider.gate = asyncio.Event()
    provider.fail_with = EmbeddingError("provider down")

    owner = asyncio.create_task(embed_with_cache(provider, ["x"]))
    waiter = asyncio.create_task(embed_with_cache(provider, ["x"]))
    await provider.entered.get()
    await asyncio.sleep(0)  # let the waiter reach the owner's request
    provider.gate.set()
    outcomes = await asyncio.gather(owner, waiter, return_exceptions=True)

    assert [type(o) for o in outcomes] == [EmbeddingError, EmbeddingError]
    assert provider.calls == [["x"]]
    assert len(get_embedding_cache()) == 0


async def test_a_waiter_fetches_itself_when_the_owner_is_cancelled() -> None:
    provider = RecordingProvider()
    provider.gate = asyncio.Event()

    owner = asyncio.create_task(embed_with_cache(provider, ["x"]))
    await provider.entered.get()
    waiter = asyncio.create_task(embed_with_cache(provider, ["x"]))
    await asyncio.sleep(0)  # the waiter is now waiting on the owner's request
    owner.cancel()
    provider.gate.set()
    result = await waiter

    assert owner.cancelled()
    assert provider.calls == [["x"], ["x"]]
    assert result.embeddings == [server_vector("x", 4)]


async def test_empty_input_calls_nothing() -> None:
    provider = RecordingProvider()

    result = await embed_with_cache(provider, [])

    assert result == EmbedResult([], 0)
    assert provider.calls == []


async def test_a_result_that_is_not_an_embed_result_is_an_embedding_error() -> None:
    class ListProvider(RecordingProvider):
        async def embed_many(self, texts: Sequence[str], **options: Any) -> Any:
            return [[1.0] for _ in texts]

    with pytest.raises(EmbeddingError, match="must return EmbedResult"):
        await embed_with_cache(ListProvider(), ["a"])


def test_event_loops_in_several_threads_share_the_cache() -> None:
    cache = EmbeddingCache()
    embedder = HashEmbedder(16)
    texts = [f"text {i}" for i in range(50)]
    expected = asyncio.run(embedder.embed_many(texts)).embeddings

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: asyncio.run(cache.embed(embedder, texts, {})), range(8)))

    assert all(result.embeddings == expected for result in results)
    assert len(cache) == 50
