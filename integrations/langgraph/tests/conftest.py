"""Fixtures: ``MastraStore`` on the embedded SQLite default (storage and vectors in one file of the test's
tmp dir) and on the SQLite storage with Qdrant's embedded engine (qdrant-edge) for the vectors; LangGraph's
own ``InMemoryStore`` runs the same scenarios as the reference. Nothing leaves loopback."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from mastra_memory import create_vector

from mastra_memory_langgraph import MastraStore

#: The stores every scenario runs on: LangGraph's reference and ours on two vector stores.
KINDS = ["inmemory", "sqlite", "qdrant-edge"]
OURS = ["sqlite", "qdrant-edge"]

StoreFactory = Callable[..., BaseStore]


def build(kind: str, folder: Path, **options: Any) -> BaseStore:
    """A fresh store of ``kind``: ``index=`` and ``ttl=`` pass through (``InMemoryStore`` takes ``index``)."""
    if kind == "inmemory":
        return InMemoryStore(index=options.get("index"))
    folder.mkdir(parents=True, exist_ok=True)
    db = f"sqlite:///{folder / 'memory.db'}"
    vector = (
        create_vector(db) if kind == "sqlite" else create_vector("qdrant", edge_path=str(folder / "edge"))
    )
    return MastraStore(db, vector=vector, **options)


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_store(kind: str, tmp_path: Path) -> Iterator[StoreFactory]:
    """``make_store(index=..., ttl=...)``: a new store of the test's kind, closed at the end."""
    made: list[BaseStore] = []

    def factory(**options: Any) -> BaseStore:
        store = build(kind, tmp_path / f"store{len(made)}", **options)
        made.append(store)
        return store

    yield factory
    for store in made:
        if isinstance(store, MastraStore):
            store.close()
