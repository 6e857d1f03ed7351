"""``mastra-memory recall``: history plus semantic hits as tables, or as JSON; errors are one line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Invoke = Callable[..., Any]
WriteJsonl = Callable[[Path, list[Any]], Path]


@pytest.fixture
def db(invoke: Invoke, tmp_path: Path, sample: Path) -> Path:
    """The demo sample ingested into memory.db with the hash embedder (exact words match exactly)."""
    path = tmp_path / "memory.db"
    result = invoke("ingest", sample, "--db", path, "--embedder", "hash/64")
    assert result.exit_code == 0, result.output
    return path


# hash/<dim> gives equal texts equal vectors, so a question equal to a stored message is its best hit.
EXACT = "We brought her home! We named the puppy Miso, because of her color."


def test_json_output_parses_and_classifies_every_message(invoke: Invoke, db: Path) -> None:
    result = invoke(
        "recall",
        "--db",
        db,
        "--embedder",
        "hash/64",
        "--thread",
        "puppy",
        "--resource",
        "alex",
        "--top-k",
        "2",
        "--last",
        "2",
        "--mode",  # the vector ranking this test classifies (hybrid ranks a context message second)
        "vector",
        "--json",
        EXACT,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["query"] == EXACT
    assert data["index_name"] == "memory_messages_64"
    assert data["hits"][0]["message_id"] == "puppy-05"
    assert data["hits"][0]["score"] == pytest.approx(1.0)
    assert len(data["hits"]) == 2
    kinds = {m["id"]: m["kind"] for m in data["messages"]}
    assert kinds["puppy-05"] == "hit"
    assert kinds["puppy-04"] == "context"  # one message before the hit (message_range 1)
    assert kinds["puppy-06"] == "context"  # and one after
    assert [m["id"] for m in data["messages"] if m["kind"] == "history"] == ["puppy-11", "puppy-12"]
    miso = next(m for m in data["messages"] if m["id"] == "puppy-05")
    assert miso == {
        "id": "puppy-05",
        "thread_id": "puppy",
        "thread_title": "Adopting a dog",
        "role": "user",
        "created_at": "2025-02-16T16:20:00.000Z",
        "kind": "hit",
        "score": pytest.approx(1.0),
        "text": EXACT,
    }
    times = [m["created_at"] for m in data["messages"]]
    assert times == sorted(times)  # the flat list is chronological


def test_resource_scope_searches_other_threads_from_a_new_thread(invoke: Invoke, db: Path) -> None:
    result = invoke(
        "recall",
        "--db",
        db,
        "--embedder",
        "hash/64",
        "--thread",
        "brand-new",
        "--resource",
        "alex",
        "--json",
        EXACT,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["hits"][0]["message_id"] == "puppy-05"
    assert {m["thread_id"] for m in data["messages"]} >= {"puppy"}
    assert not [m for m in data["messages"] if m["kind"] == "history"]


def test_without_resource_an_existing_thread_recalls_for_its_owner(invoke: Invoke, db: Path) -> None:
    result = invoke("recall", "--db", db, "--embedder", "hash/64", "--thread", "book-club", "--json", EXACT)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["resource_id"] == "alex"
    assert data["hits"][0]["message_id"] == "puppy-05"  # resource scope: found in another thread


def test_thread_scope_stays_in_the_thread(invoke: Invoke, db: Path) -> None:
    result = invoke(
        "recall",
        "--db",
        db,
        "--embedder",
        "hash/64",
        "--thread",
        "book-club",
        "--scope",
        "thread",
        "--last",
        "0",
        "--json",
        EXACT,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["hits"]
    assert {m["thread_id"] for m in data["messages"]} == {"book-club"}


def test_table_output_shows_question_history_and_hits(invoke: Invoke, db: Path) -> None:
    result = invoke(
        "recall",
        "--db",
        db,
        "--embedder",
        "hash/64",
        "--thread",
        "puppy",
        "--resource",
        "alex",
        "--last",
        "1",
        EXACT,
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert any(EXACT in line and "Question" not in line for line in lines)
    assert "Recent history of “Adopting a dog”" in result.stdout
    hit = next(line for line in lines if "hit #1" in line)
    cells = [cell.strip() for cell in hit.strip("│ ").split("│")]
    assert cells == ["1.000", "Adopting a dog", "hit #1", "2025-02-16 16:20", "user", EXACT]
    assert "index memory_messages_64" in result.stdout


def test_markup_in_stored_text_is_printed_verbatim(
    invoke: Invoke, tmp_path: Path, write_jsonl: WriteJsonl
) -> None:
    db = tmp_path / "memory.db"
    text = "[bold]not bold[/bold] and [link=x]"
    record = {"thread_id": "t", "resource_id": "r", "role": "user", "content": text, "thread_title": "[red]T"}
    data = write_jsonl(tmp_path / "m[1].jsonl", [record])
    assert invoke("ingest", data, "--db", db, "--embedder", "hash/64").exit_code == 0
    result = invoke("recall", "--db", db, "--embedder", "hash/64", "--thread", "t", "--resource", "r", text)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.stdout.splitlines() if "hit #1" in line)
    assert text in row
    assert "[red]T" in row
    assert "Recent history of “[red]T”" in result.stdout
    threads = invoke("threads", "--db", db)
    assert "[red]T" in threads.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--thread", "puppy", "--resource", "bob"],
            "thread puppy does not belong to the requested resource",
        ),
        (["--thread", "nope", "--scope", "thread"], "thread 'nope' does not exist"),
        (["--thread", "nope"], "thread 'nope' does not exist"),  # resource scope needs --resource
        (
            ["--thread", "puppy", "--embedder", "fastembed/bge-small"],
            'pip install "mastra-memory[fastembed]"',
        ),
    ],
    ids=["ownership", "unknown-thread", "new-thread-without-resource", "missing-extra"],
)
def test_errors_are_one_line_and_exit_1(invoke: Invoke, db: Path, args: list[str], message: str) -> None:
    result = invoke("recall", "--db", db, "--embedder", "hash/64", *args, "question")
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    error = result.stderr.strip()
    assert error.startswith("error: ")
    assert len(error.splitlines()) == 1
    assert message in error


def test_recall_with_an_embedder_that_has_no_index_says_reindex_builds_it(
    invoke: Invoke, db: Path, vector_counts: Callable[[Path], dict[str, int]]
) -> None:
    # The file was indexed with hash/64; asking with hash/32 used to print "no stored message matched".
    args = ["--db", db, "--thread", "puppy", "--resource", "alex", EXACT]
    result = invoke("recall", "--embedder", "hash/32", *args)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    error = result.stderr.strip()
    assert error.startswith("error: no vector index for embedder hash/32 in ")
    assert "memory_messages_32, which was never built" in error
    assert "the store has memory_messages_64, built with another embedder" in error
    assert f"`mastra-memory reindex --db {db} --embedder hash/32`" in error
    assert vector_counts(db) == {"memory_messages_64": 54}  # recall created no empty index
    built = invoke("reindex", "--db", db, "--embedder", "hash/32")  # the command the error names
    assert built.exit_code == 0, built.output
    again = invoke("recall", "--embedder", "hash/32", "--json", *args)
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["hits"][0]["message_id"] == "puppy-05"


@pytest.mark.parametrize("layout", ["table", "text"])
def test_history_folded_into_hits_is_said_not_hidden(invoke: Invoke, db: Path, layout: str) -> None:
    # The question is the thread's last-but-one message: with --last 2 both history messages are in the
    # hit's window (with one older one), shown as hit and context; "no earlier messages" would be false.
    newest = "Crate training is going slowly, she cries at night."
    result = invoke(
        "recall", "--db", db, "--embedder", "hash/64", "--thread", "puppy", "--scope", "thread",
        "--last", "2", "--top-k", "1", "--layout", layout, newest,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    flat = " ".join(result.stdout.split())
    assert "no earlier messages" not in flat
    assert (
        "Recent history of “Adopting a dog”: its 3 message(s) in this recall are hits or context, shown "
        "under “Recalled from memory” and not repeated here" in flat
    )
    assert newest in flat


def test_history_of_a_new_thread_is_empty_and_says_so(invoke: Invoke, db: Path) -> None:
    result = invoke(
        "recall", "--db", db, "--embedder", "hash/64", "--thread", "new", "--resource", "alex", EXACT
    )
    assert result.exit_code == 0, result.output
    assert "Recent history of “new”: no earlier messages" in result.stdout


def test_history_off_is_said(invoke: Invoke, db: Path) -> None:
    result = invoke(
        "recall", "--db", db, "--embedder", "hash/64", "--thread", "book-club", "--last", "0", EXACT
    )
    assert result.exit_code == 0, result.output
    assert "Recent history of “Book club”: not requested (--last 0)" in " ".join(result.stdout.split())


def test_a_missing_database_is_not_created(invoke: Invoke, tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    result = invoke("recall", "--db", db, "--thread", "t", "--resource", "r", "question")
    assert result.exit_code == 1
    assert "does not exist" in result.stderr
    assert "mastra-memory ingest" in result.stderr
    assert not db.exists()


def test_the_caption_describes_the_order_the_table_uses(invoke: Invoke, db: Path) -> None:
    # Rows of one group are in time order, so a caption promising "best score first" was false whenever
    # hit #2 happened before hit #1 in the same window (issue 17: "Q5 prints hit #2 above hit #1").
    result = invoke(
        "recall", "--db", db, "--embedder", "hash/64", "--thread", "puppy", "--resource", "alex", EXACT
    )
    assert result.exit_code == 0, result.output
    flat = " ".join(result.stdout.split())
    assert "best score first" not in flat
    assert "ranked by score (hit #1 best)" in flat
    assert "one group, in time order" in flat
