"""The embedded SQLite storage refuses a file in Mastra's LibSQL layout before any write (issue 25, item 4;
docs/spec.md §4.7): a typed error naming both layouts and how to convert, the file's bytes unchanged."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from mastra_memory.stores.sqlite.layout import StorageLayoutError, file_layout
from mastra_memory.stores.sqlite.storage import SQLiteStorage

# The memory tables exactly as @mastra/libsql 1.23.1 creates them (tests/interop/test_libsql_storage.py
# checks the libsql store creates the same).
MASTRA_TABLES = (
    'CREATE TABLE mastra_threads ("id" TEXT NOT NULL PRIMARY KEY, "resourceId" TEXT NOT NULL, '
    '"title" TEXT NOT NULL, "metadata" TEXT, "createdAt" TEXT NOT NULL, "updatedAt" TEXT NOT NULL)',
    'CREATE TABLE mastra_messages ("id" TEXT NOT NULL PRIMARY KEY, "thread_id" TEXT NOT NULL, '
    '"content" TEXT NOT NULL, "role" TEXT NOT NULL, "type" TEXT NOT NULL, "createdAt" TEXT NOT NULL, '
    '"resourceId" TEXT)',
    'CREATE TABLE mastra_resources ("id" TEXT NOT NULL PRIMARY KEY, "workingMemory" TEXT, '
    '"metadata" TEXT, "createdAt" TEXT NOT NULL, "updatedAt" TEXT NOT NULL)',
    "INSERT INTO mastra_threads VALUES ('t1', 'r1', 'hello', NULL, '2024-05-01T10:00:00.000Z', "
    "'2024-05-01T10:00:00.000Z')",
)


def _mastra_file(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")  # as Mastra's LibSQLStore sets it
    for statement in MASTRA_TABLES:
        conn.execute(statement)
    conn.commit()
    conn.close()
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _schema(path: Path) -> list[tuple[str, ...]]:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return [tuple(row) for row in conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name")]
    finally:
        conn.close()


async def test_a_mastra_file_is_refused_unchanged(tmp_path: Path) -> None:
    path = _mastra_file(tmp_path / "local.db")
    digest, schema = _digest(path), _schema(path)
    storage = SQLiteStorage(str(path))
    try:
        for attempt in (storage.init(), storage.list_threads({"resource_id": "r1"})):
            with pytest.raises(StorageLayoutError) as caught:
                await attempt
            error = caught.value
            assert error.id == "MASTRA_STORAGE_SQLITE_INIT_WRONG_LAYOUT"
            assert error.details == {"path": str(path), "found": "mastra", "expected": "mastra-memory"}
            text = str(error)
            assert "Mastra's LibSQL layout" in text
            assert "mastra-memory's embedded SQLite layout" in text
            assert "libsql:///" in text
            assert "convert" in text
    finally:
        await storage.close()
    assert _digest(path) == digest
    assert _schema(path) == schema


async def test_own_and_empty_files_open(tmp_path: Path) -> None:
    own = tmp_path / "memory.db"
    storage = SQLiteStorage(str(own))
    await storage.save_thread({"id": "t1", "resource_id": "r1"})
    await storage.close()
    assert file_layout(str(own)) == "mastra-memory"
    again = SQLiteStorage(str(own))
    assert (await again.get_thread_by_id("t1")) is not None
    await again.close()

    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    assert file_layout(str(empty)) is None
    fresh = SQLiteStorage(str(empty))
    await fresh.init()
    await fresh.close()
    assert file_layout(str(tmp_path / "missing.db")) is None


async def test_a_mastra_file_without_memory_tables_is_refused(tmp_path: Path) -> None:
    """Mastra's init creates its workflow table first; this project's memory tables must not go there."""
    path = tmp_path / "local.db"
    conn = sqlite3.connect(path)
    conn.execute(
        'CREATE TABLE mastra_workflow_snapshot ("workflow_name" TEXT NOT NULL, "run_id" TEXT NOT NULL)'
    )
    conn.commit()
    conn.close()
    digest = _digest(path)
    assert file_layout(str(path)) == "mastra"
    storage = SQLiteStorage(str(path))
    try:
        with pytest.raises(StorageLayoutError):
            await storage.init()
    finally:
        await storage.close()
    assert _digest(path) == digest
