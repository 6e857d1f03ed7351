"""Two processes opening one fresh SQLite file at the same moment both get a WAL connection.

Switching a new file to WAL takes an exclusive lock, and SQLite reports "database is locked" for that at
once instead of waiting through the busy timeout; the two-writer fault test failed that way now and then
(stores/sqlite/connection.py retries the switch within the busy timeout). The raw pattern failed in 18 of
600 openings here; this runs enough rounds to see it.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from pathlib import Path

import pytest

from mastra_memory.stores.sqlite.connection import SQLiteConnection

ROUNDS = 150
JOIN_TIMEOUT = 30.0


def _open_and_write(
    path: str, go: multiprocessing.synchronize.Event, results: multiprocessing.Queue[str]
) -> None:
    go.wait(JOIN_TIMEOUT)

    async def main() -> None:
        conn = SQLiteConnection(path)
        try:
            await conn.run(lambda c: c.execute("CREATE TABLE IF NOT EXISTS t (a)"))
            await conn.transaction(lambda c: c.execute("INSERT INTO t VALUES (1)"))
            mode = await conn.run(lambda c: c.execute("PRAGMA journal_mode").fetchone()[0])
            assert mode == "wal", mode
        finally:
            await conn.close()

    try:
        asyncio.run(main())
        results.put("ok")
    except Exception as exc:  # reported to the test process, which fails with it
        results.put(repr(exc))


@pytest.mark.timeout(240)
def test_two_processes_opening_a_fresh_file_together_never_see_database_is_locked(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    failures: list[str] = []
    for round_ in range(ROUNDS):
        path = str(tmp_path / f"fresh-{round_}.db")
        go, results = ctx.Event(), ctx.Queue()
        children = [ctx.Process(target=_open_and_write, args=(path, go, results)) for _ in range(2)]
        for child in children:
            child.start()
        go.set()
        for child in children:
            child.join(JOIN_TIMEOUT)
            if child.is_alive():
                child.kill()
                child.join(JOIN_TIMEOUT)
        outcomes = [results.get(timeout=JOIN_TIMEOUT) for _ in children]
        failures += [f"round {round_}: {o}" for o in outcomes if o != "ok"]
    assert not failures, f"{len(failures)} of {2 * ROUNDS} openings failed: {failures[:5]}"
