"""Shared fixtures of the memory command tests: a fresh typer app with the commands, and db readers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner, Result

from mastra_memory.cli.commands import register
from mastra_memory.messages import message_text
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

WIDE = {"COLUMNS": "200"}  # one table row per line, so assertions can read rows

Invoke = Callable[..., Result]


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private user data directory: the demo's default database never lands in the real home."""
    path = tmp_path / "data-home"
    monkeypatch.setenv("XDG_DATA_HOME", str(path))
    return path


@pytest.fixture
def invoke() -> Invoke:
    """Run the memory commands on a fresh app, with tables forced (``--layout table`` unless given).

    CliRunner's output is not a terminal, so ``--layout auto`` would print the compact text layout; the
    tests that read table rows ask for tables the way a person can.
    """
    app = typer.Typer()
    register(app)

    def run(*args: str | Path) -> Result:
        argv = [str(a) for a in args]
        if (
            argv
            and argv[0] in ("demo", "recall", "threads")
            and "--layout" not in argv
            and "--json" not in argv
        ):
            argv[1:1] = ["--layout", "table"]
        return CliRunner().invoke(app, argv, env=WIDE)

    return run


@pytest.fixture
def invoke_as_is() -> Callable[..., Result]:
    """Run the memory commands exactly as given, with ``env`` (e.g. COLUMNS, TTY_COMPATIBLE) on top."""
    app = typer.Typer()
    register(app)

    def run(*args: str | Path, env: dict[str, str] | None = None) -> Result:
        return CliRunner().invoke(app, [str(a) for a in args], env=env or {})

    return run


@pytest.fixture
def sample() -> Path:
    """The bundled demo sample: 54 messages of user alex in five threads (the ingest format)."""
    path = Path(str(resources.files("mastra_memory.demo").joinpath("sample.jsonl")))
    assert path.is_file()
    return path


def _write_jsonl(path: Path, records: list[dict[str, Any] | str]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8"
    )
    return path


@pytest.fixture
def write_jsonl() -> Callable[[Path, list[dict[str, Any] | str]], Path]:
    """Write records (dicts as JSON, strings verbatim) one per line."""
    return _write_jsonl


def _db_state(db: Path) -> dict[str, Any]:

    async def read() -> dict[str, Any]:
        storage = SQLiteStorage(url=str(db))
        try:
            await storage.init()
            threads = (await storage.list_threads(per_page=False)).threads
            messages = {}
            for thread in threads:
                page = await storage.list_messages(thread.id, per_page=False)
                messages.update({m.id: (m.thread_id, m.role, message_text(m)) for m in page.messages})
            return {"threads": {t.id: (t.resource_id, t.title) for t in threads}, "messages": messages}
        finally:
            await storage.close()

    return asyncio.run(read())


@pytest.fixture
def db_state() -> Callable[[Path], dict[str, Any]]:
    """Everything stored: threads (id -> resource, title) and messages (id -> thread, role, text)."""
    return _db_state


def _vector_counts(db: Path) -> dict[str, int]:

    async def read() -> dict[str, int]:
        vector = SQLiteVector(url=str(db))
        try:
            return {name: (await vector.describe_index(name)).count for name in await vector.list_indexes()}
        finally:
            await vector.close()

    return asyncio.run(read())


@pytest.fixture
def vector_counts() -> Callable[[Path], dict[str, int]]:
    """The vector indexes of a file and how many vectors each holds."""
    return _vector_counts
