"""The committed support matrix, docs/conformance-matrix.md and docs/conformance-details.md, is one the kit
would publish: both pages from one complete, passing run, every column a target of the targets table that
ran, every operator and domain a row, every cell a symbol of the legend (``published_problems``).

The pages change only through ``nox -s matrix`` (issue 23: a test run used to rewrite them from whatever
ran on that machine). The damaged copies below show the check notices what it is for."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from mastra_memory_conformance.report import published_problems, read_rendered

ROOT = Path(__file__).resolve().parents[2]
MATRIX = ROOT / "docs" / "conformance-matrix.md"
DETAILS = ROOT / "docs" / "conformance-details.md"


def test_the_committed_matrix_is_publishable() -> None:
    assert published_problems(MATRIX.read_text("utf-8"), DETAILS.read_text("utf-8")) == []


def test_every_adapter_of_the_repository_has_a_column() -> None:
    page = read_rendered(MATRIX.read_text("utf-8"))
    columns = {name.strip("`") for name in page.tables["Operators"][0][1:]}
    adapters = {row[1] for row in page.tables["Targets"][1] if row[0].strip("`") in columns}
    assert adapters == {"sqlite", *(p.parent.name for p in ROOT.glob("adapters/*/pyproject.toml"))}


def _first_cell(row: str, new: str) -> Callable[[str], str]:
    """Replace the first target's cell of the row labelled ``row``."""
    return lambda text: re.sub(
        rf"^(\| {re.escape(row)} \| )[^|]*", rf"\g<1>{new} ", text, count=1, flags=re.M
    )


def _replace(old: str, new: str) -> Callable[[str], str]:
    return lambda text: text.replace(old, new, 1)


def _sub(pattern: str, new: str) -> Callable[[str], str]:
    return lambda text: re.sub(pattern, new, text, count=1, flags=re.M)


def _other_run(text: str) -> str:
    return re.sub(r"from (\d+) test results", lambda m: f"from {int(m[1]) + 1} test results", text, count=1)


#: (page, damage, what published_problems must say); each damage changes the committed page.
DAMAGES = {
    "a column whose target did not run": (
        "matrix",
        _sub(
            r"^(\| `mongodb-ferretdb` \| mongodb \| native \| )provisioned",
            r"\1unavailable: `go` is not on PATH",
        ),
        "column mongodb-ferretdb is not a provisioned target of the targets table",
    ),
    "an operator row": ("matrix", _replace("| `$size` |", "| `$length` |"), "the operator rows"),
    "a domain row": ("matrix", _replace("| hostile |", "| hostility |"), "no row for the domain(s) hostile"),
    "a cell": ("matrix", _first_cell("`$and`", "yes"), "not a symbol of the legend"),
    "a failure": ("matrix", _first_cell("`$and`", "**FAIL** (1/4)"), "publish a passing run"),
    "a failure in the details": (
        "details",
        _first_cell("memory | M1", "**FAIL** (1/1)"),
        "publish a passing run",
    ),
    "pages of two runs": ("details", _other_run, "the matrix and the details page come from different runs"),
    "a column of the details": (
        "details",
        _replace("| `sqlite` |", "| `sqlite-url` |"),
        "the columns of the details",
    ),
    "a note's number": ("matrix", _replace("\n2. ", "\n3. "), "notes are numbered in order"),
    "a deviation note": (
        "matrix",
        _sub(r"^(\d+\. \S+ `[^`]+`: )", r"\1not quite "),
        "is not a deviation the matrix declares",
    ),
}


@pytest.mark.parametrize("name", DAMAGES)
def test_a_damaged_matrix_is_refused(name: str) -> None:
    page, damage, problem = DAMAGES[name]
    matrix, details = MATRIX.read_text("utf-8"), DETAILS.read_text("utf-8")
    damaged = (damage(matrix), details) if page == "matrix" else (matrix, damage(details))
    assert damaged != (matrix, details), f"the damage {name!r} no longer applies to the committed page"
    problems = published_problems(*damaged)
    assert any(problem in p for p in problems), problems
