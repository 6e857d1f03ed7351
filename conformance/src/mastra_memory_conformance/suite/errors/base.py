"""What the errors tests share: "before any I/O" observed by counting the adapter's backend hooks
(:class:`HookCounter`), a seeded index whose whole state a refused call must leave as it was, and the
check of an error's id.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Final

from mastra_memory.capabilities import AdapterCapabilities
from mastra_memory.errors import MastraMemoryError, ValidationError
from mastra_memory.vector import MastraVector

from ...datasets import make_vector, query_vector
from .. import IndexUnderTest, Item, expected_error_id

__all__ = [
    "HOOKS",
    "WRITES",
    "Call",
    "HookCounter",
    "IndexState",
    "assert_counted",
    "check_id",
    "index_state",
    "seed_index",
    "vec",
]

#: The backend hooks of the ``MastraVector`` template.
HOOKS: Final = (
    "_create_index",
    "_upsert",
    "_upsert_replacing",
    "_query",
    "_list_indexes",
    "_describe_index",
    "_delete_index",
    "_update_by_id",
    "_update_by_filter",
    "_delete_by_ids",
    "_delete_by_filter",
)
WRITES: Final = frozenset(HOOKS) - {"_query", "_list_indexes", "_describe_index"}
_ID: Final = re.compile(r"^MASTRA_VECTOR_[A-Z0-9]+(?:_[A-Z0-9]+)*$")


class HookCounter:
    """Counts calls of an adapter instance's backend hooks while active (a context manager).

    The real hooks still run: each is wrapped by an instance attribute that counts and delegates.
    """

    def __init__(self, store: MastraVector) -> None:
        self.store = store
        self.calls: Counter[str] = Counter()

    def _wrap(self, name: str) -> Callable[..., Any]:
        original: Callable[..., Any] = getattr(self.store, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return original(*args, **kwargs)

        return counted

    def __enter__(self) -> HookCounter:
        for name in HOOKS:
            setattr(self.store, name, self._wrap(name))
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        for name in HOOKS:
            if name in vars(self.store):
                delattr(self.store, name)

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    @property
    def writes(self) -> int:
        return sum(n for name, n in self.calls.items() if name in WRITES)


#: A call under test: (store, index name, dimension) -> the awaitable of the public method.
Call = Callable[[MastraVector, str, int], Awaitable[Any]]
#: What :func:`index_state` reads: the count and every record (id, metadata, vector).
IndexState = tuple[int, list[tuple[str, Any, Any]]]


def vec(dim: int, seed: int = 1) -> list[float]:
    return make_vector(seed, dim)


def check_id(
    error: MastraMemoryError, capabilities: AdapterCapabilities, operation: str, status: str
) -> None:
    assert _ID.match(error.id), (
        f"error id {error.id!r} is not MASTRA_VECTOR_<STORE>_<OPERATION>_<STATUS> upper snake"
    )
    assert error.id == expected_error_id(capabilities, operation, status), error.id
    if isinstance(error, ValidationError):
        assert error.category == "USER", (
            f"{error.id}: a validation error is a USER error, not {error.category}"
        )


async def seed_index(idx: IndexUnderTest) -> IndexState:
    """Create the index with four records (``v0``–``v3``, categories books and home) and return its state."""
    items = [
        Item(f"v{i}", make_vector(i + 1, idx.dimension), {"n": i, "category": "home" if i % 2 else "books"})
        for i in range(4)
    ]
    await idx.load(items)
    return await index_state(idx)


async def index_state(idx: IndexUnderTest) -> IndexState:
    """The count and a full query with vectors: what a refused call must leave unchanged."""
    await idx.settle()
    count = (await idx.store.describe_index(idx.name)).count
    hits = await idx.store.query(
        idx.name, query_vector(idx.dimension), top_k=idx.limit(10), include_vector=True
    )
    return count, [(h.id, h.metadata, h.vector) for h in hits]


async def assert_counted(counter: HookCounter, idx: IndexUnderTest) -> None:
    """The counter is live: a valid query afterwards is counted."""
    before = counter.calls["_query"]
    await idx.store.query(idx.name, query_vector(idx.dimension), top_k=1)
    assert counter.calls["_query"] == before + 1, "the hook counter did not see a valid query"
