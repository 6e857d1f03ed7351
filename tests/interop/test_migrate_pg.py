"""``migrate`` between the pgvector adapter's two layouts (docs/spec.md §4.7): this project's tables →
``@mastra/pg``'s (``layout="mastra"``) → this project's again, every record field kept; a failure part-way
(a thread whose metadata Mastra's jsonb cannot hold, written after others) leaves the destination as it
was. The server is the pgvector adapter's test server (or ``MASTRA_MEMORY_TEST_PG_DSN``); where it cannot
be started the module skips with the reason, and fails under CI (``mastra_memory_conformance.missing``)."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator

import pytest

from mastra_memory.errors import ValidationError
from mastra_memory.storage.migrate import migrate
from mastra_memory_conformance.missing import missing, started

from ..stores.migrate_records import fill, snapshot

try:
    from mastra_memory_pgvector import PgVectorSettings
    from mastra_memory_pgvector.storage import PgStorage
    from mastra_memory_pgvector.testing.server import ServerUnavailable, local_server
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    missing(f"the pgvector adapter is not installed ({exc}); pip install -e adapters/pgvector")


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    existing = os.environ.get("MASTRA_MEMORY_TEST_PG_DSN", "").strip()
    if existing:
        yield existing
        return
    with started(
        local_server(), "PostgreSQL (the pgvector adapter's test server)", (ServerUnavailable,)
    ) as url:
        yield url


def _storage(url: str, layout: str) -> PgStorage:
    schema = f"migrate_{uuid.uuid4().hex[:10]}"
    return PgStorage(PgVectorSettings(url=url, schema_name=schema, layout=layout, pool_max_size=2))


def test_own_layout_to_mastras_and_back_keeps_every_field(pg_url: str) -> None:
    async def scenario() -> None:
        source = _storage(pg_url, "mastra-memory")
        mastra = _storage(pg_url, "mastra")
        back = _storage(pg_url, "mastra-memory")
        try:
            await fill(source)
            before = await snapshot(source)
            report = await migrate(source, mastra)
            assert (report.threads, report.messages, report.resources) == (2, 3, 2)
            assert await snapshot(mastra) == before
            await migrate(mastra, back)
            assert await snapshot(back) == before
        finally:
            for storage in (source, mastra, back):
                await storage.close()

    asyncio.run(scenario())


def test_the_dry_run_prints_postgres_sql_and_a_failure_part_way_rolls_back(pg_url: str) -> None:
    async def scenario() -> None:
        source = _storage(pg_url, "mastra-memory")
        mastra = _storage(pg_url, "mastra")
        try:
            await fill(source)
            report = await migrate(source, mastra, dry_run=True)
            statements = "\n".join(report.statements)
            assert '"resourceId"' in statements
            assert "%(" in statements  # psycopg's named parameters: the destination's own SQL
            # Listed (and written) last, newest first: t2 and t1 are written before it fails.
            await source.save_thread(
                {
                    "id": "t0",
                    "resource_id": "ada",
                    "metadata": {"note": "a\u0000b"},
                    "created_at": "2020-01-01T00:00:00Z",
                }
            )
            with pytest.raises(ValidationError, match="U\\+0000"):  # the dry run finds it too
                await migrate(source, mastra, dry_run=True)
            await mastra.init()
            with pytest.raises(ValidationError):
                await migrate(source, mastra)
            # Nothing of the conversion stayed: not even the threads written before the failure.
            assert (await mastra.list_threads(per_page=False, include_archived=True)).threads == []
            assert await mastra.get_resource_by_id("ada") is None
        finally:
            await source.close()
            await mastra.close()

    asyncio.run(scenario())
