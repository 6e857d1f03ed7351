"""MongoDB's metadata rules are part of the shared validation (issue 23, item 2; docs/spec.md §3.3, §3.6).

Field names with a leading ``$`` or a ``.`` (``mongodb-field-names``), U+0000 and integers beyond int64 are
refused by ``MongoDBVector._metadata_problem`` before any I/O, so ``Memory`` refuses such a message before
storing it. Before the fix they were checked inside ``_upsert``, after the template had read the index: a
store nobody could reach failed with a connection error instead. No server is needed here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from mastra_memory.errors import ValidationError

from mastra_memory_mongodb import MongoDBSettings
from mastra_memory_mongodb.store import MongoDBVector


@pytest.fixture
async def unreachable() -> AsyncIterator[MongoDBVector]:
    """A store whose server cannot be reached (port 9 refuses): any I/O would fail."""
    store = MongoDBVector(
        MongoDBSettings(
            url="mongodb://127.0.0.1:9",
            server_selection_timeout_ms=300,
            connect_timeout_ms=300,
            timeout_ms=500,
        )
    )
    yield store
    await store.close()


@pytest.mark.parametrize(
    ("metadata", "phrase"),
    [
        ({"$where": 1}, "$where (key): MongoDB field names must not start with '$' or contain '.'"),
        ({"$": 1}, "$ (key): MongoDB field names"),
        ({"a.b": 1}, "a.b (key): MongoDB field names"),
        ({"x": {"y.$gt": 1}}, "x.y.$gt (key): MongoDB field names"),
        ({"l": [{"$expr": 1}]}, "l[0].$expr (key): MongoDB field names"),
        ({"s": "a\x00b"}, "U+0000"),
        ({"n": 2**64}, "signed 64-bit range"),
    ],
    ids=["dollar-where", "dollar", "dotted", "nested", "in-a-list", "nul", "int-beyond-64-bits"],
)
async def test_refused_before_any_io(
    unreachable: MongoDBVector, metadata: dict[str, Any], phrase: str
) -> None:
    calls: dict[str, Callable[[], Awaitable[Any]]] = {
        "UPSERT": lambda: unreachable.upsert("idx", [[1.0, 0.0]], [metadata], ["a"]),
        "UPDATE_VECTOR": lambda: unreachable.update_vector("idx", id="a", update={"metadata": metadata}),
    }
    for operation, call in calls.items():
        with pytest.raises(ValidationError) as caught:
            await call()
        assert caught.value.id == f"MASTRA_VECTOR_MONGODB_{operation}_INVALID_METADATA", caught.value
        assert phrase in caught.value.message
    with pytest.raises(ValidationError) as caught:  # by filter: judged without a record id
        await unreachable.update_vector("idx", filter={"k": 1}, update={"metadata": metadata})
    assert caught.value.id == "MASTRA_VECTOR_MONGODB_UPDATE_VECTOR_INVALID_METADATA"


def test_the_rule_is_the_hook() -> None:
    """One definition: the hook the template and ``Memory`` call holds the adapter's rules."""
    store = MongoDBVector(MongoDBSettings(url="mongodb://127.0.0.1:9"))
    assert store._metadata_problem({"ok": {"nested": [1, "x"]}}) is None
    assert "mongodb-field-names" in (store._metadata_problem({"a": {"b.c": 1}}) or "")
