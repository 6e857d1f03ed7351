"""The plugin registers the ``qdrant`` vector store; ``testing/targets.py`` registers its conformance
targets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mastra_memory_conformance.targets import ConformanceTarget
from pydantic import BaseModel

from mastra_memory_qdrant import QDRANT_CAPABILITIES, plugin
from mastra_memory_qdrant.settings import QdrantSettings
from mastra_memory_qdrant.store import QdrantVector
from mastra_memory_qdrant.testing import targets as qdrant_targets


async def test_the_vector_store_is_registered(tmp_path: Path) -> None:
    found: list[tuple[str, Any, type[BaseModel]]] = []
    plugin.register_vector_stores(lambda name, factory, model: found.append((name, factory, model)))
    ((name, factory, model),) = found
    assert (name, model) == ("qdrant", QdrantSettings)
    store = factory(QdrantSettings(edge_path=str(tmp_path)))
    assert isinstance(store, QdrantVector)
    assert store.capabilities is QDRANT_CAPABILITIES
    assert store.mode == "edge"
    await store.close()


def test_the_targets_are_registered() -> None:
    targets: list[ConformanceTarget] = []
    qdrant_targets.register_conformance_targets(targets.append)
    assert {(t.name, t.kind) for t in targets} == {
        ("qdrant-url", "url"),
        ("qdrant-docker", "docker"),
        ("qdrant-edge", "embedded"),
        ("qdrant-local", "embedded"),
    }
    assert all(t.adapter == "qdrant" and t.has_vector and not t.has_storage for t in targets)


def test_the_edge_target_provisions_a_private_directory(tmp_path: Path) -> None:
    targets: list[ConformanceTarget] = []
    qdrant_targets.register_conformance_targets(targets.append)
    edge = next(t for t in targets if t.name == "qdrant-edge")
    with edge.provision(tmp_path) as settings:
        assert settings.vector["edge_path"] == str(tmp_path / "edge")
        assert QdrantSettings(**settings.vector).mode == "edge"
        assert settings.dimension == 8
