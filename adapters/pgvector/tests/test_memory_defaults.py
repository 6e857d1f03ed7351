"""``Memory(storage="pgvector://...")`` without ``vector=`` uses the pgvector vector store with the same URL
(docs/spec.md §5.1), never an SQLite vector store on a PostgreSQL URL. Nothing connects at construction,
so no server is needed: the URL points at a port where nothing listens."""

from __future__ import annotations

from pathlib import Path

import pytest
from mastra_memory.memory import Memory

from mastra_memory_pgvector.storage import PgStorage
from mastra_memory_pgvector.store import PgVector

URL = "pgvector://user:secret@127.0.0.1:9/app"


def test_a_pgvector_storage_url_brings_the_pgvector_vector_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    memory = Memory(storage=URL, embedder="hash/8", options={"semanticRecall": True})
    assert isinstance(memory.storage, PgStorage)
    assert isinstance(memory.vector, PgVector)
    assert memory.vector.settings == memory.storage.settings
    assert memory.vector.settings.url == URL
    assert list(tmp_path.iterdir()) == []  # no SQLite file beside it
