"""The private test server's directories are owned through a lock, and the sweep of stale ones only
removes those whose lock nobody holds (see :mod:`mastra_memory_pgvector.testing.server`)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from mastra_memory_pgvector.testing import server
from mastra_memory_pgvector.testing.server import _INSTALL_PREFIX, _PREFIX, _remove_stale_directories

BOUND = 120.0  # seconds for both children to start and stop their servers (a few seconds each)
STARTS = 3  # servers each child starts one after the other, so that its sweeps meet the other's initdb

CHILD = textwrap.dedent(
    """
    import sys
    import psycopg
    from mastra_memory_pgvector.testing.server import local_server

    print("ready", flush=True)
    sys.stdin.readline()  # "go": both children start together
    for _ in range(int(sys.argv[1])):
        with local_server() as url:
            with psycopg.connect(url, connect_timeout=10) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                conn.execute("CREATE TABLE t (v vector(2))")
                conn.execute("INSERT INTO t VALUES ('[1,2]')")
                assert conn.execute("SELECT count(*) FROM t").fetchone() == (1,)
    print("ok", flush=True)
    """
)

HOLDER = textwrap.dedent(
    """
    import fcntl, os, sys
    fd = os.open(sys.argv[1], os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    print("locked", flush=True)
    sys.stdin.readline()  # hold the lock until told (or until the test closes our stdin)
    """
)


@pytest.fixture
def private_tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temporary directory of the test's own, as every process's ``tempfile.gettempdir()``.

    So the sweeps here meet only this test's directories (never other runs' servers), and theirs only ours.
    Traversable by others: as root the servers run as another user."""
    directory = Path(tempfile.mkdtemp(prefix="mastra-pg-ownership-"))
    directory.chmod(0o711)
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    monkeypatch.setenv("TMPDIR", str(directory))
    try:
        yield directory
    finally:
        subprocess.run(["rm", "-rf", str(directory)], check=False, timeout=60)


@contextlib.contextmanager
def lock_held_elsewhere(lock: Path) -> Iterator[None]:
    """Another process holds the exclusive lock on ``lock`` while the block runs."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        yield
    finally:
        holder.communicate("\n", timeout=30)


def make_server_directory(tmp: Path, name: str, *, lock: bool = True, pid: int | None = None) -> Path:
    root = tmp / f"{_PREFIX}{name}"
    (root / "data").mkdir(parents=True)
    if pid is not None:
        (root / "data" / "postmaster.pid").write_text(f"{pid}\n{root / 'data'}\n")
    if lock:
        root.with_name(root.name + ".lock").touch()
    return root


def age(path: Path, seconds: float) -> None:
    past = time.time() - seconds
    os.utime(path, (past, past))


def test_two_processes_start_servers_at_the_same_time(private_tmp: Path) -> None:
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(STARTS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        for child in children:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready"
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        deadline = time.monotonic() + BOUND
        results = [child.communicate(timeout=max(1.0, deadline - time.monotonic())) for child in children]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait(30)
    for child, (out, err) in zip(children, results, strict=True):
        assert (child.returncode, out.strip()) == (0, "ok"), err[-3000:]
    # Each removed its directories and lock files. What stays is the copy of an installation the server
    # user could not reach (as root from a private clone; a cache shared by later starts, server.py).
    left = [p for p in private_tmp.iterdir() if not p.name.startswith(_INSTALL_PREFIX)]
    assert left == []


def test_the_sweep_removes_only_directories_whose_lock_it_can_take(private_tmp: Path) -> None:
    # A server being created: initdb's postmaster.pid names a negated PID, no process has it.
    creating = make_server_directory(private_tmp, "creating", pid=-(2**22 + 12345))
    running = make_server_directory(private_tmp, "running", pid=os.getpid())
    abandoned = make_server_directory(private_tmp, "abandoned", pid=2**22 + 12345)
    abandoned_creating = make_server_directory(private_tmp, "abandoned-creating", pid=-(2**22 + 12345))
    with lock_held_elsewhere(creating.with_name(creating.name + ".lock")):
        with lock_held_elsewhere(running.with_name(running.name + ".lock")):
            _remove_stale_directories()
            assert creating.is_dir()
            assert running.is_dir()
        assert not abandoned.exists()
        assert not abandoned.with_name(abandoned.name + ".lock").exists()
        assert not abandoned_creating.exists()
        _remove_stale_directories()
        assert creating.is_dir()  # still locked
        assert not running.exists()  # its owner let go
    _remove_stale_directories()
    assert list(private_tmp.iterdir()) == []


def test_leftovers_without_a_directory_or_a_lock_go_once_old(private_tmp: Path) -> None:
    young_lock = private_tmp / f"{_PREFIX}young.lock"  # an owner about to create its directory
    old_lock = private_tmp / f"{_PREFIX}old.lock"
    young_lock.touch()
    old_lock.touch()
    age(old_lock, 2 * server._ORPHAN_LOCK_AGE)
    young_dir = make_server_directory(private_tmp, "young-unlocked", lock=False)
    old_dir = make_server_directory(private_tmp, "old-unlocked", lock=False)
    for path in (old_dir / "data", old_dir):
        age(path, 2 * server._UNLOCKED_DIRECTORY_AGE)
    _remove_stale_directories()
    assert sorted(p.name for p in private_tmp.iterdir()) == sorted([young_lock.name, young_dir.name])


def test_the_running_test_server_is_locked_and_survives_a_sweep(pg_url: str) -> None:
    if os.environ.get("MASTRA_MEMORY_TEST_PG_DSN", "").strip():
        pytest.skip("the tests use an existing server, not one of local_server's")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        row = conn.execute("SHOW data_directory").fetchone()
    assert row is not None
    root = Path(str(row[0])).parent
    lock = root.with_name(root.name + ".lock")
    fd = os.open(lock, os.O_RDONLY)
    try:
        assert not server._take_lock(fd)  # held by this process (and its postgres)
    finally:
        os.close(fd)
    _remove_stale_directories()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    assert root.is_dir()
