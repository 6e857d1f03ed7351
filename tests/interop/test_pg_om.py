"""Observational memory in one PostgreSQL schema, two languages: ``@mastra/pg``'s ``PostgresStore`` and this
project's ``PgStorage(layout="mastra")`` (issue 27; docs/spec.md §4.8), proved by running Mastra itself
(``mastra/om_store.mjs``, one Node process for the module; records and checks from :mod:`.om_exchange`).

* Mastra reads back equal what this project wrote (two generations of a thread, a resource's record), and
  this project reads Mastra's equal to what Mastra returns.
* The table this project creates in a new schema is exactly the one Mastra creates (columns, defaults,
  indexes).
* [Δ] Mastra finds a thread's record under any resource id; this project only under the owner's.

The server comes from ``mastra_memory_pgvector.testing`` (or ``MASTRA_MEMORY_TEST_PG_DSN``).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from mastra_memory_conformance.missing import missing, started

from . import om_exchange as om
from .mastra_runner import run_mastra

try:
    import psycopg
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


async def _use(url: str, schema: str, job: Any) -> Any:
    storage = PgStorage(PgVectorSettings(url=url, schema_name=schema, layout="mastra"))
    try:
        await storage.init()
        return await job(storage)
    finally:
        await storage.close()


async def _nothing(storage: PgStorage) -> None:
    return None


def om_table(url: str, schema: str) -> dict[str, Any]:
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        columns = conn.execute(
            "SELECT column_name, data_type, is_nullable, column_default, ordinal_position "
            "FROM information_schema.columns WHERE table_schema = %s "
            "AND table_name = 'mastra_observational_memory' ORDER BY ordinal_position",
            (schema,),
        ).fetchall()
        indexes = conn.execute(
            "SELECT indexname, replace(indexdef, %s, 'S') FROM pg_indexes WHERE schemaname = %s "
            "AND tablename = 'mastra_observational_memory' ORDER BY indexname",
            (schema, schema),
        ).fetchall()
    return {"columns": columns, "indexes": indexes}


@pytest.fixture(scope="module")
def exchange(pg_url: str) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:8]
    shared, ours_new, mastras_new = f"om_{tag}", f"om_{tag}_ours", f"om_{tag}_mastra"
    ours = asyncio.run(_use(pg_url, shared, om.write_ours))
    asyncio.run(_use(pg_url, ours_new, _nothing))
    answer = run_mastra(
        {
            "store": "pg",
            "url": pg_url,
            "schema": shared,
            "fresh": mastras_new,
            "read": om.READS,
            "write": om.WRITE,
        },
        script=om.SCRIPT,
    )
    theirs = asyncio.run(_use(pg_url, shared, om.read_theirs))
    tables = (om_table(pg_url, ours_new), om_table(pg_url, mastras_new))
    return {"ours": ours, "answer": answer, "theirs": theirs, "tables": tables}


def test_mastra_reads_what_python_wrote(exchange: dict[str, Any]) -> None:
    om.check_mastra_reads_ours(exchange["ours"], exchange["answer"])


def test_python_reads_what_mastra_wrote(exchange: dict[str, Any]) -> None:
    om.check_we_read_mastras(exchange["theirs"], exchange["answer"])


def test_the_table_is_mastras(exchange: dict[str, Any]) -> None:
    ours, theirs = exchange["tables"]
    assert ours["columns"], "the table exists"
    assert ours == theirs


def test_only_the_owner_reads_a_thread_record(exchange: dict[str, Any]) -> None:
    om.check_only_the_owner_reads(exchange["theirs"], exchange["answer"])
