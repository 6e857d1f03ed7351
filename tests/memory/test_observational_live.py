"""The observational-memory scenario of test_observational.py on a real model (docs/spec.md §5.14): with
``OPENAI_API_KEY`` (model ``MASTRA_MEMORY_OM_MODEL``, default ``openai/gpt-4o-mini``), or a local
OpenAI-compatible server named by ``MASTRA_MEMORY_OM_BASE_URL`` (with ``MASTRA_MEMORY_OM_MODEL`` as
``provider/model``). Skipped, with the reason, when neither is set."""

from __future__ import annotations

import os
from typing import Any

import pytest

from mastra_memory.memory import Memory
from mastra_memory.memory.observational.groups import parse_groups
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

from .om_helpers import said, system, turn

BASE_URL = os.environ.get("MASTRA_MEMORY_OM_BASE_URL")
MODEL = os.environ.get("MASTRA_MEMORY_OM_MODEL", "openai/gpt-4o-mini")


def _model() -> Any:
    return {"id": MODEL, "url": BASE_URL} if BASE_URL else MODEL


@pytest.mark.skipif(
    not (os.environ.get("OPENAI_API_KEY") or BASE_URL),
    reason="OPENAI_API_KEY is not set (nor MASTRA_MEMORY_OM_BASE_URL for a local OpenAI-compatible server)",
)
@pytest.mark.enable_socket
async def test_a_real_observer_and_reflector() -> None:  # pragma: no cover - needs a model
    ends: list[dict[str, Any]] = []
    memory = Memory(
        storage=SQLiteStorage(":memory:"),
        vector=SQLiteVector(":memory:"),
        embedder="hash/64",
        options={
            "observationalMemory": {
                "model": _model(),
                "observation": {"messageTokens": 80},
                "reflection": {"observationTokens": 60},
                "hooks": {"onObservationEnd": ends.append, "onReflectionEnd": ends.append},
            }
        },
    )
    try:
        await turn(memory, "t1", "u1", "My name is Ada and I live in Lisbon.", "Nice to meet you, Ada.")
        await turn(
            memory, "t1", "u1", "I have a cat called Tofu who is seven years old.", "Tofu sounds lovely."
        )
        await turn(memory, "t1", "u1", "My sister Maria visits on Friday the fifth.", "Enjoy her visit!")
        assert ends, "the Observer ran"
        assert all(e["error"] is None for e in ends), [e["error"] for e in ends]
        record = await memory.get_observational_memory("t1", "u1")
        assert record is not None
        assert parse_groups(record.active_observations)
        assert "Tofu" in record.active_observations
        after = await turn(memory, "t1", "u1", "What is my cat called?")
        assert said(after.prompt) == ["What is my cat called?"]
        assert "<observations>" in system(after.prompt)
        usage = memory.observational_usage
        assert usage.observer.calls >= 1
        assert usage.observer.input_tokens > 0
    finally:
        await memory.close()
