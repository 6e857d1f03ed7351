"""``mastra_memory.sync.wrap(Memory(...))`` from plain, non-async code."""

from __future__ import annotations

from pathlib import Path

import pytest

from mastra_memory import sync
from mastra_memory.errors import ThreadOwnershipError
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage

from .memory_helpers import msg, ts


def test_memory_through_the_sync_facade(tmp_path: Path) -> None:
    db = str(tmp_path / "memory.db")
    memory = sync.wrap(
        Memory(
            storage=SQLiteStorage(db),
            embedder="hash/32",
            options={"lastMessages": 2, "semanticRecall": {"topK": 1, "messageRange": 0}},
        )
    )
    thread = memory.create_thread("r", "t", title="Sync")
    assert thread.id == "t"
    saved = memory.save_messages(
        [
            msg(f"m{i}", "t", text, ts(i))
            for i, text in enumerate(["red apples", "blue sky", "green grass"], 1)
        ]
    )
    assert [m.id for m in saved.messages] == ["m1", "m2", "m3"]
    result = memory.recall("t", resource_id="r", vector_search_string="red apples")
    assert [m.id for m in result.messages] == ["m1", "m2", "m3"]
    assert [h.message_id for h in result.hits] == ["m1"]
    with pytest.raises(ThreadOwnershipError):
        memory.recall("t", resource_id="someone-else")
    memory.delete_messages(["m1"])
    assert [m.id for m in memory.recall("t", per_page=False).messages] == ["m2", "m3"]
    # The default vector store lives in the same file as the SQLite storage.
    assert memory.unwrap().vector.settings.url == db  # type: ignore[attr-defined]
    assert memory.options.last_messages == 2  # plain attributes pass through
    memory.close()
