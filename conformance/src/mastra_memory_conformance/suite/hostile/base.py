"""What the hostile tests share: builders of bad input, the verdict on what a call raised, the seeded
vector index and its whole state, and the ``backend`` fixture of the ``Memory`` tests.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Final, Generic, TypeVar

import pytest
import pytest_asyncio

from mastra_memory.capabilities import AdapterCapabilities
from mastra_memory.errors import ValidationError, error_id
from mastra_memory.memory import Memory
from mastra_memory.storage import MemoryStorage
from mastra_memory.vector import MastraVector, QueryResult

from ...datasets import make_vector, query_vector
from ...targets import ConformanceTarget, TargetSettings
from .. import IndexUnderTest, Item, VectorSuiteBase, query_limit, settle, target_storage

__all__ = [
    "BEYOND_UTC",
    "SEED_IDS",
    "BadInput",
    "HostileSuiteBase",
    "MemoryBackend",
    "check_typed",
    "cyclic",
    "deep_list",
    "many_keys",
    "message_vectors",
    "nested",
    "raised_by",
    "records_by_id",
    "seed_vectors",
    "thread_scope",
    "vec",
    "vector_metadata",
    "vector_state",
    "verdict",
]

#: A datetime that leaves the years 1-9999 once converted to UTC.
BEYOND_UTC: Final = datetime(9999, 12, 31, 23, 0, tzinfo=timezone(timedelta(hours=-5)))


def nested(levels: int, leaf: Any = 1) -> dict[str, Any]:
    """A dict nested ``levels`` deep: ``{"k": {"k": ... leaf}}``."""
    value: Any = leaf
    for _ in range(levels - 1):
        value = {"k": value}
    return {"k": value}


def deep_list(levels: int) -> list[Any]:
    """A list nested ``levels`` deep: ``[[... [1] ...]]``."""
    value: list[Any] = [1]
    for _ in range(levels - 1):
        value = [value]
    return value


def cyclic() -> dict[str, Any]:
    """A dict that contains itself."""
    value: dict[str, Any] = {"a": 1}
    value["self"] = value
    return value


def many_keys(total: int) -> dict[str, Any]:
    """``total`` keys spread over nested objects of 50 keys each."""
    return {f"g{g}": {f"k{i}": i for i in range(50)} for g in range(math.ceil(total / 50))}


def vec(dim: int, first: Any = None, seed: int = 1) -> list[Any]:
    vector: list[Any] = make_vector(seed, dim)
    if first is not None:
        vector[0] = first
    return vector


def check_typed(error: BaseException, kind: str, store: str, operation: str, status: str, label: str) -> None:
    """A ``ValidationError`` with the id of the public operation, and a printable message."""
    assert isinstance(error, ValidationError), (
        f"{label}: expected a ValidationError, got {type(error).__module__}.{type(error).__name__}: {error!r}"
    )
    expected = error_id(kind, store, operation, status)
    assert error.id == expected, f"{label}: error id {error.id!r}, expected {expected!r}: {error}"
    str(error).encode("utf-8")  # the message never carries a lone surrogate


async def raised_by(call: Callable[[], Awaitable[Any]]) -> BaseException | None:
    """What ``call`` raised (an untyped exception, or a panic that is no ``Exception``, too), or None."""
    try:
        await call()
    except BaseException as exc:  # a Rust panic is a BaseException: the test must see it
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        return exc
    return None


def verdict(label: str, error: BaseException | None, damaged: bool) -> None:
    """Fail for accepted input and for damaged data, naming both when both happened."""
    if error is None:
        pytest.fail(
            f"{label}: the bad input was accepted{' and the stored records changed' if damaged else ''}"
        )
    assert not damaged, f"{label}: the stored records changed ({type(error).__name__}: {error!r})"


CallT = TypeVar("CallT")


@dataclass(frozen=True)
class BadInput(Generic[CallT]):
    """One bad input: its label, the call that makes it, and the ``OPERATION`` and ``STATUS`` of the id of
    the ``ValidationError`` it must raise."""

    label: str
    operation: str
    status: str
    call: CallT


# --- the seeded vector index -------------------------------------------------------------------------

#: The seeded records: single-character ids beside "v0", so splitting "v0" into characters shows.
SEED_IDS: Final = ("v0", "v", "0", "r1")


async def seed_vectors(idx: IndexUnderTest) -> list[Any]:
    """Create the index with the records of :data:`SEED_IDS` and return its state (:func:`vector_state`)."""
    await idx.load(
        [
            Item(rid, make_vector(n + 1, idx.dimension), {"n": n, "tag": f"t{n}", "nested": {"x": n}})
            for n, rid in enumerate(SEED_IDS)
        ]
    )
    return await vector_state(idx)


async def vector_state(idx: IndexUnderTest) -> list[Any]:
    """The count, a query with vectors and metadata, a filtered query and (where declared) the listing."""
    await idx.settle()
    store, index, dimension = idx.store, idx.name, idx.dimension
    top = idx.limit(20)
    hits = await store.query(index, query_vector(dimension), top_k=top, include_vector=True)
    state: list[Any] = [
        (await store.describe_index(index)).count,
        sorted((h.id, sorted(h.metadata.items()), h.vector) for h in hits),
        sorted(h.id for h in await store.query(index, query_vector(dimension), top_k=top, filter={"n": 1})),
    ]
    if idx.capabilities.metadata_only_query:
        state.append(sorted(h.id for h in await store.query(index, None, top_k=top)))
    return state


async def records_by_id(idx: IndexUnderTest, count: int) -> dict[str, int]:
    """Id -> the ``n`` of its metadata, for every record (one query covering them all)."""
    await idx.settle()
    hits = await idx.store.query(idx.name, query_vector(idx.dimension), top_k=idx.limit(count + 5))
    return {h.id: int(h.metadata["n"]) for h in hits}


# --- Memory over the target ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryBackend:
    """What a hostile ``Memory`` test runs on: the target's vector store and manifest, the storage
    (:func:`~mastra_memory_conformance.suite.target_storage`, closed after the test) and the dimension."""

    vector: MastraVector
    capabilities: AdapterCapabilities
    storage: MemoryStorage
    dimension: int

    def memory(self, options: Mapping[str, Any]) -> Memory:
        """A ``Memory`` over the pair with the ``hash`` embedder of the target's dimension."""
        return Memory(
            storage=self.storage, vector=self.vector, embedder=f"hash/{self.dimension}", options=dict(options)
        )

    async def settle(self, index: str) -> None:
        """Wait until writes to ``index`` are visible (eventually consistent targets only)."""
        await settle(self.vector, self.capabilities, index)


