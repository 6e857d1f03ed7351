"""``mastra-memory ingest``: JSON Lines in, threads created on the fly, all-or-nothing on a bad line."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.stores.sqlite.storage import SQLiteStorage

Invoke = Callable[..., Any]
WriteJsonl = Callable[[Path, list[Any]], Path]
DbState = Callable[[Path], dict[str, Any]]

ALICE = [
    {
        "id": "a1",
        "thread_id": "trip",
        "resource_id": "alice",
        "role": "user",
        "content": "Book the train",
        "created_at": "2025-03-01T10:00:00.000Z",
        "thread_title": "Trip",
    },
    {
        "id": "a2",
        "threadId": "trip",
        "role": "assistant",
        "createdAt": "2025-03-01T10:01:00Z",
        "content": {"format": 2, "parts": [{"type": "text", "text": "Booked the 9:00 train"}]},
    },
    {"thread_id": "garden", "resourceId": "alice", "role": "user", "content": "Plant tomatoes in May"},
]


def test_ingest_creates_threads_and_saves_messages(
    invoke: Invoke,
    tmp_path: Path,
    write_jsonl: WriteJsonl,
    db_state: DbState,
    vector_counts: Callable[[Path], dict[str, int]],
) -> None:
    db = tmp_path / "memory.db"
    result = invoke("ingest", write_jsonl(tmp_path / "in.jsonl", ALICE), "--db", db, "--embedder", "hash/64")
    assert result.exit_code == 0, result.output
    assert "Messages saved │ 3" in result.stdout
    assert "2 (2 new)" in result.stdout
    state = db_state(db)
    assert state["threads"] == {"trip": ("alice", "Trip"), "garden": ("alice", "")}
    assert state["messages"]["a1"] == ("trip", "user", "Book the train")
    assert state["messages"]["a2"] == ("trip", "assistant", "Booked the 9:00 train")
    generated = [mid for mid in state["messages"] if mid not in ("a1", "a2")]
    assert len(generated) == 1  # a missing id becomes a uuid
    assert state["messages"][generated[0]] == ("garden", "user", "Plant tomatoes in May")
    assert vector_counts(db) == {"memory_messages_64": 3}  # embedded on the way in


def test_the_demo_sample_ingests_with_the_documented_format(
    invoke: Invoke, tmp_path: Path, sample: Path, db_state: DbState
) -> None:
    db = tmp_path / "memory.db"
    result = invoke("ingest", sample, "--db", db, "--embedder", "hash/64", "--batch-size", "7")
    assert result.exit_code == 0, result.output
    state = db_state(db)
    assert len(state["messages"]) == sum(1 for line in sample.read_text().splitlines() if line.strip())
    assert state["threads"]["puppy"] == ("alex", "Adopting a dog")


def test_reingesting_a_file_replaces_messages_by_id(
    invoke: Invoke, tmp_path: Path, write_jsonl: WriteJsonl, db_state: DbState
) -> None:
    db = tmp_path / "memory.db"
    data = write_jsonl(tmp_path / "in.jsonl", ALICE[:2])
    for _ in range(2):
        assert invoke("ingest", data, "--db", db, "--no-embed").exit_code == 0
    assert set(db_state(db)["messages"]) == {"a1", "a2"}


def test_no_embed_stores_messages_without_vectors(
    invoke: Invoke, tmp_path: Path, write_jsonl: WriteJsonl, vector_counts: Callable[[Path], dict[str, int]]
) -> None:
    db = tmp_path / "memory.db"
    result = invoke("ingest", write_jsonl(tmp_path / "in.jsonl", ALICE), "--db", db, "--no-embed")
    assert result.exit_code == 0, result.output
    assert "mastra-memory reindex" in result.stdout
    assert vector_counts(db) == {}


BAD_LINES = [
    ("{not json}", "invalid JSON"),
    ("[1, 2]", "expected a JSON object"),
    (json.dumps({"thread_id": "trip", "role": "robot", "content": "x"}), "role"),
    (json.dumps({"thread_id": "trip", "role": "user"}), "missing required field 'content'"),
    (json.dumps({"thread_id": "trip", "role": "user", "content": "x", "text": "y"}), "unknown field 'text'"),
    (
        json.dumps(
            {"thread_id": "trip", "role": "user", "content": "x", "created_at": "2025-03-01T10:00:00"}
        ),
        "timezone",
    ),
    (json.dumps({"thread_id": "new", "role": "user", "content": "x"}), "give resource_id"),
    (
        json.dumps({"thread_id": "trip", "resource_id": "bob", "role": "user", "content": "x"}),
        "a thread belongs to exactly one resource",
    ),
    (
        json.dumps({"id": "a1", "thread_id": "trip", "role": "user", "content": "again"}),
        "already used on line 1",
    ),
]


@pytest.mark.parametrize(("bad", "problem"), BAD_LINES, ids=[p for _, p in BAD_LINES])
@pytest.mark.parametrize("batch_size", ["1", "100"])
def test_a_bad_line_is_named_and_nothing_is_saved(
    invoke: Invoke,
    tmp_path: Path,
    write_jsonl: WriteJsonl,
    db_state: DbState,
    bad: str,
    problem: str,
    batch_size: str,
) -> None:
    db = tmp_path / "memory.db"
    existing = write_jsonl(
        tmp_path / "old.jsonl",
        [{"id": "old", "thread_id": "old", "resource_id": "zoe", "role": "user", "content": "keep me"}],
    )
    assert invoke("ingest", existing, "--db", db, "--embedder", "hash/64").exit_code == 0
    before = db_state(db)
    data = write_jsonl(tmp_path / "in.jsonl", [*ALICE, "", bad])  # line 4 is blank, the bad one is line 5
    result = invoke("ingest", data, "--db", db, "--embedder", "hash/64", "--batch-size", batch_size)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    error = result.stderr.strip()
    assert error.startswith("error: ")
    assert len(error.splitlines()) == 1
    assert "line 5" in error
    assert problem in error
    assert db_state(db) == before  # not even the valid lines before it


def test_an_existing_thread_of_another_resource_is_refused(
    invoke: Invoke, tmp_path: Path, write_jsonl: WriteJsonl, db_state: DbState
) -> None:
    db = tmp_path / "memory.db"
    mine = write_jsonl(
        tmp_path / "mine.jsonl", [{"thread_id": "t", "resource_id": "zoe", "role": "user", "content": "mine"}]
    )
    assert invoke("ingest", mine, "--db", db, "--no-embed").exit_code == 0
    before = db_state(db)
    theirs = write_jsonl(
        tmp_path / "theirs.jsonl",
        [
            {"thread_id": "u", "resource_id": "eve", "role": "user", "content": "ok"},
            {"thread_id": "t", "resource_id": "eve", "role": "user", "content": "not yours"},
        ],
    )
    result = invoke("ingest", theirs, "--db", db, "--no-embed")
    assert result.exit_code == 1
    assert "line 2" in result.stderr
    assert "already exists and belongs to another resource" in result.stderr
    assert db_state(db) == before


def test_lines_for_an_existing_thread_need_no_resource(
    invoke: Invoke, tmp_path: Path, write_jsonl: WriteJsonl, db_state: DbState
) -> None:
    db = tmp_path / "memory.db"
    assert (
        invoke("ingest", write_jsonl(tmp_path / "a.jsonl", ALICE[:1]), "--db", db, "--no-embed").exit_code
        == 0
    )
    more = write_jsonl(
        tmp_path / "b.jsonl", [{"id": "a9", "thread_id": "trip", "role": "user", "content": "hi"}]
    )
    result = invoke("ingest", more, "--db", db, "--no-embed")
    assert result.exit_code == 0, result.output
    assert "1 (0 new)" in result.stdout
    assert db_state(db)["messages"]["a9"] == ("trip", "user", "hi")


def test_invalid_utf8_is_reported_with_its_line(invoke: Invoke, tmp_path: Path) -> None:
    data = tmp_path / "in.jsonl"
    data.write_bytes(json.dumps(ALICE[0]).encode() + b"\n\xff\xfe\n")
    result = invoke("ingest", data, "--db", tmp_path / "memory.db")
    assert result.exit_code == 1
    assert "line 2: not valid UTF-8" in result.stderr
    assert not (tmp_path / "memory.db").exists()


def test_a_missing_file_is_a_usage_error(invoke: Invoke, tmp_path: Path) -> None:
    result = invoke("ingest", tmp_path / "nope.jsonl", "--db", tmp_path / "memory.db")
    assert result.exit_code == 2  # click validates the argument
    assert "does not exist" in result.output


def test_a_byte_order_mark_is_tolerated(invoke: Invoke, tmp_path: Path, db_state: DbState) -> None:
    data = tmp_path / "in.jsonl"
    data.write_bytes(b"\xef\xbb\xbf" + json.dumps(ALICE[0]).encode() + b"\r\n")
    result = invoke("ingest", data, "--db", tmp_path / "memory.db", "--no-embed")
    assert result.exit_code == 0, result.output
    assert db_state(tmp_path / "memory.db")["messages"]["a1"] == ("trip", "user", "Book the train")


def test_every_bad_line_is_reported_and_nothing_is_saved(
    invoke: Invoke, tmp_path: Path, write_jsonl: WriteJsonl, db_state: DbState
) -> None:
    db = tmp_path / "memory.db"
    data = write_jsonl(
        tmp_path / "in.jsonl",
        [
            ALICE[0],
            "{not json}",  # line 2
            ALICE[1],
            json.dumps({"thread_id": "trip", "role": "robot", "content": "x"}),  # line 4
            json.dumps({"thread_id": "trip", "role": "user"}),  # line 5
            ALICE[2],
            json.dumps({"id": "a1", "thread_id": "trip", "role": "user", "content": "again"}),  # line 7
        ],
    )
    result = invoke("ingest", data, "--db", db, "--embedder", "hash/64")
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert lines[0] == f"error: {data}: 4 invalid lines, nothing was saved:"
    assert [line.split(":")[0].strip() for line in lines[1:]] == ["line 2", "line 4", "line 5", "line 7"]
    assert "invalid JSON" in lines[1]
    assert "role" in lines[2]
    assert "missing required field 'content'" in lines[3]
    assert "already used on line 1" in lines[4]
    assert not db.exists()  # checked before the database was opened


def test_every_thread_problem_is_reported_before_writing(
    invoke: Invoke, tmp_path: Path, write_jsonl: WriteJsonl, db_state: DbState
) -> None:
    db = tmp_path / "memory.db"
    mine = write_jsonl(
        tmp_path / "mine.jsonl", [{"thread_id": "t", "resource_id": "zoe", "role": "user", "content": "mine"}]
    )
    assert invoke("ingest", mine, "--db", db, "--no-embed").exit_code == 0
    before = db_state(db)
    theirs = write_jsonl(
        tmp_path / "theirs.jsonl",
        [
            {"thread_id": "u", "resource_id": "eve", "role": "user", "content": "ok"},
            {"thread_id": "t", "resource_id": "eve", "role": "user", "content": "not yours"},
            {"thread_id": "orphan", "role": "user", "content": "whose?"},
        ],
    )
    result = invoke("ingest", theirs, "--db", db, "--no-embed")
    assert result.exit_code == 1
    assert "2 invalid lines, nothing was saved" in result.stderr
    assert "line 2: thread 't' already exists and belongs to another resource" in result.stderr
    assert "line 3: thread 'orphan' does not exist yet; give resource_id" in result.stderr
    assert db_state(db) == before


def test_a_json_array_is_accepted(
    invoke: Invoke, tmp_path: Path, db_state: DbState, vector_counts: Callable[[Path], dict[str, int]]
) -> None:
    db = tmp_path / "memory.db"
    data = tmp_path / "in.json"
    data.write_text(json.dumps(ALICE, indent=2), encoding="utf-8")
    result = invoke("ingest", data, "--db", db, "--embedder", "hash/64")
    assert result.exit_code == 0, result.output
    assert "Messages saved │ 3" in result.stdout
    state = db_state(db)
    assert state["messages"]["a2"] == ("trip", "assistant", "Booked the 9:00 train")
    assert state["threads"]["trip"] == ("alice", "Trip")
    assert vector_counts(db) == {"memory_messages_64": 3}


def test_bad_items_of_a_json_array_are_reported_by_line(invoke: Invoke, tmp_path: Path) -> None:
    data = tmp_path / "in.json"
    items = [ALICE[0], {"thread_id": "trip", "role": "user"}, ALICE[1], [1]]
    data.write_text("[\n" + ",\n".join(json.dumps(i) for i in items) + "\n]\n", encoding="utf-8")
    result = invoke("ingest", data, "--db", tmp_path / "memory.db")
    assert result.exit_code == 1
    assert "2 invalid lines, nothing was saved" in result.stderr
    assert "line 3: missing required field 'content'" in result.stderr
    assert "line 5: expected a JSON object, got list" in result.stderr
    assert not (tmp_path / "memory.db").exists()


def test_a_broken_json_array_names_where(invoke: Invoke, tmp_path: Path) -> None:
    data = tmp_path / "in.json"
    data.write_text('[\n  {"thread_id": "t"},\n  {"thread_id": \n]\n', encoding="utf-8")
    result = invoke("ingest", data, "--db", tmp_path / "memory.db")
    assert result.exit_code == 1
    assert "line 4: invalid JSON array" in result.stderr
    assert not (tmp_path / "memory.db").exists()


def test_created_at_now_is_the_time_of_loading(
    invoke: Invoke, tmp_path: Path, write_jsonl: WriteJsonl
) -> None:
    db = tmp_path / "memory.db"
    records = [
        {
            "id": "n1",
            "thread_id": "t",
            "resource_id": "r",
            "role": "user",
            "content": "one",
            "created_at": "now",
        },
        {"id": "n2", "thread_id": "t", "role": "user", "content": "two", "createdAt": "NOW"},
    ]
    started = datetime.now(UTC)
    result = invoke("ingest", write_jsonl(tmp_path / "in.jsonl", records), "--db", db, "--no-embed")
    assert result.exit_code == 0, result.output

    async def times() -> list[datetime]:
        storage = SQLiteStorage(url=str(db))
        try:
            page = await storage.list_messages("t", per_page=False)
            return [m.created_at for m in sorted(page.messages, key=lambda m: m.id)]
        finally:
            await storage.close()

    first, second = asyncio.run(times())
    assert started <= first <= second <= datetime.now(UTC)  # "now", in line order


def test_ingest_help_documents_now_and_arrays(invoke: Invoke) -> None:
    result = invoke("ingest", "--help")
    assert result.exit_code == 0, result.output
    flat = " ".join(result.stdout.split())
    assert 'or "now"' in flat
    assert "JSON array" in flat
