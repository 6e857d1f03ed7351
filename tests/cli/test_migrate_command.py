"""``mastra-memory migrate`` (docs/spec.md §4.7): exit codes and messages of the converter's command.

The conversion itself is tested in tests/stores/test_migrate.py and, against Mastra and PostgreSQL, in
tests/interop/test_migrate_*.py; here, what the command prints and when it fails."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from mastra_memory.plugins import ENV_DISABLE, reset_plugin_manager
from mastra_memory.stores.sqlite.storage import SQLiteStorage

from ..stores.migrate_records import file_bytes, fill, snapshot
from .conftest import Invoke

pytest.importorskip("libsql", reason="the libsql store needs the libsql extra")

from mastra_memory.stores.libsql import LibSQLStorage


@pytest.fixture(autouse=True)
def entry_points(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The libsql store is an entry-point plugin; tests/conftest.py turns entry points off."""
    monkeypatch.setenv(ENV_DISABLE, "0")
    reset_plugin_manager()
    yield
    reset_plugin_manager()


def _filled(path: Path) -> dict[str, object]:
    async def work() -> dict[str, object]:
        storage = SQLiteStorage(str(path))
        try:
            await fill(storage)
            return await snapshot(storage)
        finally:
            await storage.close()

    return asyncio.run(work())


def _read(path: Path) -> dict[str, object]:
    async def work() -> dict[str, object]:
        storage = LibSQLStorage(str(path))
        try:
            return await snapshot(storage)
        finally:
            await storage.close()

    return asyncio.run(work())


def test_migrate_copies_everything_and_says_so(invoke: Invoke, tmp_path: Path) -> None:
    expected = _filled(tmp_path / "old.db")
    result = invoke(
        "migrate", "--from", f"sqlite:///{tmp_path / 'old.db'}", "--to", f"libsql:///{tmp_path / 'm.db'}"
    )
    assert result.exit_code == 0, result.output
    assert "Copied 2 thread(s), 3 message(s), 2 resource(s)" in result.stdout
    assert "mastra-memory reindex" in result.stdout
    assert _read(tmp_path / "m.db") == expected


def test_the_dry_run_prints_sql_and_creates_nothing(invoke: Invoke, tmp_path: Path) -> None:
    _filled(tmp_path / "old.db")
    target = tmp_path / "m.db"
    result = invoke("migrate", "--from", str(tmp_path / "old.db"), "--to", f"libsql:///{target}", "--dry-run")
    assert result.exit_code == 0, result.output
    # One statement per thread and per resource; the messages in one executemany.
    assert result.stdout.count("INSERT INTO mastra_") == 5
    assert "INSERT INTO mastra_messages" in result.stdout
    assert "3 row(s)" in result.stdout
    assert "Dry run: would copy 2 thread(s), 3 message(s), 2 resource(s)" in result.stderr
    assert file_bytes(target) == {}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from", "{dir}/none.db", "--to", "libsql:///{dir}/m.db"], "does not exist"),
        (["--from", "{dir}/old.db", "--to", "{dir}/old.db"], "are the same storage"),
        (["--from", "{dir}/old.db", "--to", "libsql:///{dir}/m.db", "--to-setting", "layout"], "KEY=VALUE"),
        (["--from", "{dir}/old.db", "--to", "nosuch:///x"], "nosuch"),
    ],
    ids=["missing-source", "same", "bad-setting", "unknown-store"],
)
def test_bad_arguments_exit_1_before_writing(
    invoke: Invoke, tmp_path: Path, args: list[str], message: str
) -> None:
    _filled(tmp_path / "old.db")
    result = invoke("migrate", *[a.format(dir=tmp_path) for a in args])
    assert result.exit_code == 1
    assert message in result.stderr
    assert file_bytes(tmp_path / "m.db") == {}
    assert not (tmp_path / "none.db").exists()


def test_the_guard_exits_1_and_leaves_the_destination(invoke: Invoke, tmp_path: Path) -> None:
    _filled(tmp_path / "old.db")
    mastra = tmp_path / "m.db"
    assert invoke("migrate", "--from", str(tmp_path / "old.db"), "--to", f"libsql:///{mastra}").exit_code == 0
    before = file_bytes(mastra)
    # Into a Mastra file as if it were this project's layout: StorageLayoutError, nothing written.
    wrong = invoke("migrate", "--from", str(tmp_path / "old.db"), "--to", f"sqlite:///{mastra}")
    assert wrong.exit_code == 1
    assert "holds Mastra's LibSQL layout" in wrong.stderr
    # Into the right layout a second time: every record is there unchanged (what a run stopped part-way
    # leaves, on a store without transactions), so nothing is written and the command says so.
    again = invoke("migrate", "--from", str(tmp_path / "old.db"), "--to", f"libsql:///{mastra}")
    assert again.exit_code == 0, again.stderr
    assert "7 of them already there from an earlier run" in " ".join(again.stdout.split())
    assert file_bytes(mastra) == before
    # An id holding another record: MigrationConflictError, nothing written.
    other = tmp_path / "other.db"

    async def kept() -> None:
        storage = LibSQLStorage(str(other))
        try:
            await storage.save_thread({"id": "t1", "resource_id": "zed", "title": "kept"})
        finally:
            await storage.close()

    asyncio.run(kept())
    before = file_bytes(other)
    conflict = invoke("migrate", "--from", str(tmp_path / "old.db"), "--to", f"libsql:///{other}")
    assert conflict.exit_code == 1
    assert "already holds thread 't1' with other contents" in " ".join(conflict.stderr.split())
    assert file_bytes(other) == before


def test_the_app_lists_migrate_and_its_help_shows_flags_as_flags() -> None:
    from typer.testing import CliRunner

    from mastra_memory.cli import app

    listed = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert "migrate" in listed.stdout
    result = CliRunner().invoke(app, ["migrate", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "<bool>" not in result.stdout
    assert "--from-setting" in result.stdout
    assert "--to-setting" in result.stdout
    assert "--dry-run" in result.stdout
