"""Fixtures: a real ``Memory`` on the embedded SQLite default (a file in the test's tmp dir) with the offline
``local/wordllama`` embedder; the models are PydanticAI's offline ``FunctionModel``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mastra_memory import Memory

RECALL = {"lastMessages": 10, "semanticRecall": {"topK": 1, "messageRange": 1, "scope": "resource"}}


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'memory.db'}"


@pytest.fixture
async def memory(db: str) -> AsyncIterator[Memory]:
    memory = Memory(storage=db, options=RECALL)
    yield memory
    await memory.close()
