"""``--embedder-option KEY=VALUE`` passes embedder options from the command line (issue 23 item 7).

Before, the CLI had no way to reach an OpenAI-compatible server or to set any embedder option, and the
errors suggested the Python-only ``embedder_options=...``. The embedder here is the stand-in embedding
server of the embedder tests, reached over HTTP on 127.0.0.1 exactly as a real server would be.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ..embedders.embedding_server import EmbeddingServer

Invoke = Callable[..., Any]
WriteJsonl = Callable[[Path, list[Any]], Path]
VectorCounts = Callable[[Path], dict[str, int]]

TEXTS = ("Book the Hoshinoya in Kyoto, check-in April 3.", "We named the puppy Miso.")


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    instance = EmbeddingServer()
    try:
        yield instance
    finally:
        instance.close()


@pytest.fixture
def chats(tmp_path: Path, write_jsonl: WriteJsonl) -> Path:
    records = [
        {"id": f"c{n}", "thread_id": "trip", "resource_id": "alex", "role": "user", "content": text}
        for n, text in enumerate(TEXTS, start=1)
    ]
    return write_jsonl(tmp_path / "chats.jsonl", records)


def test_options_reach_an_openai_compatible_server_on_every_command(
    invoke: Invoke, server: EmbeddingServer, chats: Path, tmp_path: Path, vector_counts: VectorCounts
) -> None:
    db = tmp_path / "m.db"
    options = ["--embedder", "vllm/bge-m3", "--embedder-option", f"base_url={server.url}/v1"]
    options += ["--embedder-option", "dimensions=12"]  # JSON: the number 12, not the text "12"
    ingested = invoke("ingest", chats, "--db", db, *options)
    assert ingested.exit_code == 0, ingested.output
    assert vector_counts(db) == {"memory_messages_12": 2}
    first = server.requests[0]
    assert first.path == "/v1/embeddings"
    assert (first.body["model"], first.body["dimensions"]) == ("bge-m3", 12)

    recalled = invoke(
        "recall", "--db", db, "--thread", "new", "--resource", "alex", "--json", TEXTS[1], *options
    )
    assert recalled.exit_code == 0, recalled.output
    assert json.loads(recalled.stdout)["hits"][0]["message_id"] == "c2"

    reindexed = invoke("reindex", "--db", db, *options)
    assert reindexed.exit_code == 0, reindexed.output
    assert "Indexed 2 messages" in reindexed.stdout


def test_a_missing_index_suggests_the_reindex_with_the_same_options_and_no_key(
    invoke: Invoke, server: EmbeddingServer, chats: Path, tmp_path: Path
) -> None:
    db = tmp_path / "m.db"
    assert invoke("ingest", chats, "--db", db, "--no-embed").exit_code == 0
    options = ["--embedder", "vllm/bge-m3", "--embedder-option", f"base_url={server.url}/v1"]
    options += ["--embedder-option", "api_key=sk-secret"]
    result = invoke("recall", "--db", db, "--thread", "trip", "question", *options)
    assert result.exit_code == 1
    error = " ".join(result.stderr.split())
    suggested = (
        f"--embedder vllm/bge-m3 --embedder-option base_url={server.url}/v1 --embedder-option 'api_key=***'"
    )
    assert f"`mastra-memory reindex --db {db} {suggested}`" in error
    assert "sk-secret" not in result.output
    assert server.requests[0].headers["authorization"] == "Bearer sk-secret"  # the key was used


@pytest.mark.parametrize(
    ("embedder", "option"), [("vllm/bge-m3", "base_url"), ("openai/text-embedding-3-small", "api_key")]
)
def test_embedder_errors_name_the_command_line_option(
    invoke: Invoke, chats: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: str, option: str
) -> None:
    """The errors named only Python's ``embedder_options=...``."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = invoke("ingest", chats, "--db", tmp_path / "m.db", "--embedder", embedder)
    assert result.exit_code == 1
    assert f"--embedder-option {option}=" in " ".join(result.stderr.split())


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        (["base_url"], "--embedder-option takes KEY=VALUE"),
        (["=x"], "--embedder-option takes KEY=VALUE"),
        (["dimensions=8", "dimensions=9"], "--embedder-option dimensions is given twice"),
    ],
)
@pytest.mark.parametrize("command", ["ingest", "recall", "reindex", "demo"])
def test_a_malformed_option_is_refused_before_any_store_is_opened(
    invoke: Invoke, chats: Path, tmp_path: Path, pairs: list[str], message: str, command: str
) -> None:
    db = tmp_path / "m.db"
    given: dict[str, list[Any]] = {"ingest": [chats], "recall": ["--thread", "t", "q"]}
    options = [arg for pair in pairs for arg in ("--embedder-option", pair)]
    result = invoke(command, *given.get(command, []), "--db", db, "--embedder", "hash/8", *options)
    assert result.exit_code == 1
    assert message in result.stderr
    assert not db.exists()
