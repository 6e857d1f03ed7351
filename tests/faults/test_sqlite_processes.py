"""The embedded SQLite store under process faults (issue 12, "keep it closed"): a writer killed with
SIGKILL mid-ingest, and two writer processes sharing one file.

Storage and vector store share the file (``create_storage``/``create_vector("sqlite", url=...)``), in WAL
mode with a busy timeout (stores/sqlite/connection.py); every save is one transaction per side.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from mastra_memory.memory import Memory
from mastra_memory.plugins import create_storage, create_vector

from .fault_writer import EMBEDDER, OPTIONS, message_id, message_text
from .helpers import assert_recallable, message_vectors, stored_texts, wait_until, writer

BEFORE_KILL = 60  # acknowledged messages before the SIGKILL
PER_WRITER = 240  # messages of each of the two concurrent writers
CHILD_DEADLINE = 90.0


def _memory(db: Path) -> Memory:
    return Memory(
        storage=create_storage("sqlite", url=str(db)),
        vector=create_vector("sqlite", url=str(db)),
        embedder=EMBEDDER,
        options=OPTIONS,
    )


def _integrity(db: Path) -> list[tuple[str, ...]]:
    with closing(sqlite3.connect(db, timeout=10)) as conn:
        return [tuple(row) for row in conn.execute("PRAGMA integrity_check")]


def _writer_args(db: Path, tag: str, count: int, *, create_thread: bool = True) -> list[str]:
    args = ["--backend", "sqlite", "--url", str(db), "--tag", tag, "--resource", f"r-{tag}"]
    args += ["--thread", f"t-{tag}", "--count", str(count)]
    return [*args, "--create-thread"] if create_thread else args


@pytest.mark.timeout(180)
async def test_sigkill_of_a_sqlite_writer_keeps_every_acknowledged_message(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    with writer(tmp_path, "killed", *_writer_args(db, "a", 1_000_000), deadline=CHILD_DEADLINE) as child:
        await wait_until(f"{BEFORE_KILL} acks", lambda: len(child.acked()) >= BEFORE_KILL, 60, child)
        child.kill9()  # mid-ingest: the writer never pauses between saves
    acked = child.acked()

    assert _integrity(db) == [("ok",)]
    memory = _memory(db)
    try:
        stored = await stored_texts(memory, "t-a")
        lost = [mid for mid in acked if mid not in stored]
        assert not lost, f"{len(lost)} acknowledged messages lost after SIGKILL: {lost[:10]}"
        assert all(stored[mid] == message_text("a", int(mid.rsplit("-", 1)[1])) for mid in acked)
        vectors = await message_vectors(memory)
        assert [mid for mid in acked if mid not in vectors] == []  # acknowledged = vectors committed too
        unindexed = sorted(set(stored) - set(vectors))  # the save the kill interrupted, if any

        assert await memory.reindex("r-a") == len(stored)
        assert set(await message_vectors(memory)) == set(stored)
        await assert_recallable(memory, "t-a", "r-a", sorted(stored))
    finally:
        await memory.close()

    # A new writer process continues on the same file, in the same thread.
    start = 1 + max(int(mid.rsplit("-", 1)[1]) for mid in stored)
    args = [*_writer_args(db, "a", start + 30, create_thread=False), "--start", str(start)]
    with writer(tmp_path, "next", *args, deadline=CHILD_DEADLINE) as successor:
        assert successor.finish(CHILD_DEADLINE) == 0, successor.output()
    assert successor.summary()["acked"] == 30
    assert _integrity(db) == [("ok",)]
    memory = _memory(db)
    try:
        stored_after = await stored_texts(memory, "t-a")
        assert set(stored_after) == set(stored) | set(successor.acked())
        await assert_recallable(memory, "t-a", "r-a", successor.acked())
    finally:
        await memory.close()
    print(
        f"\nSIGKILL after {len(acked)} acks; stored {len(stored)}; unindexed before reindex {len(unindexed)}"
    )


@pytest.mark.timeout(180)
async def test_two_writer_processes_share_one_sqlite_file(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"  # fresh: both processes also create the schema at the same moment
    go = tmp_path / "go"
    ready_a, ready_b = tmp_path / "ready-a", tmp_path / "ready-b"
    args_a = [*_writer_args(db, "a", PER_WRITER), "--ready", str(ready_a), "--go", str(go)]
    args_b = [*_writer_args(db, "b", PER_WRITER), "--ready", str(ready_b), "--go", str(go)]
    with (
        writer(tmp_path, "a", *args_a, deadline=CHILD_DEADLINE) as a,
        writer(tmp_path, "b", *args_b, deadline=CHILD_DEADLINE) as b,
    ):
        await wait_until("both writers ready", lambda: ready_a.exists() and ready_b.exists(), 60, a, b)
        go.touch()
        codes = (a.finish(CHILD_DEADLINE), b.finish(CHILD_DEADLINE))
    for child in (a, b):
        assert "database is locked" not in child.output()
    assert codes == (0, 0), f"{a.output()}\n{b.output()}"
    assert (a.summary()["acked"], b.summary()["acked"]) == (PER_WRITER, PER_WRITER)

    assert _integrity(db) == [("ok",)]
    memory = _memory(db)
    try:
        for tag in ("a", "b"):
            expected = [message_id(tag, n) for n in range(PER_WRITER)]
            stored = await stored_texts(memory, f"t-{tag}")
            assert sorted(stored) == expected
            vectors = await message_vectors(memory)
            assert [mid for mid in expected if mid not in vectors] == []
            await assert_recallable(memory, f"t-{tag}", f"r-{tag}", expected)
    finally:
        await memory.close()
