"""kill -9 of PostgreSQL in the middle of an ingest through ``Memory`` (issue 12, "keep it closed").

A child process saves messages through ``Memory(PgStorage, PgVector, "hash/64")`` and acknowledges each
save after it returns; the test SIGKILLs the postmaster it started, restarts it on the same data directory,
and checks that no acknowledged message was lost, that ``reindex`` restores the vectors of every stored
message (recall finds each one), and that the pools reconnect: the same store objects work again, in the
child and in this process, within a bounded retry.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from mastra_memory_pgvector import PgVectorSettings
from mastra_memory_pgvector.storage import PgStorage
from mastra_memory_pgvector.store import PgVector

from mastra_memory.memory import Memory

from .fault_writer import EMBEDDER, OPTIONS, message_text
from .helpers import assert_recallable, message_vectors, stored_texts, wait_until, writer
from .pg_server import FaultServer

RESOURCE, THREAD, TAG = "fault-resource", "fault-thread", "pg"
BEFORE_KILL = 40  # acknowledged messages before the kill: the fault lands mid-ingest
AFTER_RESTART = 30  # further acknowledged messages: the child's pool reconnected
DOWNTIME = 1.0  # seconds between the kill and the restart
RECONNECT_TIMEOUT = 30.0
CHILD_DEADLINE = 150.0


@pytest.mark.timeout(240)
async def test_kill9_of_postgres_mid_ingest_loses_no_acknowledged_message(
    pg_server: FaultServer, tmp_path: Path
) -> None:
    settings = PgVectorSettings(url=pg_server.url, schema_name="faults", connect_timeout=3.0)
    memory = Memory(
        storage=PgStorage(settings), vector=PgVector(settings), embedder=EMBEDDER, options=OPTIONS
    )
    try:
        # This process's pools open before the fault, so the reconnect below is a real one.
        await memory.create_thread(RESOURCE, THREAD)
        await memory.vector.list_indexes()
        args = ["--backend", "pgvector", "--url", pg_server.url, "--schema", "faults", "--tag", TAG]
        args += ["--resource", RESOURCE, "--thread", THREAD, "--count", "100000"]
        args += ["--on-error", "skip", "--pg-retries", "0"]
        stop = tmp_path / "stop"
        with writer(tmp_path, "pg", *args, "--stop", str(stop), deadline=CHILD_DEADLINE) as child:
            await wait_until(f"{BEFORE_KILL} acks", lambda: len(child.acked()) >= BEFORE_KILL, 60, child)
            assert child.process.poll() is None  # the child is mid-ingest: it never pauses between saves
            killed_pid = pg_server.kill9()
            at_kill = len(child.acked())
            await asyncio.sleep(DOWNTIME)  # saves in flight now find no server at all
            ready_after = pg_server.restart()

            attempts, end = 0, time.monotonic() + RECONNECT_TIMEOUT
            while True:  # the same storage and vector objects, whose pooled connections all died
                attempts += 1
                try:
                    await memory.storage.get_thread_by_id(THREAD)
                    await memory.vector.list_indexes()
                    break
                except Exception:
                    if time.monotonic() > end:
                        raise
                    await asyncio.sleep(0.2)

            target = at_kill + AFTER_RESTART
            await wait_until(
                f"{target} acks after the restart", lambda: len(child.acked()) >= target, 60, child
            )
            stop.touch()
            assert child.finish(30) == 0, child.output()
        # The child's adapter does not retry (--pg-retries 0): the saves in flight at the kill failed, were
        # never acknowledged, and the child went on with the next ones on the same Memory.
        summary = child.summary()
        assert summary["failed_attempts"] > 0, summary

        acked = child.acked()
        stored = await stored_texts(memory, THREAD)
        lost = [mid for mid in acked if mid not in stored]
        assert not lost, f"{len(lost)} acknowledged messages lost after kill -9: {lost[:10]}"
        for mid in acked:
            tag, n = mid.rsplit("-", 1)
            assert stored[mid] == message_text(tag, int(n))
        vectors = await message_vectors(memory)
        # An acknowledged save had committed its vectors too (docs/spec.md §5.4).
        assert [mid for mid in acked if mid not in vectors] == []
        unindexed = sorted(set(stored) - set(vectors))  # stored by the save the kill interrupted, if any

        assert await memory.reindex(RESOURCE) == len(stored)
        vectors = await message_vectors(memory)
        assert set(vectors) == set(stored)
        await assert_recallable(memory, THREAD, RESOURCE, sorted(stored))
        print(
            f"\nkill -9 of postgres {killed_pid} after {at_kill} acks; ready again in {ready_after:.2f} s; "
            f"reconnected in {attempts} attempt(s); child: {summary}; stored {len(stored)}, "
            f"acked {len(acked)}, unindexed before reindex {len(unindexed)}"
        )
    finally:
        await memory.close()