def thread_scope(index: str) -> dict[str, Any]:
    """Options of a ``Memory`` that recalls within the thread from its own index ``index``."""
    return {
        "lastMessages": 1,
        "semanticRecall": {"topK": 2, "messageRange": 0, "scope": "thread", "indexName": index},
    }


async def _vectors_of(backend: MemoryBackend, index: str, message_id: str) -> list[QueryResult]:
    await backend.settle(index)
    return await backend.vector.query(
        index,
        query_vector(backend.dimension),
        top_k=query_limit(backend.capabilities, 10),
        filter={"message_id": message_id},
    )


async def vector_metadata(backend: MemoryBackend, index: str, message_id: str) -> dict[str, dict[str, Any]]:
    """Vector id -> metadata of every vector whose metadata names ``message_id``."""
    return {h.id: h.metadata for h in await _vectors_of(backend, index, message_id)}


async def message_vectors(backend: MemoryBackend, index: str, message_id: str) -> dict[str, tuple[str, str]]:
    """Vector id -> (resource_id, content) of every vector whose metadata names ``message_id``."""
    return {
        h.id: (str(h.metadata.get("resource_id")), str(h.metadata.get("content")))
        for h in await _vectors_of(backend, index, message_id)
    }


class HostileSuiteBase(VectorSuiteBase):
    """The base of the hostile parts: ``idx`` for the vector tests, ``backend`` for the ``Memory`` tests."""

    @pytest_asyncio.fixture(loop_scope="function")
    async def backend(
        self,
        conformance_target: ConformanceTarget,
        target_settings: TargetSettings,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        conformance_dimension: int,
        tmp_path: Path,
    ) -> AsyncIterator[MemoryBackend]:
        """The target's vector store with the storage a ``Memory`` test uses, closed afterwards."""
        storage = target_storage(conformance_target, target_settings, tmp_path / "memory.db")
        try:
            yield MemoryBackend(vector_store, capabilities, storage, conformance_dimension)
        finally:
            await storage.close()
