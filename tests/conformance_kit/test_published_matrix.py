"""What may be published as the support matrix (issue 23): a run on a machine without Go published a matrix
without its ``mongodb-ferretdb`` column. :func:`published_problems` reads the rendered pages back and names
what keeps them from being published; ``--publish`` (``nox -s matrix``) writes nothing then."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mastra_memory.filters import ALL_OPERATORS
from mastra_memory.stores.sqlite.capabilities import SQLITE_CAPABILITIES
from mastra_memory_conformance.report import (
    DOMAIN_ORDER,
    main,
    published_problems,
    read_rendered,
    render_details,
    render_matrix,
)

GO_MISSING = "`go` is not on PATH; it is needed to build FerretDB v1.24.2 from the Go module proxy"


def _target(
    name: str, adapter: str, kind: str, status: str = "provisioned", reason: str = ""
) -> dict[str, Any]:
    manifest = {**SQLITE_CAPABILITIES.model_dump(mode="json"), "name": adapter}
    return {
        "name": name,
        "adapter": adapter,
        "kind": kind,
        "label": f"{adapter} ({kind})",
        "description": f"{adapter} as a {kind} target",
        "status": status,
        "reason": reason,
        "manifest": manifest if status == "provisioned" else None,
    }


def _results(target: dict[str, Any], outcome: str = "pass") -> list[dict[str, Any]]:
    """One result per domain of the kit, one per operator in ``filters``; a declared deviation in
    ``roundtrip``; ``outcome`` for the rest (``skipped`` for a target that could not start)."""
    rows = [("filters", op) for op in sorted(ALL_OPERATORS)] + [(d, None) for d in DOMAIN_ORDER]
    results = []
    for domain, item in rows:
        deviation = domain == "roundtrip" and outcome == "pass"
        results.append(
            {
                "nodeid": f"test_{domain}[{target['name']}-{item}]",
                "test": f"test_{domain}",
                "target": target["name"],
                "adapter": target["adapter"],
                "kind": target["kind"],
                "domain": domain,
                "item": item,
                "outcome": "deviation" if deviation else outcome,
                "reason": target["reason"] if outcome == "skipped" else "",
                "annotations": [{"kind": "deviation", "code": "int64-range", "detail": ""}]
                if deviation
                else [],
            }
        )
    return results


def _run(*, ferretdb: str = "", failing: bool = False) -> dict[str, Any]:
    """A run over an embedded, a native, an emulated and a url target; ``ferretdb`` is why the native one
    could not start (empty: it ran), ``failing`` makes one sqlite test fail."""
    native = _target(
        "mongodb-ferretdb", "mongodb", "native", *(("unavailable", ferretdb) if ferretdb else ())
    )
    url = _target("mongodb-url", "mongodb", "url", "unavailable", "MASTRA_MEMORY_TEST_MONGODB_URI is not set")
    targets = [
        native,
        url,
        _target("pinecone-emulated", "pinecone", "emulated"),
        _target("sqlite", "sqlite", "embedded"),
    ]
    results = [r for t in targets for r in _results(t, "skipped" if t["status"] != "provisioned" else "pass")]
    if failing:
        broken = next(r for r in results if r["target"] == "sqlite" and r["item"] == "$ne")
        broken["outcome"], broken["reason"] = "fail", "the store returned the wrong ids"
    return {"kit_version": "0.1.0", "targets": targets, "results": results}


def _problems(data: dict[str, Any]) -> list[str]:
    return published_problems(render_matrix(data), render_details(data))


def test_a_complete_clean_run_is_publishable() -> None:
    data = _run()
    assert _problems(data) == []
    page = read_rendered(render_matrix(data))
    assert page.tables["Operators"][0] == [
        "Operator",
        "`mongodb-ferretdb`",
        "`pinecone-emulated`",
        "`sqlite`",
    ]
    assert page.banner == ["pinecone-emulated"]


def test_a_run_whose_native_target_could_not_start_is_not_publishable() -> None:
    problems = _problems(_run(ferretdb=GO_MISSING))
    assert problems == [
        f"target mongodb-ferretdb (native) did not run (unavailable: {GO_MISSING}); it needs no outside "
        "service, so the run is incomplete: run the kit where its toolchain is installed"
    ]
    # The same run may be published by a project that accepts it (the url target never counts).
    assert published_problems(*_pages(_run(ferretdb=GO_MISSING)), must_run=()) == []


def _pages(data: dict[str, Any]) -> tuple[str, str]:
    return render_matrix(data), render_details(data)


def test_a_run_with_a_failing_test_is_not_publishable() -> None:
    assert _problems(_run(failing=True)) == [
        "Operators row `$ne`: sqlite fails (**FAIL** (1/1)); publish a passing run",
        "Domains row filters: sqlite fails (**FAIL** (1/19)); publish a passing run",
        "details row filters | `$ne`: sqlite fails (**FAIL** (1/1)); publish a passing run",
    ]


def test_a_reason_holding_a_build_log_stays_in_its_row_of_the_targets_table() -> None:
    log = "go build failed (exit 1); full log in /tmp/x.log:\nline one | two\nline three"
    data = _run(ferretdb=log)
    page = read_rendered(render_matrix(data))
    [row] = [r for r in page.tables["Targets"][1] if r[0] == "`mongodb-ferretdb`"]
    assert (
        row[3] == "unavailable: go build failed (exit 1); full log in /tmp/x.log: line one \\| two line three"
    )
    assert published_problems(*_pages(data), must_run=()) == []


def test_publish_writes_nothing_for_an_incomplete_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    reports = tmp_path / "reports"
    for name, data in (("incomplete", _run(ferretdb=GO_MISSING)), ("complete", _run())):
        (reports / name).mkdir(parents=True)
        (reports / name / "conformance.json").write_text(json.dumps(data), "utf-8")
    output = tmp_path / "docs" / "conformance-matrix.md"
    assert main([str(reports / "incomplete"), "--output", str(output), "--publish"]) == 1
    assert not output.parent.exists()
    assert "target mongodb-ferretdb (native) did not run" in capsys.readouterr().err
    assert main([str(reports / "complete"), "--output", str(output), "--publish"]) == 0
    assert (
        published_problems(output.read_text("utf-8"), (output.parent / "conformance-details.md").read_text())
        == []
    )
    # Without --publish the matrix of any run is written, as the conformance session does under reports/.
    local = tmp_path / "local" / "conformance-matrix.md"
    assert main([str(reports / "incomplete"), "--output", str(local)]) == 0
    assert local.is_file()
