"""Observational memory in one LibSQL file, two languages: ``@mastra/libsql``'s ``LibSQLStore`` and this
project's ``LibSQLStorage`` (issue 27; docs/spec.md §4.8), proved by running Mastra itself
(``mastra/om_store.mjs``, one Node process for the module; the records and checks are :mod:`.om_exchange`'s).

* This project writes a thread's record through two generations (observations, a buffered chunk, a flag,
  a merged config, a reflection) and a resource's record; Mastra reads them back equal, newest first.
* Mastra writes its own thread's record the same way; this project reads it equal to what Mastra returns.
* The table this project creates in a new file is exactly the one Mastra creates (columns and index).
* [Δ] Mastra finds a thread's record under any resource id; this project only under the owner's.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.stores.libsql import LibSQLStorage

from . import om_exchange as om
from .mastra_runner import run_mastra

pytest.importorskip("libsql", reason="the libsql store needs the libsql extra")


async def _use(path: Path, job: Any) -> Any:
    storage = LibSQLStorage(str(path))
    try:
        await storage.init()
        return await job(storage)
    finally:
        await storage.close()


async def _nothing(storage: LibSQLStorage) -> None:
    return None


@pytest.fixture(scope="module")
def exchange(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("libsql-om")
    path, ours_new, mastras_new = root / "shared.db", root / "ours-new.db", root / "mastra-new.db"
    ours = asyncio.run(_use(path, om.write_ours))
    asyncio.run(_use(ours_new, _nothing))
    answer = run_mastra(
        {
            "store": "libsql",
            "file": str(path),
            "fresh": str(mastras_new),
            "read": om.READS,
            "write": om.WRITE,
        },
        script=om.SCRIPT,
    )
    theirs = asyncio.run(_use(path, om.read_theirs))
    return {"ours": ours, "answer": answer, "theirs": theirs, "schemas": (ours_new, mastras_new)}


def test_mastra_reads_what_python_wrote(exchange: dict[str, Any]) -> None:
    om.check_mastra_reads_ours(exchange["ours"], exchange["answer"])


def test_python_reads_what_mastra_wrote(exchange: dict[str, Any]) -> None:
    om.check_we_read_mastras(exchange["theirs"], exchange["answer"])


def test_the_table_is_mastras(exchange: dict[str, Any]) -> None:
    ours, theirs = exchange["schemas"]

    def schema(path: Path) -> list[Any]:
        with sqlite3.connect(path) as conn:
            return conn.execute(
                "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'mastra_observational_memory' "
                "ORDER BY name"
            ).fetchall()

    assert schema(ours), "the table exists"
    assert schema(ours) == schema(theirs)


def test_only_the_owner_reads_a_thread_record(exchange: dict[str, Any]) -> None:
    om.check_only_the_owner_reads(exchange["theirs"], exchange["answer"])
