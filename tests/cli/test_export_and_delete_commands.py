"""``mastra-memory export`` backs up a resource's or a thread's data as JSON Lines; ``delete`` removes it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mastra_memory import sync
from mastra_memory.stores.sqlite.storage import SQLiteStorage

Invoke = Callable[..., Any]
WriteJsonl = Callable[[Path, list[Any]], Path]


def message(thread: str, resource: str, text: str, at: str) -> dict[str, Any]:
    return {"thread_id": thread, "resource_id": resource, "role": "user", "content": text, "created_at": at}


@pytest.fixture
def db(invoke: Invoke, tmp_path: Path, write_jsonl: WriteJsonl) -> Path:
    """alex: kyoto (2 messages), puppy (1), resource working memory; bob: garden (1)."""
    records = [
        {**message("kyoto", "alex", "Hotel booked", "2025-02-03T19:12:00Z"), "thread_title": "Kyoto trip"},
        message("kyoto", "alex", "Check-in April 3", "2025-02-03T19:13:00Z"),
        message("puppy", "alex", "We named her Miso", "2025-02-16T16:20:00Z"),
        message("garden", "bob", "Tomatoes in May", "2025-03-01T10:00:00Z"),
    ]
    path = tmp_path / "memory.db"
    result = invoke(
        "ingest", write_jsonl(tmp_path / "in.jsonl", records), "--db", path, "--embedder", "hash/32"
    )
    assert result.exit_code == 0, result.output
    storage = sync.wrap(SQLiteStorage(str(path)), timeout=30)
    storage.update_resource("alex", working_memory="# alex\n- likes Kyoto")
    storage.close()
    return path


def records(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_export_a_resource_to_stdout(invoke: Invoke, db: Path) -> None:
    result = invoke("export", "--resource", "alex", "--db", db)
    assert result.exit_code == 0, result.output
    lines = records(result.stdout)
    assert [r["type"] for r in lines[:2]] == ["export", "resource"]
    # Each thread is followed by its own messages (threads newest first, as `threads` lists them).
    assert [r["type"] for r in lines[2:]] == ["thread", "message", "thread", "message", "message"]
    header = lines[0]
    assert (header["format"], header["resource_id"], header["thread_id"]) == (1, "alex", None)
    assert lines[1]["resource"]["workingMemory"] == "# alex\n- likes Kyoto"
    threads = {r["thread"]["id"]: r["thread"] for r in lines if r["type"] == "thread"}
    assert set(threads) == {"kyoto", "puppy"}  # never bob's
    assert (threads["kyoto"]["title"], threads["kyoto"]["resourceId"]) == ("Kyoto trip", "alex")
    kyoto = [r["message"] for r in lines if r["type"] == "message" and r["message"]["threadId"] == "kyoto"]
    assert [m["threadId"] for m in kyoto] == ["kyoto", "kyoto"]
    assert kyoto[0]["createdAt"] == "2025-02-03T19:12:00.000Z"  # oldest first, canonical timestamps
    assert "Hotel booked" in json.dumps(kyoto[0]["content"])
    assert "Exported 2 thread(s), 3 message(s)" in result.stderr  # the summary stays off stdout


def test_export_a_thread_to_a_file_with_json_summary(invoke: Invoke, db: Path, tmp_path: Path) -> None:
    out = tmp_path / "backup.jsonl"
    result = invoke("export", "--thread", "kyoto", "--resource", "alex", "-o", out, "--db", db, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary == {
        "resource_id": "alex",
        "thread_id": "kyoto",
        "threads": 1,
        "messages": 2,
        "resource_record": True,
        "output": str(out),
    }
    assert [r["type"] for r in records(out.read_text())] == [
        "export",
        "resource",
        "thread",
        "message",
        "message",
    ]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".backup")] == []  # no temporary left


def test_export_refuses_a_thread_of_another_resource(invoke: Invoke, db: Path) -> None:
    result = invoke("export", "--thread", "garden", "--resource", "alex", "--db", db)
    assert result.exit_code == 1
    assert "does not belong to resource 'alex'" in result.stderr
    assert "bob" not in result.stderr  # the owner is not revealed
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ([], "give --thread ID or --resource ID"),
        (["--thread", "nope"], "thread 'nope' does not exist"),
    ],
)
def test_export_errors(invoke: Invoke, db: Path, args: list[str], problem: str) -> None:
    result = invoke("export", *args, "--db", db)
    assert result.exit_code == 1
    assert problem in result.stderr


def test_export_of_a_missing_database_names_ingest(invoke: Invoke, tmp_path: Path) -> None:
    result = invoke("export", "--resource", "alex", "--db", tmp_path / "none.db")
    assert result.exit_code == 1
    assert "mastra-memory ingest" in result.stderr
    assert not (tmp_path / "none.db").exists()


def _thread_ids(invoke: Invoke, db: Path) -> set[str]:
    result = invoke("threads", "--db", db, "--json")
    assert result.exit_code == 0, result.output
    return {t["id"] for t in json.loads(result.stdout)}


def test_delete_a_thread_with_yes(
    invoke: Invoke, db: Path, vector_counts: Callable[[Path], dict[str, int]]
) -> None:
    before = sum(vector_counts(db).values())
    result = invoke("delete", "--thread", "kyoto", "--yes", "--db", db)
    assert result.exit_code == 0, result.output
    assert "Deleted thread 'kyoto' (2 message(s))." in result.stdout
    assert _thread_ids(invoke, db) == {"puppy", "garden"}
    assert sum(vector_counts(db).values()) == before - 2  # its vectors went with it


def test_delete_asks_and_no_answer_deletes_nothing(
    invoke_as_is: Callable[..., Any], db: Path, invoke: Invoke
) -> None:
    result = invoke_as_is("delete", "--thread", "kyoto", "--db", db)  # no input: end of file
    assert result.exit_code == 1
    assert "nothing deleted" in result.stderr
    assert "kyoto" in _thread_ids(invoke, db)


def test_delete_confirmed_interactively(db: Path, invoke: Invoke) -> None:
    import typer
    from typer.testing import CliRunner

    from mastra_memory.cli.commands import register

    app = typer.Typer()
    register(app)
    result = CliRunner().invoke(app, ["delete", "--thread", "puppy", "--db", str(db)], input="y\n")
    assert result.exit_code == 0, result.output
    assert "Delete thread 'puppy' (1 message(s))" in result.stderr
    assert "puppy" not in _thread_ids(invoke, db)


def test_delete_refuses_a_thread_another_resource_owns(invoke: Invoke, db: Path) -> None:
    result = invoke("delete", "--thread", "garden", "--resource", "alex", "--yes", "--db", db)
    assert result.exit_code == 1
    assert "does not belong to resource 'alex'" in result.stderr
    assert "garden" in _thread_ids(invoke, db)


def test_delete_a_resource_json(invoke: Invoke, db: Path) -> None:
    result = invoke("delete", "--resource", "alex", "--yes", "--db", db, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "thread_id": None,
        "resource_id": "alex",
        "threads_deleted": 2,
        "messages_deleted": 3,
        "working_memory_cleared": True,
    }
    assert _thread_ids(invoke, db) == {"garden"}
    storage = sync.wrap(SQLiteStorage(str(db)), timeout=30)
    assert not storage.get_resource_by_id("alex").working_memory
    storage.close()
    again = invoke("delete", "--resource", "alex", "--yes", "--db", db)
    assert again.exit_code == 0, again.output
    assert "Nothing to delete for resource 'alex'." in again.stdout
