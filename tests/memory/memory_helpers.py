"""Helpers shared by the memory tests: timestamps, vector inspection, and embedder test doubles.

The embedder doubles stand in for an external provider (one that counts its calls, fails on demand or
returns another dimension); they wrap the real ``hash/<dim>`` embedder so vectors stay deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from mastra_memory.embedders.base import EmbedResult
from mastra_memory.embedders.hash import HashEmbedder
from mastra_memory.memory import Memory
from mastra_memory.messages import MastraDBMessage
from mastra_memory.vector import MastraVector, QueryResult


def ts(second: int, minute: int = 0, day: int = 1) -> datetime:
    """2024-01-<day>T00:<minute>:<second>Z."""
    return datetime(2024, 1, day, 0, minute, second, tzinfo=UTC)


def msg(
    id: str, thread_id: str, text: str, created_at: datetime, role: str = "user", **extra: Any
) -> dict[str, Any]:
    return {
        "id": id,
        "thread_id": thread_id,
        "role": role,
        "content": text,
        "created_at": created_at,
        **extra,
    }


def recall_only(processors: Sequence[Any]) -> list[Any]:
    """The ``SemanticRecall`` processors among what ``get_input/output_processors`` returned (they also
    return ``WorkingMemory`` and ``MessageHistory``, docs/spec.md §5.12)."""
    return [p for p in processors if p.id == "semantic-recall"]


def ids(messages: Sequence[MastraDBMessage]) -> list[str]:
    return [m.id for m in messages]


async def memory_indexes(vector: MastraVector) -> list[str]:
    """Every index whose name says it holds memory vectors (default names) — plus any other index."""
    return sorted(await vector.list_indexes())


async def records(vector: MastraVector, index: str) -> list[QueryResult]:
    """Every record of ``index`` (a metadata-only listing), ordered by id."""
    return await vector.query(index, None, top_k=10_000)


async def all_records(vector: MastraVector) -> dict[str, list[QueryResult]]:
    """Index name → its records, for every index of the store."""
    return {name: await records(vector, name) for name in await vector.list_indexes()}


async def vectors_by_message(vector: MastraVector) -> dict[str, set[str]]:
    """message_id → the names of every index holding a vector of that message."""
    found: dict[str, set[str]] = {}
    for name, recs in (await all_records(vector)).items():
        for rec in recs:
            found.setdefault(str(rec.metadata.get("message_id")), set()).add(name)
    return found


async def state(memory: Memory) -> tuple[dict[str, list[tuple[str, str, str]]], dict[str, Any]]:
    """What is stored: every thread's messages (id, thread, text) and every vector record with metadata.

    Two equal snapshots mean a call changed nothing, in storage or in any vector index.
    """
    threads = await memory.storage.list_threads(per_page=False)
    messages = {}
    for thread in threads.threads:
        page = await memory.storage.list_messages(thread.id, per_page=False)
        messages[thread.id] = [(m.id, m.thread_id, m.content.content or "") for m in page.messages]
    vectors = {
        name: sorted((r.id, sorted(r.metadata.items())) for r in recs)
        for name, recs in (await all_records(memory.vector)).items()
    }
    return messages, vectors


@dataclass
class Calls:
    texts: list[list[str]]

    @property
    def count(self) -> int:
        return len(self.texts)

    @property
    def flat(self) -> list[str]:
        return [t for batch in self.texts for t in batch]


class CountingEmbedder:
    """A provider that records every ``embed_many`` call (the texts it was asked for)."""

    max_batch_size = 4_096

    def __init__(self, dimension: int = 64, model_id: str | None = None) -> None:
        self._inner = HashEmbedder(dimension)
        self.model_id = model_id or f"counting/{dimension}"
        self.dimension: int | None = dimension
        self.calls = Calls([])
        self.options: list[dict[str, Any]] = []

    async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
        self.calls.texts.append(list(texts))
        self.options.append(dict(options))
        return await self._inner.embed_many(texts)


class FlakyEmbedder(CountingEmbedder):
    """Fails its next ``failures`` calls with a provider error, then works."""

    def __init__(self, failures: int = 1, dimension: int = 64, model_id: str | None = None) -> None:
        super().__init__(dimension, model_id or f"flaky/{dimension}")
        self.failures = failures

    async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
        if self.failures > 0:
            self.failures -= 1
            self.calls.texts.append(list(texts))
            raise ConnectionError("provider unavailable (503)")
        return await super().embed_many(texts, **options)


class BrokenEmbedder(CountingEmbedder):
    """Always fails."""

    def __init__(self, dimension: int = 64) -> None:
        super().__init__(dimension, f"broken/{dimension}")

    async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
        self.calls.texts.append(list(texts))
        raise ConnectionError("provider unavailable (503)")


#: §8.3: id, thread, text; created_at is 2024-01-01T00:00:0nZ for n = 1..5 in this order.
SCENARIO = [
    ("a1", "A1", "alpha apples"),
    ("a2", "A1", "alpha bananas"),
    ("a3", "A1", "alpha cherries"),
    ("a4", "A2", "alpha dates"),
    ("b1", "B1", "beta eggs"),
]
SCENARIO_OPTIONS: dict[str, Any] = {"lastMessages": 1, "semanticRecall": {"topK": 1, "messageRange": 1}}


async def seed(memory: Memory) -> None:
    """Create the scenario's threads and save its five messages through ``Memory.save_messages``."""
    await memory.create_thread("A", "A1")
    await memory.create_thread("A", "A2")
    await memory.create_thread("B", "B1")
    await memory.save_messages([msg(i, t, text, ts(n + 1)) for n, (i, t, text) in enumerate(SCENARIO)])
