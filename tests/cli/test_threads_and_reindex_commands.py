"""``mastra-memory threads`` lists threads with message counts; ``reindex`` rebuilds vectors from storage."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Invoke = Callable[..., Any]
WriteJsonl = Callable[[Path, list[Any]], Path]
VectorCounts = Callable[[Path], dict[str, int]]


def message(thread: str, resource: str, text: str, at: str) -> dict[str, Any]:
    return {"thread_id": thread, "resource_id": resource, "role": "user", "content": text, "created_at": at}


@pytest.fixture
def db(invoke: Invoke, tmp_path: Path, write_jsonl: WriteJsonl) -> Path:
    """Two resources: alex with two threads (3 and 1 messages), bob with one (2 messages); no vectors."""
    records = [
        {**message("kyoto", "alex", "Hotel booked", "2025-02-03T19:12:00Z"), "thread_title": "Kyoto trip"},
        message("kyoto", "alex", "Check-in April 3", "2025-02-03T19:13:00Z"),
        message("kyoto", "alex", "Dinner at Kikunoi", "2025-02-12T18:05:00Z"),
        {**message("puppy", "alex", "We named her Miso", "2025-02-16T16:20:00Z"), "thread_title": "Puppy"},
        message("garden", "bob", "Tomatoes in May", "2025-03-01T10:00:00Z"),
        message("garden", "bob", "Basil too", "2025-03-02T10:00:00Z"),
    ]
    path = tmp_path / "memory.db"
    result = invoke("ingest", write_jsonl(tmp_path / "in.jsonl", records), "--db", path, "--no-embed")
    assert result.exit_code == 0, result.output
    return path


def rows(output: str) -> dict[str, list[str]]:
    """Table rows by their first cell."""
    found = {}
    for line in output.splitlines():
        if line.startswith("│"):
            cells = [cell.strip() for cell in line.strip("│ ").split("│")]
            found[cells[0]] = cells
    return found


def test_threads_table_lists_every_thread_with_its_message_count(invoke: Invoke, db: Path) -> None:
    result = invoke("threads", "--db", db)
    assert result.exit_code == 0, result.output
    table = rows(result.stdout)
    assert set(table) == {"kyoto", "puppy", "garden"}
    kyoto = table["kyoto"]
    assert kyoto[:4] == ["kyoto", "alex", "Kyoto trip", "2025-02-03 19:12"]  # created with its first message
    assert kyoto[5] == "3"
    assert table["puppy"][5] == "1"
    assert table["garden"][1:3] == ["bob", ""]
    assert table["garden"][5] == "2"
    header = next(line for line in result.stdout.splitlines() if "Thread" in line and "┃" in line)
    assert [c.strip() for c in header.strip("┃ ").split("┃")] == [
        "Thread",
        "Resource",
        "Title",
        "Created",
        "Updated",
        "Messages",
    ]


def test_threads_of_one_resource_as_json(invoke: Invoke, db: Path) -> None:
    result = invoke("threads", "--db", db, "--resource", "alex", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {t["id"]: t["message_count"] for t in data} == {"kyoto": 3, "puppy": 1}
    assert {t["resource_id"] for t in data} == {"alex"}
    kyoto = next(t for t in data if t["id"] == "kyoto")
    assert kyoto["title"] == "Kyoto trip"
    assert kyoto["created_at"] == "2025-02-03T19:12:00.000Z"


def test_threads_of_an_unknown_resource(invoke: Invoke, db: Path) -> None:
    result = invoke("threads", "--db", db, "--resource", "nobody")
    assert result.exit_code == 0, result.output
    assert "No threads" in result.stdout


def test_threads_needs_an_existing_database(invoke: Invoke, tmp_path: Path) -> None:
    result = invoke("threads", "--db", tmp_path / "none.db")
    assert result.exit_code == 1
    assert "does not exist" in result.stderr
    assert not (tmp_path / "none.db").exists()


def test_reindex_everything_then_recall_finds_it(
    invoke: Invoke, db: Path, vector_counts: VectorCounts
) -> None:
    assert vector_counts(db) == {}
    result = invoke("reindex", "--db", db, "--embedder", "hash/64")
    assert result.exit_code == 0, result.output
    assert "Indexed 6 messages from 3 thread(s) into index memory_messages_64 with hash/64." in result.stdout
    assert vector_counts(db) == {"memory_messages_64": 6}
    recalled = invoke(
        "recall",
        "--db",
        db,
        "--embedder",
        "hash/64",
        "--thread",
        "new",
        "--resource",
        "alex",
        "--json",
        "We named her Miso",
    )
    data = json.loads(recalled.stdout)
    assert data["hits"][0]["score"] == pytest.approx(1.0)
    best = data["hits"][0]["message_id"]
    assert next(m["text"] for m in data["messages"] if m["id"] == best) == "We named her Miso"
    assert {m["thread_id"] for m in data["messages"]} <= {"kyoto", "puppy"}  # never bob's threads


def test_reindex_one_resource_or_one_thread(invoke: Invoke, db: Path, vector_counts: VectorCounts) -> None:
    result = invoke("reindex", "--db", db, "--embedder", "hash/32", "--resource", "bob")
    assert result.exit_code == 0, result.output
    assert "Indexed 2 messages from 1 thread(s)" in result.stdout
    assert vector_counts(db) == {"memory_messages_32": 2}
    result = invoke("reindex", "--db", db, "--embedder", "hash/32", "--thread", "kyoto")
    assert result.exit_code == 0, result.output
    assert "Indexed 3 messages from 1 thread(s)" in result.stdout
    assert vector_counts(db) == {"memory_messages_32": 5}
    again = invoke("reindex", "--db", db, "--embedder", "hash/32", "--thread", "kyoto")
    assert again.exit_code == 0, again.output
    assert vector_counts(db) == {"memory_messages_32": 5}  # vector ids are message ids: no duplicates


def test_reindex_with_the_offline_default_embedder(
    invoke: Invoke, db: Path, vector_counts: VectorCounts
) -> None:
    result = invoke("reindex", "--db", db, "--resource", "alex")
    assert result.exit_code == 0, result.output
    assert "into index memory_messages_256 with local/wordllama" in result.stdout
    assert vector_counts(db) == {"memory_messages_256": 4}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--thread", "nope"], "thread 'nope' does not exist"),
        (["--thread", "kyoto", "--resource", "alex"], "use --thread or --resource, not both"),
        (["--embedder", "fastembed/bge-small"], 'pip install "mastra-memory[fastembed]"'),
    ],
    ids=["unknown-thread", "both-filters", "missing-extra"],
)
def test_reindex_errors_are_one_line(
    invoke: Invoke, db: Path, vector_counts: VectorCounts, args: list[str], message: str
) -> None:
    result = invoke("reindex", "--db", db, *args)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    error = result.stderr.strip()
    assert error.startswith("error: ")
    assert len(error.splitlines()) == 1
    assert message in error
    assert vector_counts(db) == {}


def test_threads_text_layout_fits_80_columns(invoke: Invoke, db: Path) -> None:
    result = invoke("threads", "--db", db, "--layout", "text")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"Threads in {db}:"
    assert "  kyoto  Kyoto trip" in lines
    kyoto = lines[lines.index("  kyoto  Kyoto trip") + 1]
    assert kyoto.startswith("    resource alex · 3 message(s) · 2025-02-03 19:12 to ")  # updated: at ingest
    assert max(len(line) for line in lines if not line.startswith("Threads in")) <= 80
    assert "┃" not in result.stdout


def test_reindex_with_another_embedder_keeps_the_default_embedders_index(
    invoke: Invoke, tmp_path: Path, write_jsonl: WriteJsonl, vector_counts: VectorCounts
) -> None:
    """Issue 23 item 7: ingest (default embedder), then reindex with hash/64, emptied memory_messages_256
    and a plain recall failed. A reindex changes no text: the other index stays (docs/spec.md §5.6)."""
    chats = write_jsonl(
        tmp_path / "chats.jsonl",
        [
            {**message("trip", "alex", "Book the Hoshinoya in Kyoto, check-in April 3.", "now"), "id": "c1"},
            {**message("pets", "alex", "We named the puppy Miso.", "now"), "id": "c2"},
        ],
    )
    db = tmp_path / "m.db"
    assert invoke("ingest", chats, "--db", db).exit_code == 0
    assert vector_counts(db) == {"memory_messages_256": 2}
    result = invoke("reindex", "--embedder", "hash/64", "--db", db)
    assert result.exit_code == 0, result.output
    assert vector_counts(db) == {"memory_messages_256": 2, "memory_messages_64": 2}
    recalled = invoke("recall", "--db", db, "--thread", "new", "--resource", "alex", "--json", "puppy name")
    assert recalled.exit_code == 0, recalled.output
    assert json.loads(recalled.stdout)["hits"][0]["message_id"] == "c2"

    # Re-ingesting c1 with new text is an update: its stale default-embedder vector goes as well.
    edited = write_jsonl(
        tmp_path / "edit.jsonl",
        [{**message("trip", "alex", "Check-in moved to April 4.", "now"), "id": "c1"}],
    )
    assert invoke("ingest", edited, "--db", db, "--embedder", "hash/64").exit_code == 0
    assert vector_counts(db) == {"memory_messages_256": 1, "memory_messages_64": 2}
