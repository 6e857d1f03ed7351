"""What ``mastra-memory demo`` prints: readable at 80 columns, on a pipe and on a wide terminal, with weak
hits marked by the embedder's measured weak level (issue 17: "Output a person can trust")."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from mastra_memory.demo.runner import QUESTIONS

InvokeAsIs = Callable[..., Result]

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TODAY_LINES = 509  # what the demo printed at 80 columns before (a squeezed six-column table)
HIT = re.compile(r"hit #(\d)( weak)? (\d\.\d{3})")  # text layout: "hit #3 weak 0.174"
TABLE_HIT = re.compile(r"│ *(\d\.\d{3}) │[^│]*│ hit #(\d)( weak)? *│")  # table row: score, thread, kind


def plain(output: str) -> list[str]:
    return ANSI.sub("", output).splitlines()


@pytest.fixture(scope="module")
def wordllama_available() -> None:
    pytest.importorskip("wordllama")


@pytest.mark.parametrize("columns", [80, 200])
def test_piped_output_is_compact_text_within_the_width(
    invoke_as_is: InvokeAsIs, tmp_path: Path, columns: int, wordllama_available: None
) -> None:
    # CliRunner's stdout is not a terminal: exactly the `mastra-memory demo | less` case.
    result = invoke_as_is("demo", "--db", tmp_path / "demo.db", env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    lines = plain(result.stdout)
    assert "\x1b[" not in result.stdout  # no colour codes in a pipe
    assert max(len(line) for line in lines) <= columns
    assert len(lines) < TODAY_LINES // 2
    assert not any(box in result.stdout for box in "┃│┏━")  # no table
    for question in QUESTIONS:
        assert question.text in result.stdout
    flat = " ".join(result.stdout.split())
    assert "We brought her home! We named the puppy Miso, because of her color." in flat  # hits in full
    assert re.search(r"hit #1 0\.587 {2}Adopting a dog · 2025-02-16 16:20 · user", result.stdout)


@pytest.mark.parametrize(("columns", "tables"), [(80, False), (99, False), (100, True), (200, True)])
def test_a_terminal_gets_tables_only_when_wide_enough(
    invoke_as_is: InvokeAsIs, tmp_path: Path, columns: int, tables: bool
) -> None:
    env = {"COLUMNS": str(columns), "TTY_COMPATIBLE": "1", "NO_COLOR": "1"}  # rich: stdout is a terminal
    result = invoke_as_is("demo", "--db", tmp_path / "demo.db", "--embedder", "hash/64", env=env)
    assert result.exit_code == 0, result.output
    lines = plain(result.stdout)
    assert max(len(line) for line in lines) <= columns
    assert any(line.startswith("┃ Score") for line in lines) is tables
    if not tables:
        assert len(lines) < TODAY_LINES // 2


def test_layout_can_be_forced(invoke_as_is: InvokeAsIs, tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    table = invoke_as_is(
        "demo", "--db", db, "--embedder", "hash/64", "--layout", "table", env={"COLUMNS": "200"}
    )
    assert table.exit_code == 0, table.output
    assert "┃ Score" in table.stdout
    text = invoke_as_is(
        "demo", "--db", db, "--embedder", "hash/64", "--layout", "text", env={"COLUMNS": "200"}
    )
    assert text.exit_code == 0, text.output
    assert "┃" not in text.stdout


@pytest.mark.parametrize("layout", ["text", "table"])
def test_weak_hits_are_marked_by_the_embedders_measured_level(
    invoke_as_is: InvokeAsIs, tmp_path: Path, layout: str, wordllama_available: None
) -> None:
    # Mode vector: the unrelated thread's 0.174 hit is a vector-ranked one (hybrid recall ranks others).
    result = invoke_as_is(
        "demo", "--db", tmp_path / "demo.db", "--layout", layout, "--mode", "vector", env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    if layout == "text":
        hits = [(m.group(2) is not None, float(m.group(3))) for m in HIT.finditer(out)]
    else:
        hits = [(m.group(3) is not None, float(m.group(1))) for m in TABLE_HIT.finditer(result.stdout)]
    assert len(hits) == 3 * len(QUESTIONS)
    assert all(weak == (score < 0.30) for weak, score in hits)  # marked exactly below the level
    assert any(weak for weak, _ in hits)  # the 0.174 hit from an unrelated thread (Q4) is one of them
    assert (True, 0.174) in hits
    assert "weak: score below 0.30, where local/wordllama matched only unrelated messages" in out


def test_an_embedder_without_a_known_level_marks_nothing(invoke_as_is: InvokeAsIs, tmp_path: Path) -> None:
    result = invoke_as_is(
        "demo", "--db", tmp_path / "demo.db", "--embedder", "hash/64", env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert not re.search(r"hit #\d weak", result.stdout)
    assert "hits are not marked weak: no weak level is known for hash/64" in " ".join(result.stdout.split())
