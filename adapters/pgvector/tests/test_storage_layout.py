"""The storage's two table layouts and the layout guard (docs/spec.md §4.7; issue 25, items 3 and 4).

``layout="mastra"`` works on ``@mastra/pg``'s tables (tests/interop/test_pg_storage.py runs Mastra itself on
them); here: a schema in one layout opened in the other is refused with ``StorageLayoutError`` naming both
layouts and how to convert, before any write (the schema's tables, columns, indexes and rows are the same
afterwards), and what Mastra's jsonb metadata cannot hold is refused before anything is written.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from mastra_memory.errors import ConfigError, ValidationError
from mastra_memory.plugins import create_storage
from mastra_memory.stores.sqlite.layout import StorageLayoutError

from mastra_memory_pgvector import PgVectorSettings
from mastra_memory_pgvector.storage import PgStorage


def _snapshot(url: str, schema: str) -> dict[str, Any]:
    """Every table, column, index and memory row of ``schema`` (read-only)."""
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        tables = conn.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = %s ORDER BY 1, 2",
            (schema,),
        ).fetchall()
        indexes = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s ORDER BY 1", (schema,)
        ).fetchall()
        rows = {
            table: conn.execute(f'SELECT * FROM "{schema}".{table} ORDER BY id').fetchall()
            for table in ("mastra_threads", "mastra_messages", "mastra_resources")
            if any(t == table for t, _, _ in tables)
        }
    return {"tables": tables, "indexes": indexes, "rows": rows}


def _with(settings: PgVectorSettings, layout: str) -> PgStorage:
    return PgStorage(settings.model_copy(update={"layout": layout}))


async def _fill(storage: PgStorage) -> None:
    await storage.save_thread({"id": "t1", "resource_id": "r1", "title": "One", "metadata": {"a": 1}})
    await storage.save_messages(
        [{"id": "m1", "thread_id": "t1", "resource_id": "r1", "role": "user", "content": "hello"}]
    )
    await storage.update_resource("r1", working_memory="# Notes", metadata={"plan": "pro"})


@pytest.mark.parametrize(("written", "opened"), [("mastra-memory", "mastra"), ("mastra", "mastra-memory")])
async def test_a_schema_in_the_other_layout_is_refused_unchanged(
    settings: PgVectorSettings, pg_url: str, written: str, opened: str
) -> None:
    first = _with(settings, written)
    try:
        await _fill(first)
    finally:
        await first.close()
    before = _snapshot(pg_url, settings.schema_name)

    other = _with(settings, opened)
    try:
        with pytest.raises(StorageLayoutError) as caught:
            await other.save_thread({"id": "t2", "resource_id": "r1"})
        with pytest.raises(StorageLayoutError):  # every call, not only the first
            await other.list_threads({"resource_id": "r1"})
    finally:
        await other.close()
    error = caught.value
    assert error.id == "MASTRA_STORAGE_PGVECTOR_INIT_WRONG_LAYOUT"
    assert error.details["found"] == written
    assert error.details["expected"] == opened
    message = str(error)
    assert "Mastra's PostgreSQL layout" in message
    assert "mastra-memory's own PostgreSQL layout" in message
    assert f"layout={written!r}" in message
    assert "nothing was written" in message
    assert "convert" in message
    assert _snapshot(pg_url, settings.schema_name) == before


async def test_a_schema_where_mastra_has_begun_is_mastras(settings: PgVectorSettings, pg_url: str) -> None:
    """Mastra's init creates its workflow table before its memory tables: a schema holding it is Mastra's."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{settings.schema_name}"')
        conn.execute(f'CREATE TABLE "{settings.schema_name}".mastra_workflow_snapshot (workflow_name text)')
    before = _snapshot(pg_url, settings.schema_name)
    own = _with(settings, "mastra-memory")
    try:
        with pytest.raises(StorageLayoutError, match="layout='mastra'"):
            await own.init()
    finally:
        await own.close()
    assert _snapshot(pg_url, settings.schema_name) == before
    mastra = _with(settings, "mastra")
    try:
        await _fill(mastra)  # the layout that belongs there creates its memory tables beside it
        assert (await mastra.get_resource_by_id("r1")).working_memory == "# Notes"  # type: ignore[union-attr]
    finally:
        await mastra.close()


async def test_mastra_layout_round_trips_the_records(settings: PgVectorSettings) -> None:
    storage = _with(settings, "mastra")
    try:
        await _fill(storage)
        thread = await storage.get_thread_by_id("t1")
        assert thread is not None
        assert thread.metadata == {"a": 1}
        assert thread.title == "One"
        messages = (await storage.list_messages("t1")).messages
        assert [m.content.parts[0].text for m in messages] == ["hello"]  # type: ignore[union-attr]
        resource = await storage.get_resource_by_id("r1")
        assert resource is not None
        assert resource.metadata == {"plan": "pro"}
    finally:
        await storage.close()


async def test_nul_in_metadata_is_refused_before_writing_in_mastras_layout(
    settings: PgVectorSettings, pg_url: str
) -> None:
    """Mastra's thread and resource metadata are jsonb, which cannot hold U+0000 (this project's own layout
    stores metadata as text and keeps it)."""
    storage = _with(settings, "mastra")
    try:
        await _fill(storage)
        before = _snapshot(pg_url, settings.schema_name)
        with pytest.raises(ValidationError, match="U\\+0000"):
            await storage.update_thread("t1", metadata={"a": "x\x00y"})
        with pytest.raises(ValidationError, match="U\\+0000"):
            await storage.update_resource("r1", metadata={"b": "\x00"})
        assert _snapshot(pg_url, settings.schema_name) == before
    finally:
        await storage.close()


def test_the_layout_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert PgVectorSettings(url="postgresql://u@h/db").layout == "mastra-memory"  # existing users' default
    monkeypatch.setenv("MASTRA_MEMORY_PGVECTOR_LAYOUT", "mastra")
    assert PgVectorSettings(url="postgresql://u@h/db").layout == "mastra"
    storage = create_storage("pgvector", url="postgresql://u@h/db", layout="mastra-memory")
    assert isinstance(storage, PgStorage)
    assert storage.settings.layout == "mastra-memory"
    with pytest.raises((ConfigError, ValueError), match="layout"):
        create_storage("pgvector", url="postgresql://u@h/db", layout="Mastra")
