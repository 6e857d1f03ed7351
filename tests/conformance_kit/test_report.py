"""The report: conformance.json per test and the Markdown matrix rendered from it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.stores.sqlite.capabilities import SQLITE_CAPABILITIES
from mastra_memory_conformance.report import (
    find_reports,
    main,
    merge_reports,
    render_details,
    render_matrix,
)

from .conftest import REGISTER_CONFTEST

EMULATED_PLUGIN = """
from mastra_memory_conformance.hookspecs import hookimpl
from mastra_memory_conformance.sqlite_targets import sqlite_target
from mastra_memory_conformance.targets import ConformanceTarget


@hookimpl
def register_conformance_targets(register):
    register(
        ConformanceTarget(
            name="sqlite-emulated",
            adapter="sqlite",
            kind="emulated",
            provision=sqlite_target().provision,
            description="the sqlite store, labelled as a stand-in",
        )
    )
"""

SMALL_SUITE = """
import pytest

from mastra_memory_conformance.plugin import set_item


@pytest.mark.asyncio
@pytest.mark.conformance(domain="filters", item="$ne")
async def test_ne(vector_store, index_name, conformance_dimension):
    await vector_store.create_index(index_name, conformance_dimension)
    assert index_name in await vector_store.list_indexes()


@pytest.mark.conformance(domain="filters", item="$eq")
def test_eq_fails(conformance_target):
    assert conformance_target.name == "nothing", "the store returned the wrong ids"


@pytest.mark.conformance(domain="roundtrip", item="big integers")
def test_declared_deviation(outcome):
    outcome.deviation("int64-range", "2**70 rejected at upsert")


@pytest.mark.conformance(domain="roundtrip", item="made-up")
def test_undeclared_deviation(outcome):
    outcome.deviation("made-up", "no such declaration")


@pytest.mark.conformance(domain="filters")
def test_traversal(outcome, request):
    set_item(request, "mid-path lists")
    outcome.unsupported("implicit_array_traversal", "raised UnsupportedFilterError")


@pytest.mark.conformance(domain="scores", item="ivf")
def test_skipped(conformance_target):
    pytest.skip("the adapter has no ivf index")


@pytest.mark.parametrize("operator", ["$gt", "$lt"])
def test_per_operator(request, conformance_target, operator):
    set_item(request, operator)
