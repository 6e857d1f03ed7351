"""The example adapter examples/mastra-memory-dictstore, installed as an outside user would, passes the kit.

A fresh virtual environment gets the core and the conformance kit from this repository (editable) and the
example from its source directory (a normal, non-editable install, so its entry point comes from the built
wheel). The kit then runs in a child process from an empty directory — so this repository's pytest
configuration is not picked up — exactly as the example's README tells its users to run it:
``pytest --pyargs mastra_memory_conformance --target dictstore``. The JSON report must show the declared
deviation occurring and the operators the example does not declare reported as unsupported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mastra_memory_conformance.missing import need_tool

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "mastra-memory-dictstore"
UNDECLARED = {"$regex", "$contains", "$elemMatch", "$size", "$all"}

pytestmark = pytest.mark.slow


#: A bound on each command (an install, or the example's tests with a whole run of the kit, which grows
#: with the kit: about 4 minutes on a loaded two-core machine in December 2026).
COMMAND_TIMEOUT = 840


def run(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        check=False,
        timeout=COMMAND_TIMEOUT,
    )


def clean_env() -> dict[str, str]:
    """The environment without our plugin switches (entry points load) and without the outer venv."""
    drop = ("MASTRA_MEMORY_", "VIRTUAL_ENV", "PYTHONPATH", "PYTEST_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # keep the example's source tree clean
    return env


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    uv = need_tool("uv", "build the fresh virtual environment", env_var="UV")
    location = tmp_path_factory.mktemp("dictstore") / "venv"
    created = run(uv, "venv", "--quiet", "--python", sys.executable, location)
    assert created.returncode == 0, created.stderr
    python = location / "bin" / "python"
    install: list[str | Path] = [uv, "pip", "install", "--quiet", "--python", python]
    install += ["-e", ROOT, "-e", ROOT / "conformance", EXAMPLE]
    done = run(*install, "--offline")
    if done.returncode != 0:  # cold cache: let uv reach the package index
        done = run(*install)
    assert done.returncode == 0, done.stderr
    return location


@pytest.fixture(scope="module")
def kit_run(
    venv: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """One run of the whole kit against the ``dictstore`` target, from an empty directory."""
    workdir = tmp_path_factory.mktemp("kit-run")
    done = run(
        venv / "bin" / "python",
        "-m",
        "pytest",
        "--pyargs",
        "mastra_memory_conformance",
        "--target",
        "dictstore",
        "-p",
        "no:cacheprovider",
        "-q",
        cwd=workdir,
        env=clean_env(),
    )
    return done, workdir / "reports" / "conformance"


def load_report(report_dir: Path) -> dict[str, Any]:
    path = report_dir / "conformance.json"
    assert path.is_file(), f"the kit wrote no report at {path}"
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def dictstore(report: dict[str, Any]) -> dict[str, Any]:
    """The report's entry of the ``dictstore`` target."""
    found: dict[str, Any] = next(t for t in report["targets"] if t["name"] == "dictstore")
    return found


@pytest.mark.timeout(2 * COMMAND_TIMEOUT)  # the first to use the fresh venv: its install (one retry)
def test_the_example_is_installed_from_its_wheel(venv: Path) -> None:
    probe = "import json, mastra_memory_dictstore as m; print(json.dumps(m.__file__))"
    done = run(venv / "bin" / "python", "-c", probe, env=clean_env())
    assert done.returncode == 0, done.stderr
    assert Path(json.loads(done.stdout)).is_relative_to(venv), "the example must not be imported from source"


@pytest.mark.timeout(COMMAND_TIMEOUT + 60)  # its fixture runs the whole kit
def test_the_kit_passes_on_the_example(kit_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    done, report_dir = kit_run
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    report = load_report(report_dir)
    target = dictstore(report)
    assert (target["kind"], target["status"]) == ("embedded", "provisioned")
    results = [r for r in report["results"] if r["target"] == "dictstore"]
    assert results, "the kit recorded no result for the dictstore target"
    assert not [r["nodeid"] for r in results if r["outcome"] == "fail"]
    domains = {r["domain"] for r in results if r["outcome"] in ("pass", "deviation", "unsupported")}
    assert {"filters", "memory"} <= domains, f"domains that ran: {sorted(domains)}"


def test_the_declared_deviation_is_reported_as_occurring(
    kit_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    report = load_report(kit_run[1])
    target = dictstore(report)
    declared = {d["code"] for d in target["manifest"]["deviations"]}
    assert declared == {"exists-empty-list"}
    shown = {
        a["code"]
        for r in report["results"]
        if r["target"] == "dictstore" and r["outcome"] == "deviation"
        for a in r["annotations"]
        if a["kind"] == "deviation"
    }
    assert shown == declared, f"deviations the kit saw occur: {sorted(shown)}"


def test_undeclared_operators_are_reported_as_unsupported(
    kit_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    report = load_report(kit_run[1])
    unsupported = {
        a["code"]
        for r in report["results"]
        if r["target"] == "dictstore" and r["outcome"] == "unsupported"
        for a in r["annotations"]
        if a["kind"] == "unsupported"
    }
    assert unsupported >= UNDECLARED, f"reported unsupported: {sorted(unsupported)}"

    def rows(page: str) -> list[list[str]]:
        text = (kit_run[1] / page).read_text()
        return [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in text.splitlines()]

    summary, details = rows("conformance-matrix.md"), rows("conformance-details.md")
    for operator in UNDECLARED:
        # The summary: one row per operator, one column (the only target that ran).
        cells = [row for row in summary if len(row) == 2 and row[0].strip("`") == operator]
        assert cells == [[f"`{operator}`", "✗"]], f"summary rows of {operator}: {cells}"
        # The per-test page: the operator's rows of the filters domain.
        cells = [
            row for row in details if len(row) >= 3 and row[0] == "filters" and row[1].strip("`") == operator
        ]
        assert cells, f"the per-test page has no filters row for {operator}"
        assert all(row[2] == "✗" for row in cells), f"per-test rows of {operator}: {cells}"


@pytest.mark.timeout(COMMAND_TIMEOUT + 60)
def test_the_examples_own_tests_pass(venv: Path, tmp_path: Path) -> None:
    """The example's tests/ (unit tests plus a run of the kit) pass in the fresh environment."""
    done = run(
        venv / "bin" / "python",
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        f"--rootdir={EXAMPLE}",
        EXAMPLE / "tests",
        cwd=EXAMPLE,
        env=clean_env(),
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
