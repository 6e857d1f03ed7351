"""pgvector's metadata rule (U+0000, which PostgreSQL text cannot hold) is part of the shared validation
(issue 23, item 2; docs/spec.md §3.3, §3.6): ``PgVector._metadata_problem`` refuses before any I/O, so a
store nobody can reach answers with the ValidationError. Before the fix the rule ran inside ``_upsert``,
after the template had read the index, and such a call failed with a connection error. No server needed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mastra_memory.errors import ValidationError

from mastra_memory_pgvector import PgVectorSettings
from mastra_memory_pgvector.store import PgVector


@pytest.fixture
async def unreachable() -> AsyncIterator[PgVector]:
    """A store whose server cannot be reached (port 9 refuses): any I/O would fail."""
    store = PgVector(PgVectorSettings(url="postgresql://u:p@127.0.0.1:9/db", connect_timeout=1, retries=0))
    yield store
    await store.close()


@pytest.mark.parametrize(
    ("metadata", "phrase"),
    [
        ({"s": "a\x00b"}, "s: strings containing U+0000"),
        ({"k\x00": 1}, "(key): strings containing U+0000"),
        ({"l": [{"z": "\x00"}]}, "l[0].z: strings containing U+0000"),
    ],
    ids=["value", "key", "nested"],
)
async def test_refused_before_any_io(unreachable: PgVector, metadata: dict[str, Any], phrase: str) -> None:
    with pytest.raises(ValidationError) as caught:
        await unreachable.upsert("idx", [[1.0, 0.0]], [metadata], ["a"])
    assert caught.value.id == "MASTRA_VECTOR_PGVECTOR_UPSERT_INVALID_METADATA"
    assert phrase in caught.value.message
    with pytest.raises(ValidationError) as caught:
        await unreachable.update_vector("idx", filter={"k": 1}, update={"metadata": metadata})
    assert caught.value.id == "MASTRA_VECTOR_PGVECTOR_UPDATE_VECTOR_INVALID_METADATA"


def test_floats_and_text_pass_the_hook() -> None:
    store = PgVector(PgVectorSettings(url="postgresql://u:p@127.0.0.1:9/db"))
    assert store._metadata_problem({"f": 1.5, "s": "back\\u0000slash", "l": ["x", {"y": 2}]}) is None
