"""``migrate`` (docs/spec.md §4.7): this project's SQLite layout → Mastra's LibSQL layout → back, every
record field kept (ids, timestamps to the millisecond, metadata, working memory, archived threads); the
dry run writes nothing; the guard refuses the other layout and ids already present, changing nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from mastra_memory.storage.migrate import MigrationConflictError, migrate
from mastra_memory.stores.sqlite.layout import StorageLayoutError
from mastra_memory.stores.sqlite.storage import SQLiteStorage

from .migrate_records import file_bytes, fill, snapshot

pytest.importorskip("libsql", reason="the libsql store needs the libsql extra")

from mastra_memory.stores.libsql import LibSQLStorage


async def test_sqlite_to_libsql_and_back_keeps_every_field(tmp_path: Path) -> None:
    source = SQLiteStorage(str(tmp_path / "old.db"))
    await fill(source)
    before = await snapshot(source)
    assert [len(before[kind]) for kind in ("threads", "messages", "resources")] == [2, 3, 2]
    assert before["threads"][0]["updated_at"] == "2024-05-01T11:00:00.999Z"

    mastra = LibSQLStorage(str(tmp_path / "mastra.db"))
    report = await migrate(source, mastra)
    assert (report.threads, report.messages, report.resources, report.dry_run) == (2, 3, 2, False)
    assert await snapshot(mastra) == before

    back = SQLiteStorage(str(tmp_path / "back.db"))
    await migrate(mastra, back)
    assert await snapshot(back) == before
    # The tool call is stored in Mastra's camelCase form in the LibSQL file (what Mastra reads).
    message = (await mastra.list_messages_by_id(["m2"]))[0]
    call = message.content.parts[0].tool_invocation
    assert (call.tool_call_id, call.tool_name) == ("call_1", "weather")
    for storage in (source, mastra, back):
        await storage.close()


async def test_the_dry_run_prints_the_sql_and_writes_nothing(tmp_path: Path) -> None:
    source = SQLiteStorage(str(tmp_path / "old.db"))
    await fill(source)
    # A destination that does not exist is not created.
    missing = tmp_path / "new.db"
    report = await migrate(source, LibSQLStorage(str(missing)), dry_run=True)
    assert report.dry_run
    assert (report.threads, report.messages, report.resources) == (2, 3, 2)
    assert file_bytes(missing) == {}
    statements = "\n".join(report.statements)
    assert 'INSERT INTO mastra_threads (id, "resourceId"' in statements
    assert "INSERT INTO mastra_messages" in statements
    assert "3 row(s)" in statements
    assert 'INSERT INTO mastra_resources (id, "workingMemory"' in statements
    assert "'2024-05-01T11:00:00.999Z'" in statements  # the source's updated_at, not a bump

    # An existing destination keeps every byte.
    existing = tmp_path / "mastra.db"
    mastra = LibSQLStorage(str(existing))
    await mastra.save_thread({"id": "other", "resource_id": "eve"})
    await mastra.close()
    before = file_bytes(existing)
    await migrate(source, LibSQLStorage(str(existing)), dry_run=True)
    assert file_bytes(existing) == before
    await source.close()


async def test_the_guard_refuses_the_other_layout_and_existing_ids(tmp_path: Path) -> None:
    source = SQLiteStorage(str(tmp_path / "old.db"))
    await fill(source)
    mastra_file = tmp_path / "mastra.db"
    mastra = LibSQLStorage(str(mastra_file))
    await migrate(source, mastra)
    await mastra.close()

    # A Mastra-layout file given as this project's SQLite store: refused before any write.
    before = file_bytes(mastra_file)
    with pytest.raises(StorageLayoutError) as refused:
        await migrate(source, SQLiteStorage(str(mastra_file)))
    assert refused.value.details["found"] == "mastra"
    assert file_bytes(mastra_file) == before

    # The right layout, but the ids are there already: refused inside the unit, nothing written.
    other = SQLiteStorage(str(tmp_path / "other.db"))
    await other.save_thread({"id": "t1", "resource_id": "zed", "title": "kept"})
    kept = await snapshot(other)
    with pytest.raises(MigrationConflictError, match="thread 't1'"):
        await migrate(source, other)
    assert await snapshot(other) == kept

    # The destination may already hold other records of its layout: they stay, the new ones join them.
    extra = SQLiteStorage(str(tmp_path / "extra.db"))
    await extra.save_thread({"id": "x", "resource_id": "zed"})
    await migrate(source, extra)
    assert {t["id"] for t in (await snapshot(extra))["threads"]} == {"t1", "t2", "x"}
    for storage in (source, other, extra):
        await storage.close()
