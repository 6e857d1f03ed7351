"""``migrate`` between the mongodb adapter's two layouts (docs/spec.md §4.7) on its test server, FerretDB v1
(or ``MASTRA_MEMORY_TEST_MONGODB_URI``): this project's documents → ``@mastra/mongodb``'s
(``layout="mastra"``) → this project's again, every record field kept, and Mastra's own ``MongoDBStore``
(``mastra/mongo_store.mjs``) reads the converted database; the dry run lists the collection operations and
creates nothing; the guard refuses the other layout and ids holding other records, changing nothing.

FerretDB has no transactions, so a conversion that fails part-way (a thread whose metadata key Mastra's
documents cannot hold, written after others) leaves the records written before it; running the same
conversion again (after fixing the source) skips those, unchanged, and writes the rest.

Where the adapter or Go (to build FerretDB) is missing the module skips with the reason, and fails under CI
(``mastra_memory_conformance.missing``).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.errors import ValidationError
from mastra_memory.storage.migrate import MigrationConflictError, migrate
from mastra_memory_conformance.missing import missing, started

from ..stores.migrate_records import fill, snapshot
from .mastra_runner import run_mastra

try:
    from mastra_memory_mongodb import MongoDBSettings
    from mastra_memory_mongodb.documents import StorageLayoutError
    from mastra_memory_mongodb.storage import MongoDBStorage
    from mastra_memory_mongodb.testing.ferretdb import ferretdb_server
    from pymongo import MongoClient
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    missing(f"the mongodb adapter is not installed ({exc}); pip install -e adapters/mongodb")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    existing = os.environ.get("MASTRA_MEMORY_TEST_MONGODB_URI", "").strip()
    if existing:
        yield existing, "mongodb"
        return
    ferretdb = ferretdb_server(Path(tmp_path_factory.mktemp("ferretdb")))
    with started(ferretdb, "FerretDB (the mongodb adapter's test server)") as uri:
        yield uri, "ferretdb"


def _storage(server: tuple[str, str], layout: str, db_name: str | None = None) -> MongoDBStorage:
    uri, dialect = server
    name = db_name or f"migrate_{uuid.uuid4().hex[:10]}"
    return MongoDBStorage(
        MongoDBSettings(url=uri, db_name=name, dialect=dialect, layout=layout, max_pool_size=2)
    )


def _databases(uri: str) -> set[str]:
    client: MongoClient[dict[str, Any]] = MongoClient(uri, serverSelectionTimeoutMS=10_000, timeoutMS=30_000)
    try:
        return set(client.list_database_names())
    finally:
        client.close()


def test_own_layout_to_mastras_and_back_keeps_every_field(server: tuple[str, str]) -> None:
    async def scenario() -> str:
        source = _storage(server, "mastra-memory")
        mastra = _storage(server, "mastra")
        back = _storage(server, "mastra-memory")
        try:
            await fill(source)
            before = await snapshot(source)
            report = await migrate(source, mastra)
            assert (report.threads, report.messages, report.resources, report.already_there) == (2, 3, 2, 0)
            assert await snapshot(mastra) == before
            await migrate(mastra, back)
            assert await snapshot(back) == before
            return mastra.settings.db_name
        finally:
            for storage in (source, mastra, back):
                await storage.close()

    db_name = asyncio.run(scenario())
    # Mastra reads the converted database: threads, messages, the tool call in its prompt, working memory.
    answer = run_mastra(
        {
            "url": server[0],
            "dbName": db_name,
            "read": {
                "threads": ["ada"],
                "messages": ["t1"],
                "resources": ["ada"],
                "workingMemory": [{"threadId": "t1", "resourceId": "ada"}],
            },
        },
        script="mongo_store.mjs",
    )
    assert "error" not in answer, answer
    (thread,) = answer["threads"]["ada"]
    assert (thread["id"], thread["title"], thread["metadata"]) == ("t1", "Kyoto", {"topic": "trip", "n": 1.5})
    assert (thread["createdAt"], thread["updatedAt"]) == (
        "2024-05-01T10:00:00.123Z",
        "2024-05-01T11:00:00.999Z",
    )
    rows = answer["messages"]["t1"]["rows"]
    assert [(m["id"], m["createdAt"]) for m in rows] == [
        ("m1", "2024-05-01T10:00:01.456Z"),
        ("m2", "2024-05-01T10:00:02.789Z"),
    ]
    prompt = answer["messages"]["t1"]["prompt"]
    calls = [p for m in prompt for p in (m["content"] if isinstance(m["content"], list) else [])]
    assert any(p.get("type") == "tool-call" and p.get("toolCallId") == "call_1" for p in calls)
    assert answer["workingMemory"]["ada"] == "# User\n- Name: Ada"


def test_the_dry_run_lists_the_operations_and_creates_nothing(server: tuple[str, str]) -> None:
    async def scenario() -> None:
        source = _storage(server, "mastra-memory")
        target = _storage(server, "mastra")
        try:
            await fill(source)
            report = await migrate(source, target, dry_run=True)
            assert report.dry_run
            assert (report.threads, report.messages, report.resources) == (2, 3, 2)
            statements = "\n".join(report.statements)
            assert "threads.update_one({'id': 't1'}" in statements
            assert "messages.bulk_write(" in statements
            assert "resources.update_one({'id': 'ada'}" in statements
            assert "session" not in statements
            # A record the destination cannot hold fails the dry run as it would the real run.
            await source.save_thread({"id": "t0", "resource_id": "ada", "metadata": {"a.b": 1}})
            with pytest.raises(ValidationError, match="'\\.'"):
                await migrate(source, target, dry_run=True)
        finally:
            await source.close()
            await target.close()
        assert target.settings.db_name not in _databases(server[0])

    asyncio.run(scenario())


def test_the_guard_refuses_the_other_layout_and_other_records(server: tuple[str, str]) -> None:
    async def scenario() -> None:
        source = _storage(server, "mastra-memory")
        mastra = _storage(server, "mastra")
        try:
            await fill(source)
            await migrate(source, mastra)
            converted = await snapshot(mastra)
            # Mastra's database given as this project's layout: refused before any write.
            wrong = _storage(server, "mastra-memory", mastra.settings.db_name)
            with pytest.raises(StorageLayoutError) as refused:
                await migrate(source, wrong)
            await wrong.close()
            assert refused.value.details["found"] == "mastra"
            assert await snapshot(mastra) == converted
            # The right layout, an id holding another record: refused, nothing written.
            other = _storage(server, "mastra")
            await other.save_thread({"id": "t1", "resource_id": "zed", "title": "kept"})
            kept = await snapshot(other)
            with pytest.raises(MigrationConflictError, match="thread 't1'"):
                await migrate(source, other)
            assert await snapshot(other) == kept
            await other.close()
        finally:
            await source.close()
            await mastra.close()

    asyncio.run(scenario())


def test_a_failure_part_way_leaves_what_was_written_and_a_rerun_completes(server: tuple[str, str]) -> None:
    async def scenario() -> None:
        source = _storage(server, "mastra-memory")
        mastra = _storage(server, "mastra")
        try:
            await fill(source)
            before = await snapshot(source)
            # Listed (and written) last, oldest: t2 and t1 are written before it fails.
            bad = {
                "id": "t0",
                "resource_id": "ada",
                "metadata": {"a.b": 1},
                "created_at": "2020-01-01T00:00:00Z",
            }
            await source.save_thread(bad)
            with pytest.raises(ValidationError):
                await migrate(source, mastra)
            part = await snapshot(mastra)
            if server[1] == "ferretdb":  # no transactions: what was written before the failure stays
                assert [t["id"] for t in part["threads"]] == ["t1", "t2"]
                assert part["messages"] == part["resources"] == []
            # The user fixes the source and runs the same conversion again: it completes.
            await source.delete_thread("t0")
            report = await migrate(source, mastra)
            assert report.already_there == len(part["threads"])
            assert await snapshot(mastra) == before
            # Once complete, another run finds everything there and writes nothing.
            again = await migrate(source, mastra)
            assert again.already_there == 2 + 3 + 2
            assert await snapshot(mastra) == before
        finally:
            await source.close()
            await mastra.close()

    asyncio.run(scenario())
