"""``--json`` on every command: stdout is one JSON document (progress and notes on stderr); ``plugins``
keeps every character of its table when stdout is not a terminal."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from mastra_memory.cli import app

Invoke = Callable[..., Any]
WriteJsonl = Callable[[Path, list[Any]], Path]


def _ingest(invoke: Invoke, tmp_path: Path, write_jsonl: WriteJsonl, *extra: str) -> Any:
    records = [
        {
            "thread_id": "t1",
            "resource_id": "alex",
            "role": "user",
            "content": "We named the puppy Miso",
            "thread_title": "Puppy",
        },
        {"thread_id": "t1", "resource_id": "alex", "role": "system", "content": "not stored"},
    ]
    return invoke("ingest", write_jsonl(tmp_path / "in.jsonl", records), "--db", tmp_path / "m.db", *extra)


def test_ingest_json(invoke: Invoke, tmp_path: Path, write_jsonl: WriteJsonl) -> None:
    result = _ingest(invoke, tmp_path, write_jsonl, "--embedder", "hash/32", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data == {
        "file": str(tmp_path / "in.jsonl"),
        "saved": 1,
        "skipped": 1,
        "threads_touched": ["t1"],
        "threads_created": ["t1"],
        "stored_in": str(tmp_path / "m.db"),
        "embedder": "hash/32",
    }


def test_ingest_no_embed_json_and_reindex_json(
    invoke: Invoke, tmp_path: Path, write_jsonl: WriteJsonl
) -> None:
    result = _ingest(invoke, tmp_path, write_jsonl, "--no-embed", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["embedder"] is None
    result = invoke("reindex", "--db", tmp_path / "m.db", "--embedder", "hash/32", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["indexed"], data["threads"], data["embedder"]) == (1, 1, "hash/32")
    assert data["index"].startswith("memory_messages")


def test_migrate_json_real_and_dry_run(invoke: Invoke, tmp_path: Path, write_jsonl: WriteJsonl) -> None:
    assert _ingest(invoke, tmp_path, write_jsonl, "--no-embed").exit_code == 0
    source = f"sqlite:///{tmp_path / 'm.db'}"
    dry = invoke(
        "migrate", "--from", source, "--to", f"sqlite:///{tmp_path / 'dry.db'}", "--dry-run", "--json"
    )
    assert dry.exit_code == 0, dry.output
    planned = json.loads(dry.stdout)  # the statements are inside the document, not printed line by line
    assert (planned["threads"], planned["messages"], planned["dry_run"]) == (1, 1, True)
    assert isinstance(planned["statements"], list)
    real = invoke("migrate", "--from", source, "--to", f"sqlite:///{tmp_path / 'copy.db'}", "--json")
    assert real.exit_code == 0, real.output
    done = json.loads(real.stdout)
    assert (done["threads"], done["messages"], done["dry_run"], done["statements"]) == (1, 1, False, [])


def test_demo_json(invoke: Invoke, tmp_path: Path) -> None:
    result = invoke("demo", "--db", tmp_path / "demo.db", "--embedder", "hash/64", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)  # "using ..." went to stderr
    assert data["embedder"] == "hash/64"
    assert data["messages_loaded"] > 0
    assert data["answers"]
    first = data["answers"][0]
    assert {"query", "expected_message_id", "hits", "messages"} <= set(first)
    assert f"using {tmp_path / 'demo.db'}" in result.stderr


def test_errors_stay_one_line_on_stderr_with_json(invoke: Invoke, tmp_path: Path) -> None:
    result = invoke("reindex", "--db", tmp_path / "none.db", "--json")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: database")


def test_plugins_table_is_not_cut_at_80_columns() -> None:
    result = CliRunner().invoke(app, ["plugins"], env={"COLUMNS": ""})  # a pipe: no terminal width
    assert result.exit_code == 0, result.output
    listed = json.loads(CliRunner().invoke(app, ["plugins", "--json"]).stdout)
    assert "…" not in result.stdout
    for info in listed:
        assert info["name"] in result.stdout
        assert info["source"] in result.stdout
