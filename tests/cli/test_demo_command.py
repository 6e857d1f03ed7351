"""``mastra-memory demo``: offline semantic recall over the bundled sample, answers found in other threads."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.demo.runner import (
    DEMO_RESOURCE,
    QUESTION_THREAD,
    QUESTIONS,
    Answer,
    DemoQuestion,
    DemoReport,
    read_sample,
    run_demo,
)
from mastra_memory.messages import message_text

Invoke = Callable[..., Any]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> DemoReport:
    """One real demo run with the offline wordllama embedder."""
    return asyncio.run(run_demo(tmp_path_factory.mktemp("demo") / "demo.db", "local/wordllama"))


def answer_for(report: DemoReport, question: DemoQuestion) -> Answer:
    return next(a for a in report.answers if a.question == question)


def test_sample_is_one_user_across_topics_over_weeks() -> None:
    sample = read_sample()
    assert 40 <= len(sample.messages) <= 80
    assert {spec.resource_id for spec in sample.threads.values()} == {DEMO_RESOURCE}
    assert len(sample.threads) == 5
    assert {m.role for m in sample.messages} == {"user", "assistant"}
    days = {m.created_at.date() for m in sample.messages}
    assert (max(days) - min(days)).days >= 21
    by_id = {m.id: message_text(m) for m in sample.messages}
    for question in QUESTIONS:  # every expected answer is in the sample, word for word
        assert question.answer in by_id[question.answer_id]


@pytest.mark.parametrize("question", QUESTIONS, ids=[q.answer_id for q in QUESTIONS])
def test_each_question_recalls_the_message_that_answers_it(
    report: DemoReport, question: DemoQuestion
) -> None:
    result = answer_for(report, question).result
    recalled = {m.id: message_text(m) for m in result.messages}
    assert question.answer_id in recalled
    assert question.answer in recalled[question.answer_id]
    best = max(result.hits, key=lambda h: h.score)
    assert best.message_id == question.answer_id  # the top hit is the answer, not just a neighbour
    answer_thread = next(m.thread_id for m in result.messages if m.id == question.answer_id)
    assert answer_thread != QUESTION_THREAD  # found in an earlier conversation


def test_questions_become_the_history_of_the_new_thread(report: DemoReport) -> None:
    for number, answer in enumerate(report.answers):
        history = [message_text(m) for m in answer.result.messages if m.thread_id == QUESTION_THREAD]
        assert history == [q.text for q in QUESTIONS[:number]][-4:]  # last_messages = 4
        assert len(answer.result.hits) == 3  # top_k = 3
    assert report.messages_loaded == len(read_sample().messages)
    assert set(report.threads) == {*read_sample().threads, QUESTION_THREAD}
    assert report.index_name == "memory_messages_256"  # wordllama: 256 dimensions


def test_demo_command_prints_questions_tables_and_summary(invoke: Invoke, tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    result = invoke("demo", "--db", db)
    assert result.exit_code == 0, result.output
    out = result.stdout
    for question in QUESTIONS:
        assert question.text in out
        assert question.answer in out
    assert "Recalled from memory" in out
    assert "Recent history of “Catch-up questions”" in out
    row = next(line for line in out.splitlines() if "We named the puppy Miso" in line and "hit #1" in line)
    assert "Adopting a dog" in row  # the source thread's title
    assert "2025-02-16 16:20" in row  # when it was said
    assert "│ user" in row
    assert "Summary" in out
    assert "memory_messages_256" in out
    assert "local/wordllama" in out
    assert db.is_file()


def test_demo_prints_where_it_stores_when_given_db(invoke: Invoke, tmp_path: Path) -> None:
    db = tmp_path / "elsewhere.db"
    result = invoke("demo", "--db", db, "--embedder", "hash/64")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == f"using {db}"


def test_demo_recreates_its_database_on_every_run(
    invoke: Invoke, tmp_path: Path, db_state: Callable[[Path], dict[str, Any]]
) -> None:
    db = tmp_path / "demo.db"
    for _ in range(2):
        result = invoke("demo", "--db", db, "--embedder", "hash/64")
        assert result.exit_code == 0, result.output
    state = db_state(db)
    questions = [text for thread, _, text in state["messages"].values() if thread == QUESTION_THREAD]
    assert questions == [q.text for q in QUESTIONS]  # asked once, not twice: the file was recreated
    assert len(state["messages"]) == len(read_sample().messages) + len(QUESTIONS)


def test_default_demo_database_is_in_the_user_data_dir_and_printed(
    invoke: Invoke,
    tmp_path: Path,
    data_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    db_state: Callable[[Path], dict[str, Any]],
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    expected = data_home / "mastra-memory" / "demo.db"
    for _ in range(2):  # a rerun replaces the demo database: nothing piles up
        result = invoke("demo", "--embedder", "hash/64")
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines()[0] == f"using {expected}"
    assert list(work.iterdir()) == []  # nothing in the working directory, no ./memory.db
    state = db_state(expected)
    assert len(state["messages"]) == len(read_sample().messages) + len(QUESTIONS)


def test_a_relative_xdg_data_home_is_ignored(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", "relative/dir")  # the XDG spec says: ignore it
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    result = invoke("demo", "--embedder", "hash/64")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "home" / ".local" / "share" / "mastra-memory" / "demo.db").is_file()
    assert not (tmp_path / "relative").exists()


def test_demo_refuses_to_replace_another_database(
    invoke: Invoke,
    tmp_path: Path,
    write_jsonl: Callable[[Path, list[Any]], Path],
    db_state: Callable[[Path], dict[str, Any]],
) -> None:
    db = tmp_path / "memory.db"
    data = write_jsonl(
        tmp_path / "m.jsonl", [{"thread_id": "t", "resource_id": "bob", "role": "user", "content": "mine"}]
    )
    assert invoke("ingest", data, "--db", db, "--no-embed").exit_code == 0
    before = db_state(db)
    result = invoke("demo", "--db", db, "--embedder", "hash/64")
    assert result.exit_code == 1
    assert "is not a demo database" in result.stderr
    assert "Traceback" not in result.output
    assert db_state(db) == before


def test_demo_refuses_a_file_that_is_not_a_database(invoke: Invoke, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes", encoding="utf-8")
    result = invoke("demo", "--db", notes, "--embedder", "hash/64")
    assert result.exit_code == 1
    assert "is not a demo database" in result.stderr
    assert notes.read_text(encoding="utf-8") == "my notes"


def test_demo_refuses_a_memory_database_without_threads(
    invoke: Invoke, tmp_path: Path, db_state: Callable[[Path], dict[str, Any]]
) -> None:
    db = tmp_path / "memory.db"
    assert db_state(db) == {"threads": {}, "messages": {}}  # creates the schema, nothing else
    result = invoke("demo", "--db", db, "--embedder", "hash/64")
    assert result.exit_code == 1
    assert "is not a demo database" in result.stderr
    assert db_state(db) == {"threads": {}, "messages": {}}
