"""Every memory command takes ``--storage URL`` and ``--vector URL`` besides ``--db PATH`` (issue 17)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.demo.runner import QUESTIONS, read_sample
from mastra_memory.plugins import ENV_DISABLE, create_vector, reset_plugin_manager

Invoke = Callable[..., Any]
DbState = Callable[[Path], dict[str, Any]]
EXACT = "We brought her home! We named the puppy Miso, because of her color."


def vector_counts(url: str) -> dict[str, int]:
    """Indexes and their sizes in the vector store at ``url`` (any plugin), read through the plugin."""

    async def read() -> dict[str, int]:
        vector = create_vector(url)
        try:
            return {name: (await vector.describe_index(name)).count for name in await vector.list_indexes()}
        finally:
            await vector.close()

    return asyncio.run(read())


@pytest.fixture(params=["sqlite", "lancedb"])
def urls(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, str | None]]:
    """(storage URL, vector URL or None): one SQLite file by URL, or SQLite messages + LanceDB vectors."""
    storage = f"sqlite:///{tmp_path / 'store.db'}"
    if request.param == "sqlite":
        yield storage, None
        return
    pytest.importorskip("mastra_memory_lancedb", reason="the lancedb extra is not installed")
    monkeypatch.setenv(ENV_DISABLE, "0")  # tests/conftest.py turns entry points off; lancedb is one
    reset_plugin_manager()
    yield storage, f"lancedb://{tmp_path / 'lance'}"
    reset_plugin_manager()


def test_every_command_works_on_stores_given_by_url(
    invoke: Invoke, sample: Path, urls: tuple[str, str | None], tmp_path: Path, db_state: DbState
) -> None:
    storage, vector = urls
    where = ["--storage", storage, *(["--vector", vector] if vector else [])]
    ingested = invoke("ingest", sample, *where, "--embedder", "hash/64")
    assert ingested.exit_code == 0, ingested.output
    assert storage in ingested.stdout
    assert not (tmp_path / "memory.db").exists()
    assert len(db_state(tmp_path / "store.db")["messages"]) == len(read_sample().messages)
    assert vector_counts(vector or storage) == {"memory_messages_64": len(read_sample().messages)}

    recalled = invoke("recall", *where, "--embedder", "hash/64", "--thread", "puppy", "--json", EXACT)
    assert recalled.exit_code == 0, recalled.output
    assert json.loads(recalled.stdout)["hits"][0]["message_id"] == "puppy-05"

    threads = invoke("threads", "--storage", storage, "--json")
    assert threads.exit_code == 0, threads.output
    assert {t["id"] for t in json.loads(threads.stdout)} == set(read_sample().threads)

    missing = invoke("recall", *where, "--embedder", "hash/32", "--thread", "puppy", EXACT)
    assert missing.exit_code == 1
    assert f"`mastra-memory reindex {' '.join(where)} --embedder hash/32`" in missing.stderr
    reindexed = invoke("reindex", *where, "--embedder", "hash/32", "--thread", "puppy")
    assert reindexed.exit_code == 0, reindexed.output
    assert vector_counts(vector or storage)["memory_messages_32"] == 12
    # A reindex with another embedder leaves hash/64's index whole (docs/spec.md §5.6, issue 23 item 7).
    assert vector_counts(vector or storage)["memory_messages_64"] == len(read_sample().messages)
    again = invoke("recall", *where, "--embedder", "hash/64", "--thread", "puppy", "--json", EXACT)
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["hits"][0]["message_id"] == "puppy-05"


def test_the_demo_runs_on_stores_given_by_url_without_piling_up(
    invoke: Invoke, urls: tuple[str, str | None], tmp_path: Path, db_state: DbState
) -> None:
    storage, vector = urls
    where = ["--storage", storage, *(["--vector", vector] if vector else [])]
    for _ in range(2):
        result = invoke("demo", *where, "--embedder", "hash/64")
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines()[0].startswith(f"using {storage}")
    total = len(read_sample().messages) + len(QUESTIONS)
    assert len(db_state(tmp_path / "store.db")["messages"]) == total
    assert vector_counts(vector or storage) == {"memory_messages_64": total}


def test_the_demo_leaves_a_store_with_other_users_alone(
    invoke: Invoke, tmp_path: Path, db_state: DbState, write_jsonl: Callable[..., Path]
) -> None:
    storage = f"sqlite:///{tmp_path / 'shared.db'}"
    data = write_jsonl(
        tmp_path / "m.jsonl", [{"thread_id": "t", "resource_id": "bob", "role": "user", "content": "x"}]
    )
    assert invoke("ingest", data, "--storage", storage, "--no-embed").exit_code == 0
    before = db_state(tmp_path / "shared.db")
    result = invoke("demo", "--storage", storage, "--embedder", "hash/64")
    assert result.exit_code == 1
    assert "holds threads of other users ('bob')" in result.stderr
    assert db_state(tmp_path / "shared.db") == before


@pytest.mark.parametrize("command", ["ingest", "recall", "threads", "reindex"])
def test_db_and_storage_together_are_refused(
    invoke: Invoke, tmp_path: Path, sample: Path, command: str
) -> None:
    given: dict[str, list[str | Path]] = {"ingest": [sample], "recall": ["--thread", "t", "q"]}
    args = given.get(command, [])
    result = invoke(command, *args, "--db", tmp_path / "a.db", "--storage", f"sqlite:///{tmp_path / 'b.db'}")
    assert result.exit_code == 1
    assert "use --db or --storage, not both" in result.stderr
    assert not (tmp_path / "a.db").exists()
    assert not (tmp_path / "b.db").exists()


def test_an_unknown_store_is_one_line_naming_the_extra(invoke: Invoke, tmp_path: Path, sample: Path) -> None:
    result = invoke("ingest", sample, "--storage", "nosuch://x", "--no-embed")
    assert result.exit_code == 1
    error = result.stderr.strip()
    assert error.startswith("error: no storage named 'nosuch'")
    assert "Traceback" not in result.output


@pytest.mark.parametrize("scheme", ["postgres", "postgresql"])
def test_a_postgresql_url_points_at_pgvector(invoke: Invoke, tmp_path: Path, scheme: str) -> None:
    """Issue 23 item 7: the error said only "no storage named 'postgres'"."""
    result = invoke("threads", "--storage", f"{scheme}://me:secret@db.example/memory")
    assert result.exit_code == 1
    error = " ".join(result.stderr.split())
    assert "give it the scheme pgvector://" in error
    assert 'pip install "mastra-memory[pgvector]"' in error
    assert "secret" not in result.output


def test_a_missing_sqlite_url_file_is_not_created(invoke: Invoke, tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path / 'none.db'}"
    result = invoke("threads", "--storage", storage)
    assert result.exit_code == 1
    assert f"`mastra-memory ingest FILE --storage {storage}`" in result.stderr
    assert not (tmp_path / "none.db").exists()


def test_a_password_in_a_url_is_not_printed(invoke: Invoke, tmp_path: Path) -> None:
    from mastra_memory.cli.common import Stores

    where = Stores(None, "pgvector://user:secret@localhost/db", None)
    assert "secret" not in where.label
    assert "secret" not in where.options()
