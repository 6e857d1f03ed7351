"""The LibSQL store's own checks: settings and URLs, Mastra's encodings on disk, the plugin, and the layout
guard (docs/spec.md §4.7). The cross-language tests that run Mastra are in tests/interop; the kit's storage
domain runs in test_libsql_conformance.py."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from pydantic import ValidationError as PydanticValidationError

from mastra_memory.errors import ConfigError
from mastra_memory.memory import Memory
from mastra_memory.plugins import ENV_DISABLE, create_storage, create_vector, reset_plugin_manager
from mastra_memory.stores.libsql import (
    LIBSQL_STORAGE_CAPABILITIES,
    LibSQLSettings,
    LibSQLStorage,
    LibSQLVector,
)
from mastra_memory.stores.libsql.settings import libsql_path
from mastra_memory.stores.sqlite.layout import StorageLayoutError, file_layout
from mastra_memory.stores.sqlite.storage import SQLiteStorage

# The nox `tests` session installs the libsql extra; a session without it skips these tests.
pytest.importorskip("libsql", reason="the libsql store needs the libsql extra")


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("libsql:///./local.db", "./local.db"),
        ("libsql:////tmp/x.db", "/tmp/x.db"),
        ("file:./local.db", "./local.db"),
        ("file:///tmp/x.db", "/tmp/x.db"),
        ("local.db", "local.db"),
        (":memory:", ":memory:"),
    ],
)
def test_urls(url: str, path: str) -> None:
    assert libsql_path(url) == path
    assert LibSQLSettings(url=url).path == path


@pytest.mark.parametrize("url", ["libsql://my-db.turso.io", "https://my-db.turso.io"])
def test_remote_servers_are_refused(url: str) -> None:
    with pytest.raises(PydanticValidationError, match="local file"):
        LibSQLSettings(url=url)


def test_the_plugin_provides_the_storage_and_the_vector_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The store registers through the core distribution's entry point `libsql` (tests/conftest.py
    # disables entry points for the other tests).
    monkeypatch.setenv(ENV_DISABLE, "0")
    reset_plugin_manager()
    try:
        storage = create_storage(f"libsql:///{tmp_path}/local.db")
        assert isinstance(storage, LibSQLStorage)
        assert storage.path == f"{tmp_path}/local.db"
        assert storage.capabilities == LIBSQL_STORAGE_CAPABILITIES
        vector = create_vector(f"libsql:///{tmp_path}/local.db")
        assert isinstance(vector, LibSQLVector)
        assert vector.url == storage.url
        # Semantic recall on libsql:///path needs no vector=: the same file's vector store comes with it.
        memory = Memory(storage=f"libsql:///{tmp_path}/local.db", options={"semantic_recall": True})
        assert isinstance(memory.vector, LibSQLVector)
        assert memory.vector.url == storage.url
    finally:
        monkeypatch.undo()
        reset_plugin_manager()


def test_memory_never_puts_its_own_vectors_into_mastras_file(tmp_path: Path) -> None:
    storage = LibSQLStorage(f"file:{tmp_path}/local.db")  # Mastra's spelling, which names SQLite files too
    assert storage.url == f"libsql:///{tmp_path}/local.db"
    with pytest.raises(ConfigError, match="vector"):
        Memory(storage=storage, options={"semantic_recall": True})
    Memory(storage=storage)  # history and working memory need no vector store


async def test_mastras_encodings_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "local.db"
    storage = LibSQLStorage(str(path))
    await storage.save_thread(
        {
            "id": "t1",
            "resource_id": "r1",
            "title": "T",
            "metadata": {"a": 1},
            "created_at": "2024-05-01T10:00:00.5Z",
        }
    )
    await storage.save_messages(
        [
            {
                "id": "m1",
                "thread_id": "t1",
                "resource_id": "r1",
                "role": "user",
                "created_at": "2024-05-01T10:00:01.001Z",
                "content": {"format": 2, "parts": [{"type": "text", "text": "hi"}]},
            }
        ]
    )
    await storage.update_resource("r1", working_memory="# wm", metadata={"k": True})
    await storage.close()
    assert file_layout(str(path)) == "mastra"
    conn = sqlite3.connect(path)
    try:
        thread = conn.execute('SELECT "createdAt", typeof(metadata) FROM mastra_threads').fetchone()
        message = conn.execute('SELECT "createdAt", content FROM mastra_messages').fetchone()
        resource = conn.execute('SELECT "workingMemory", typeof(metadata) FROM mastra_resources').fetchone()
    finally:
        conn.close()
    # ISO text with milliseconds and Z, JSONB metadata (a blob), content as JSON text: Mastra's encodings.
    assert thread == ("2024-05-01T10:00:00.500Z", "blob")
    assert message == ("2024-05-01T10:00:01.001Z", '{"format":2,"parts":[{"type":"text","text":"hi"}]}')
    assert resource == ("# wm", "blob")
    again = LibSQLStorage(f"file:{path}")
    try:
        assert (await again.get_thread_by_id("t1")).metadata == {"a": 1}  # type: ignore[union-attr]
        assert (await again.get_resource_by_id("r1")).metadata == {"k": True}  # type: ignore[union-attr]
    finally:
        await again.close()


async def test_a_file_in_this_projects_layout_is_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    own = SQLiteStorage(str(path))
    await own.save_thread({"id": "t1", "resource_id": "r1"})
    await own.close()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    storage = LibSQLStorage(str(path))
    try:
        with pytest.raises(StorageLayoutError) as caught:
            await storage.list_threads()
    finally:
        await storage.close()
    assert caught.value.id == "MASTRA_STORAGE_LIBSQL_INIT_WRONG_LAYOUT"
    assert caught.value.details["found"] == "mastra-memory"
    assert "Mastra's LibSQL layout" in str(caught.value)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
