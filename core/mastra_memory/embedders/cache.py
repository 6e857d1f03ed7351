"""The process-wide embedding cache: an LRU of one vector per ``(model, chunk text)``.

`Memory` and `SemanticRecall` both embed through :func:`embed_with_cache`, so a text embedded by one is
free for the other. Only successful results are stored. Concurrent tasks asking for the same missing
text share one provider call instead of each making their own.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError, EmbeddingError
from ..tracing import span
from .base import Embedder, EmbedResult, cache_namespace
from .validate import check_embeddings

DEFAULT_MAX_ENTRIES = 1_000

_Key = tuple[str, str]
_Future = asyncio.Future[npt.NDArray[np.float64]]


@dataclass(frozen=True, slots=True)
class CacheStats:
    """Counters since the cache was created or last cleared."""

    hits: int
    misses: int
    size: int
    max_entries: int


class EmbeddingCache:
    """An LRU of embeddings keyed by ``(model key, text)``, safe across threads and asyncio tasks.

    The model key is the embedder's ``cache_namespace`` (or ``model_id``), extended by a digest of the
    per-call options that change vectors, so ``dimensions=512`` and the full-size vectors never mix.
    ``max_entries=0`` turns storage off (concurrent identical requests are still shared).
    """

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        self._entries: OrderedDict[_Key, npt.NDArray[np.float64]] = OrderedDict()
        self._max_entries = _check_capacity(max_entries)
        # A threading lock, not an asyncio one: the sync facade may drive event loops in several threads,
        # and no critical section here awaits.
        self._lock = threading.Lock()
        self._inflight: dict[_Key, _Future] = {}
        self._dimensions: dict[str, int] = {}
        self._hits = 0
        self._misses = 0

    @property
    def max_entries(self) -> int:
        """How many vectors the cache holds before evicting the least recently used."""
        return self._max_entries

    def resize(self, max_entries: int) -> None:
        """Change the capacity, evicting least recently used entries if it shrinks."""
        with self._lock:
            self._max_entries = _check_capacity(max_entries)
            self._evict()

    def clear(self) -> None:
        """Drop every vector, the remembered dimensions and the counters."""
        with self._lock:
            self._entries.clear()
            self._dimensions.clear()
            self._hits = self._misses = 0

    def stats(self) -> CacheStats:
        """Hits, misses, current size and capacity."""
        with self._lock:
            return CacheStats(self._hits, self._misses, len(self._entries), self._max_entries)

    def __len__(self) -> int:
        return len(self._entries)

    async def embed(self, embedder: Embedder, texts: Sequence[str], options: dict[str, Any]) -> EmbedResult:
        """Embed ``texts`` with ``embedder``, calling the provider only for texts not cached.

        Misses go to the provider in batches of at most ``embedder.max_batch_size``. The result is in
        input order; ``usage_tokens`` sums what the provider reported for the calls made here (0 when every
        text was cached, ``None`` when calls were made and none reported usage).

        Raises:
            EmbeddingError: the provider failed or returned unusable vectors (nothing is cached then).
            ConfigError: the provider is misconfigured (e.g. its API key is missing).
        """
        model_key = cache_namespace(getattr(embedder, "cache_namespace", embedder.model_id), options)
        found: dict[str, npt.NDArray[np.float64]] = {}
        pending = list(dict.fromkeys(texts))
        usage: int | None = 0
        reported = False
        called = False
        while pending:
            owned, waiting = self._claim(model_key, pending, found)
            if owned:
                called = True
                tokens = await self._fetch(embedder, model_key, owned, options, found)
                if tokens is not None:
                    usage = (usage or 0) + tokens
                    reported = True
            retry: list[str] = []
            for text, future in waiting.items():
                try:
                    found[text] = await asyncio.shield(future)
                except asyncio.CancelledError:
                    if not future.cancelled():
                        raise  # this task itself was cancelled
                    retry.append(text)  # the owner was cancelled: claim the text on the next pass
            pending = retry
        if called and not reported:
            usage = None
        return EmbedResult([found[text].tolist() for text in texts], usage)

    def _claim(
        self, model_key: str, texts: list[str], found: dict[str, npt.NDArray[np.float64]]
    ) -> tuple[dict[str, _Future], dict[str, _Future]]:
        """Sort texts into cached (into ``found``), ours to fetch, and being fetched by another task."""
        loop = asyncio.get_running_loop()
        owned: dict[str, _Future] = {}
        waiting: dict[str, _Future] = {}
        with self._lock:
            for text in texts:
                key = (model_key, text)
                vector = self._entries.get(key)
                if vector is not None:
                    self._entries.move_to_end(key)
                    self._hits += 1
                    found[text] = vector
                    continue
                future = self._inflight.get(key)
                # A future belongs to one event loop; a request running in another loop is not shared.
                if future is not None and not future.done() and future.get_loop() is loop:
                    waiting[text] = future
                    continue
                self._misses += 1
                owned[text] = self._inflight[key] = loop.create_future()
        return owned, waiting

    async def _fetch(
        self,
        embedder: Embedder,
        model_key: str,
        owned: dict[str, _Future],
        options: dict[str, Any],
        found: dict[str, npt.NDArray[np.float64]],
    ) -> int | None:
        """Embed ``texts`` (claimed by this task) into ``found``, cache them, settle their futures."""
        usage: int | None = None
        vectors: dict[str, npt.NDArray[np.float64]] = {}
        texts = list(owned)
        try:
            batch_size = max(1, int(embedder.max_batch_size))
            for start in range(0, len(texts), batch_size):
                batch = texts[start : start + batch_size]
                with span(
                    "mastra_memory.embed",
                    {"mastra_memory.embedder": embedder.model_id, "mastra_memory.text_count": len(batch)},
                    text=batch,
                ) as current:
                    result = await embedder.embed_many(batch, **options)
                    if isinstance(result, EmbedResult):
                        current.set_attribute("mastra_memory.embed.usage_tokens", result.usage_tokens or 0)
                if not isinstance(result, EmbedResult):
                    raise EmbeddingError(
                        f"Embedder {embedder.model_id} returned {type(result).__name__} from embed_many(); "
                        "it must return EmbedResult(embeddings, usage_tokens)",
                        details={"model_id": embedder.model_id},
                    )
                with self._lock:
                    expected = self._dimensions.get(model_key)
                array = check_embeddings(embedder.model_id, result.embeddings, len(batch), expected)
                with self._lock:
                    self._dimensions.setdefault(model_key, array.shape[1])
                array.flags.writeable = False
                vectors.update(zip(batch, array, strict=True))
                if isinstance(result.usage_tokens, int):
                    usage = (usage or 0) + result.usage_tokens
        except BaseException as exc:
            self._settle(model_key, owned, vectors, exc)
            raise
        self._settle(model_key, owned, vectors, None)
        found.update(vectors)
        return usage

    def _settle(
        self,
        model_key: str,
        owned: dict[str, _Future],
        vectors: dict[str, npt.NDArray[np.float64]],
        error: BaseException | None,
    ) -> None:
        with self._lock:
            for text, future in owned.items():
                key = (model_key, text)
                # Only our own entry: a task in another event loop may have claimed the text since.
                if self._inflight.get(key) is future:
                    del self._inflight[key]
                vector = vectors.get(text)
                # Vectors of batches that succeeded are kept even when a later batch failed.
                if vector is not None:
                    if self._max_entries:
                        self._entries[key] = vector
                        self._entries.move_to_end(key)
                    future.set_result(vector)
                elif isinstance(error, Exception):
                    future.set_exception(error)
                    future.exception()  # mark retrieved: nobody may be waiting for it
                else:
                    future.cancel()  # the owner was cancelled; waiters fetch for themselves
            self._evict()

    def _evict(self) -> None:
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)


def _check_capacity(max_entries: int) -> int:
    if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 0:
        raise ConfigError(f"Embedding cache max_entries must be an integer >= 0, got {max_entries!r}")
    return max_entries


_CACHE = EmbeddingCache()


def get_embedding_cache() -> EmbeddingCache:
    """The process-wide cache shared by `Memory` and `SemanticRecall`."""
    return _CACHE


async def embed_with_cache(embedder: Embedder, texts: Sequence[str], **options: Any) -> EmbedResult:
    """Embed ``texts`` through the process-wide cache; see :meth:`EmbeddingCache.embed`."""
    return await _CACHE.embed(embedder, texts, options)
