"""A store keeps working when it is used from one event loop after another (scripts, sync wrappers)."""

from __future__ import annotations

import asyncio

from mastra_memory import sync

from mastra_memory_pgvector import PgVectorSettings
from mastra_memory_pgvector.store import PgVector


def test_a_store_survives_a_new_event_loop(settings: PgVectorSettings) -> None:
    store = PgVector(settings)
    asyncio.run(store.create_index("loops", 2))
    asyncio.run(store.upsert("loops", [[1.0, 0.0]], [{"a": 1}], ["x"]))
    hits = asyncio.run(store.query("loops", [1.0, 0.0], top_k=1))
    assert [(h.id, h.score, h.metadata) for h in hits] == [("x", 1.0, {"a": 1})]
    asyncio.run(store.close())


def test_the_sync_facade(settings: PgVectorSettings) -> None:
    store = sync.wrap(PgVector(settings))
    store.create_index("facade", 2, "euclidean")
    store.upsert("facade", [[0.0, 0.0], [3.0, 4.0]], ids=["origin", "far"])
    hits = store.query("facade", [0.0, 0.0], top_k=2)
    assert [(h.id, h.score) for h in hits] == [("origin", 1.0), ("far", 1 / 6)]
    store.close()
