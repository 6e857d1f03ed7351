"""A recall that asks for a vector search while semantic recall is off says so (issue 29; docs/spec.md §5.3
step 2, [Δ]): Mastra ignores ``vectorSearchString`` without a word, here the result is the same -- history
only, no search, no embedder call -- and a :class:`SemanticRecallOffWarning` points at the caller's line."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from mastra_memory import SemanticRecallOffWarning
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

from .memory_helpers import CountingEmbedder

QUESTION = "When do I check in at the hotel in Kyoto?"


async def seeded(memory: Memory) -> Memory:
    await memory.create_thread(resource_id="user-1", thread_id="trip")
    await memory.save_messages(
        [
            {
                "id": "m1",
                "thread_id": "trip",
                "role": "user",
                "content": "Book the Hoshinoya, check-in April 3.",
            }
        ]
    )
    return memory


@pytest.fixture
def embedder() -> CountingEmbedder:
    return CountingEmbedder()


async def test_vector_search_string_without_semantic_recall_warns_and_returns_history(
    embedder: CountingEmbedder,
) -> None:
    memory = await seeded(
        Memory(storage=SQLiteStorage(":memory:"), vector=SQLiteVector(":memory:"), embedder=embedder)
    )
    with pytest.warns(SemanticRecallOffWarning, match=r'semanticRecall": True') as caught:
        result = await memory.recall("trip", resource_id="user-1", vector_search_string=QUESTION)
    assert [m.id for m in result.messages] == ["m1"]  # history (lastMessages 10), as Mastra returns
    assert result.hits == []
    assert embedder.calls.count == 0  # nothing was embedded: no search ran
    assert [Path(w.filename).name for w in caught] == [Path(__file__).name]  # the caller's line
    await memory.close()


async def test_the_default_memory_warns_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Memory()`` exactly as a new user writes it (semantic recall off by default, as in Mastra)."""
    monkeypatch.chdir(tmp_path)
    memory = await seeded(Memory())
    with pytest.warns(SemanticRecallOffWarning):
        result = await memory.recall("trip", resource_id="user-1", vector_search_string=QUESTION)
    assert result.hits == []
    await memory.close()


@pytest.mark.parametrize(
    ("options", "thread_config", "query"),
    [
        pytest.param({"semanticRecall": True}, None, QUESTION, id="semantic recall on"),
        pytest.param(None, {"semanticRecall": True}, QUESTION, id="turned on per call"),
        pytest.param(None, None, None, id="no vector_search_string"),
        pytest.param(None, None, "   ", id="blank vector_search_string"),
    ],
)
async def test_no_warning_when_the_search_runs_or_none_is_asked(
    embedder: CountingEmbedder, options: dict[str, object] | None, thread_config: object, query: str | None
) -> None:
    memory = await seeded(
        Memory(
            storage=SQLiteStorage(":memory:"),
            vector=SQLiteVector(":memory:"),
            embedder=embedder,
            options=options,
        )
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", SemanticRecallOffWarning)
        result = await memory.recall(
            "trip",
            resource_id="user-1",
            vector_search_string=query,
            thread_config=thread_config,  # type: ignore[arg-type]
        )
    assert [m.id for m in result.messages] == ["m1"]
    await memory.close()


async def test_the_warning_can_be_silenced_by_its_category() -> None:
    memory = await seeded(Memory(storage=SQLiteStorage(":memory:"), vector=SQLiteVector(":memory:")))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=SemanticRecallOffWarning)
        await memory.recall("trip", resource_id="user-1", vector_search_string=QUESTION)
    assert not [w for w in caught if issubclass(w.category, SemanticRecallOffWarning)]
    await memory.close()