"""


@pytest.fixture
def report(kit_pytester: pytest.Pytester) -> tuple[pytest.RunResult, dict[str, Any], str]:
    kit_pytester.makepyfile(extra_plugin=EMULATED_PLUGIN, test_small=SMALL_SUITE)
    kit_pytester.makeconftest(REGISTER_CONFTEST)
    out = kit_pytester.path / "out"
    result = kit_pytester.runpytest(
        "-p",
        "no:socket",
        "--target",
        "sqlite",
        "--target",
        "sqlite-emulated",
        "--conformance-report",
        str(out),
    )
    data = json.loads((out / "conformance.json").read_text("utf-8"))
    return result, data, (out / "conformance-details.md").read_text("utf-8")


def _outcomes(data: dict[str, Any], target: str) -> dict[str, tuple[str, str | None, str]]:
    return {
        r["test"] + (f"[{r['item']}]" if r["test"] == "test_per_operator" else ""): (
            r["outcome"],
            r["item"],
            r["domain"],
        )
        for r in data["results"]
        if r["target"] == target
    }


def test_the_json_report_has_one_outcome_per_test_and_target(
    report: tuple[pytest.RunResult, dict[str, Any], str],
) -> None:
    result, data, _ = report
    result.assert_outcomes(passed=10, failed=4, skipped=2)
    assert [(t["name"], t["kind"], t["status"]) for t in data["targets"]] == [
        ("sqlite", "embedded", "provisioned"),
        ("sqlite-emulated", "emulated", "provisioned"),
    ]
    assert data["targets"][0]["manifest"]["name"] == "sqlite"
    for target in ("sqlite", "sqlite-emulated"):
        assert _outcomes(data, target) == {
            "test_ne": ("pass", "$ne", "filters"),
            "test_eq_fails": ("fail", "$eq", "filters"),
            "test_declared_deviation": ("deviation", "big integers", "roundtrip"),
            "test_undeclared_deviation": ("fail", "made-up", "roundtrip"),
            "test_traversal": ("unsupported", "mid-path lists", "filters"),
            "test_skipped": ("skipped", "ivf", "scores"),
            "test_per_operator[$gt]": ("pass", "$gt", "small"),
            "test_per_operator[$lt]": ("pass", "$lt", "small"),
        }
        assert data["summary"][target] == {
            "pass": 3,
            "deviation": 1,
            "unsupported": 1,
            "fail": 2,
            "xfail": 0,
            "skipped": 1,
        }
    by_test = {r["test"]: r for r in data["results"] if r["target"] == "sqlite"}
    assert by_test["test_skipped"]["reason"] == "the adapter has no ivf index"
    assert "the store returned the wrong ids" in by_test["test_eq_fails"]["reason"]
    assert (
        "does not declare it (declared: nul-character-rejected, int64-range)"
        in (by_test["test_undeclared_deviation"]["reason"])
    )
    assert by_test["test_declared_deviation"]["annotations"] == [
        {"kind": "deviation", "code": "int64-range", "detail": "2**70 rejected at upsert"}
    ]


def test_the_details_page_shows_each_outcome_with_notes_and_banner(
    report: tuple[pytest.RunResult, dict[str, Any], str],
) -> None:
    _, _, matrix = report
    int64 = SQLITE_CAPABILITIES.deviation("int64-range")
    assert int64 is not None
    lines = matrix.splitlines()
    assert "| Domain | Operator / item | `sqlite` | `sqlite-emulated` |" in lines
    assert "| filters | `$ne` | ✓ | ✓ |" in lines
    assert "| filters | `$eq` | **FAIL** (1/1) | **FAIL** (1/1) |" in lines
    assert "| filters | mid-path lists | ✗ | ✗ |" in lines
    assert "| roundtrip | big integers | D<sup>1</sup> | D<sup>1</sup> |" in lines
    assert "| scores | ivf | – | – |" in lines
    assert f"1. sqlite `int64-range`: {int64.description} — {int64.reason}" in lines
    assert any(
        line.startswith("> **Emulated targets:** `sqlite-emulated` ran against a local stand-in")
        for line in lines
    )
    # Rows follow the documented domain order: filters, scores, roundtrip.
    assert (
        lines.index("| filters | `$ne` | ✓ | ✓ |")
        < lines.index("| scores | ivf | – | – |")
        < lines.index("| roundtrip | big integers | D<sup>1</sup> | D<sup>1</sup> |")
    )


def test_xfail_overrides_and_mixed_cells_render() -> None:
    def result(test: str, outcome: str, item: str, reason: str = "") -> dict[str, Any]:
        return {
            "nodeid": test,
            "test": test,
            "target": "mem",
            "adapter": "mem",
            "kind": "embedded",
            "domain": "filters",
            "item": item,
            "outcome": outcome,
            "reason": reason,
            "annotations": [],
        }

    data = {
        "kit_version": "0.1.0",
        "targets": [
            {
                "name": "mem",
                "adapter": "mem",
                "kind": "embedded",
                "label": "mem (embedded)",
                "description": "",
                "status": "provisioned",
                "reason": "",
                "manifest": None,
            }
        ],
        "results": [
            result("a", "pass", "$in"),
            result("b", "unsupported", "$in"),
            result("c", "xfail", "$all", "no $all on this backend"),
            result("d", "skipped", "$size", "no lists"),
        ],
    }
    lines = render_details(data).splitlines()
    assert "| filters | `$in` | ✓ / ✗ |" in lines
    assert "| filters | `$all` | X<sup>1</sup> |" in lines
    assert "1. `mem` overrides this test as xfail: no $all on this backend" in lines
    assert "| filters | `$size` | – |" in lines
    assert "None of the adapters in this run declares a deviation." in render_matrix(data).splitlines()


def test_reports_of_several_runs_merge_into_one_matrix(
    report: tuple[pytest.RunResult, dict[str, Any], str], tmp_path: Path
) -> None:
    _, data, _ = report
    first = {
        **data,
        "targets": data["targets"][:1],
        "results": [r for r in data["results"] if r["target"] == "sqlite"],
    }
    second = {
        **data,
        "targets": data["targets"][1:],
        "results": [r for r in data["results"] if r["target"] == "sqlite-emulated"],
    }
    for name, part in (("sqlite", first), ("emulated", second)):
        (tmp_path / "reports" / name).mkdir(parents=True)
        (tmp_path / "reports" / name / "conformance.json").write_text(json.dumps(part), "utf-8")
    files = find_reports([tmp_path / "reports"])
    assert [f.parent.name for f in files] == ["emulated", "sqlite"]
    merged = merge_reports(json.loads(f.read_text("utf-8")) for f in files)
    assert sorted(t["name"] for t in merged["targets"]) == ["sqlite", "sqlite-emulated"]
    assert len(merged["results"]) == len(data["results"])
    output = tmp_path / "docs" / "conformance-matrix.md"
    assert main([str(tmp_path / "reports"), "--output", str(output)]) == 0
    assert (
        "| filters | `$ne` | ✓ | ✓ |"
        in (output.parent / "conformance-details.md").read_text("utf-8").splitlines()
    )
    assert "| `$ne` | ✓ | ✓ |" in output.read_text("utf-8").splitlines()


def test_the_compact_matrix_has_one_row_per_operator_and_domain_and_only_targets_that_ran(
    report: tuple[pytest.RunResult, dict[str, Any], str],
) -> None:
    _, data, _ = report
    idle = {
        "name": "sqlite-remote",
        "adapter": "sqlite",
        "kind": "url",
        "label": "sqlite (url)",
        "description": "",
        "status": "unavailable",
        "reason": "SQLITE_URL is not set",
        "manifest": None,
    }
    skipped = [
        {**r, "target": "sqlite-remote", "outcome": "skipped", "reason": "SQLITE_URL is not set"}
        for r in data["results"]
        if r["target"] == "sqlite"
    ]
    data = {**data, "targets": [*data["targets"], idle], "results": [*data["results"], *skipped]}
    lines = render_matrix(data).splitlines()
    header = "| Operator | `sqlite` | `sqlite-emulated` |"
    assert header in lines, "columns are named by target, and a target that never ran has none"
    assert "1 more registered target(s) could not run here" in lines[2]
    # $ne passed; $eq failed; $gt was never exercised here, so the manifest's declaration decides.
    assert "| `$ne` | ✓ | ✓ |" in lines
    assert "| `$eq` | **FAIL** (1/1) | **FAIL** (1/1) |" in lines
    assert "| `$gt` | ✓ | ✓ |" in lines
    operator_rows = [line for line in lines if line.startswith("| `$")]
    assert len(operator_rows) == len({line.split(" | ")[0] for line in operator_rows}) >= 18
    assert "| roundtrip | **FAIL** (1/2) | **FAIL** (1/2) |" in lines
    assert "| scores | –<sup>1</sup> | –<sup>1</sup> |" in lines
    assert "1. the adapter has no ivf index" in lines
    assert "| `sqlite-remote` | sqlite | url | unavailable: SQLITE_URL is not set |  |" in lines
    int64 = SQLITE_CAPABILITIES.deviation("int64-range")
    assert int64 is not None
    assert f"- **sqlite** `int64-range`: {int64.description}. Reason: {int64.reason}" in lines
    assert "[conformance-details.md](conformance-details.md)" in "\n".join(lines)
