"""OpenTelemetry spans (the ``otel`` extra): names, attributes, no text unless asked, no-op without it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mastra_memory import tracing
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage

SECRET = "my locker code is 4711"
QUESTION = "what is the locker code"

_EXPORTER = InMemorySpanExporter()


def _install_provider() -> None:
    # The global provider can be set once per process: add our exporter to it the first time.
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
        provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    if not getattr(provider, "_mastra_memory_test", False):
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        provider._mastra_memory_test = True  # type: ignore[attr-defined]


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    _install_provider()
    _EXPORTER.clear()
    tracing.configure(record_text=None)
    yield _EXPORTER
    tracing.configure(record_text=None)
    _EXPORTER.clear()


async def _save_and_recall(tmp_path: Path) -> None:
    # Unique text per test: the process-wide embedding cache would otherwise skip the embed calls.
    tag = tmp_path.name
    memory = Memory(
        storage=SQLiteStorage(str(tmp_path / "m.db")),
        embedder="hash/32",
        # Mode vector: the recall's one vector query is the span under test (auto would go hybrid here).
        options={"lastMessages": 5, "semanticRecall": {"topK": 1, "messageRange": 0, "mode": "vector"}},
    )
    try:
        await memory.create_thread("alice", "t")
        await memory.save_messages(
            [
                {
                    "id": "m1",
                    "threadId": "t",
                    "resourceId": "alice",
                    "role": "user",
                    "content": f"{SECRET} ({tag})",
                    "createdAt": 1,
                },
                {
                    "id": "m2",
                    "threadId": "t",
                    "resourceId": "alice",
                    "role": "user",
                    "content": "hello",
                    "createdAt": 2,
                },
            ]
        )
        await memory.settled(timeout=10)
        result = await memory.recall("t", resource_id="alice", vector_search_string=f"{QUESTION} {tag}")
        assert result.hits
        await memory.delete_messages(["m2"])
    finally:
        await memory.close()


def _by_name(finished: tuple[ReadableSpan, ...]) -> dict[str, list[ReadableSpan]]:
    found: dict[str, list[ReadableSpan]] = {}
    for s in finished:
        found.setdefault(s.name, []).append(s)
    return found


def _all_values(finished: tuple[ReadableSpan, ...]) -> list[Any]:
    values: list[Any] = []
    for s in finished:
        for value in (s.attributes or {}).values():
            values.extend(value if isinstance(value, (list, tuple)) else [value])
    return values


async def test_spans_names_and_attributes(spans: InMemorySpanExporter, tmp_path: Path) -> None:
    await _save_and_recall(tmp_path)
    finished = spans.get_finished_spans()
    names = _by_name(finished)
    assert {
        "mastra_memory.save_messages",
        "mastra_memory.embed",
        "mastra_memory.vector.upsert",
        "mastra_memory.vector.query",
        "mastra_memory.recall",
        "mastra_memory.vector.delete_vectors",
    } <= set(names)

    save = names["mastra_memory.save_messages"][0].attributes or {}
    assert save["mastra_memory.message_count"] == 2
    assert list(save["mastra_memory.thread_ids"]) == ["t"]  # type: ignore[arg-type]
    assert save["mastra_memory.saved_count"] == 2

    embed = names["mastra_memory.embed"][0].attributes or {}
    assert embed["mastra_memory.embedder"] == "hash/32"
    assert embed["mastra_memory.text_count"] >= 1  # type: ignore[operator]

    upsert = names["mastra_memory.vector.upsert"][0].attributes or {}
    assert upsert["mastra_memory.vector.store"] == "SQLiteVector"
    assert str(upsert["mastra_memory.vector.index"]).startswith("memory_messages")
    assert upsert["mastra_memory.vector.count"] >= 1  # type: ignore[operator]

    query = names["mastra_memory.vector.query"][0].attributes or {}
    assert query["mastra_memory.vector.top_k"] == 1
    assert query["mastra_memory.vector.result_count"] == 1

    recall_span = names["mastra_memory.recall"][0]
    recall = recall_span.attributes or {}
    assert (recall["mastra_memory.thread_id"], recall["mastra_memory.resource_id"]) == ("t", "alice")
    assert recall["mastra_memory.recall.semantic"] is True
    assert recall["mastra_memory.recall.hit_count"] == 1
    assert list(recall["mastra_memory.recall.hit_ids"]) == ["m1"]  # type: ignore[arg-type]
    # The query's embed and vector query are children of the recall span.
    children = {
        s.name for s in finished if s.parent is not None and s.parent.span_id == recall_span.context.span_id
    }
    assert {"mastra_memory.embed", "mastra_memory.vector.query"} <= children


async def test_no_text_in_spans_by_default(spans: InMemorySpanExporter, tmp_path: Path) -> None:
    await _save_and_recall(tmp_path)
    finished = spans.get_finished_spans()
    assert finished
    assert all(tracing.TEXT_ATTRIBUTE not in (s.attributes or {}) for s in finished)
    for value in _all_values(finished):
        assert not (isinstance(value, str) and ("4711" in value or "locker" in value)), value


async def test_text_only_when_asked(spans: InMemorySpanExporter, tmp_path: Path) -> None:
    tracing.configure(record_text=True)
    await _save_and_recall(tmp_path)
    names = _by_name(spans.get_finished_spans())
    assert str((names["mastra_memory.recall"][0].attributes or {})[tracing.TEXT_ATTRIBUTE]).startswith(
        QUESTION
    )
    saved = (names["mastra_memory.save_messages"][0].attributes or {})[tracing.TEXT_ATTRIBUTE]
    assert any(SECRET in text for text in saved)  # type: ignore[union-attr]
    assert any(
        SECRET in text
        for s in names["mastra_memory.embed"]
        for text in (s.attributes or {}).get(tracing.TEXT_ATTRIBUTE, ())  # type: ignore[union-attr]
    )


def test_text_setting_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    tracing.configure(record_text=None)
    monkeypatch.setenv("MASTRA_MEMORY_TRACE_TEXT", "1")
    assert tracing.record_text() is True
    monkeypatch.setenv("MASTRA_MEMORY_TRACE_TEXT", "0")
    assert tracing.record_text() is False
    tracing.configure(record_text=True)
    assert tracing.record_text() is True
    tracing.configure(record_text=None)


async def test_a_failing_call_records_the_error(spans: InMemorySpanExporter, tmp_path: Path) -> None:
    memory = Memory(storage=SQLiteStorage(str(tmp_path / "m.db")), embedder="hash/32")
    try:
        with pytest.raises(Exception):  # noqa: B017, PT011 (whatever the error, the span records it)
            await memory.recall("no-such-thread", resource_id="alice")
    finally:
        await memory.close()
    [recall] = _by_name(spans.get_finished_spans())["mastra_memory.recall"]
    assert recall.status.status_code == trace.StatusCode.ERROR


async def test_no_op_without_opentelemetry(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # import fails, as without the extra
    assert tracing.enabled() is False
    await _save_and_recall(tmp_path)  # works the same
    assert spans.get_finished_spans() == ()
