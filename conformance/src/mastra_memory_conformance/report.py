"""The conformance report: one JSON file of per-test outcomes and a Markdown matrix rendered from it.

Every test run against a target ends in one outcome:

* ``pass`` -- passed without annotation;
* ``deviation`` -- passed, and the test recorded a deviation the adapter's manifest declares;
* ``unsupported`` -- passed, and the test recorded that the adapter raised ``UnsupportedFilterError`` for
  an operator its manifest does not declare (the correct behaviour for an undeclared operator);
* ``fail`` -- failed or errored (in setup, call or teardown);
* ``xfail`` -- an adapter project overrode the test with ``xfail(reason=...)`` and it failed as declared;
* ``skipped`` -- skipped, with the reason (an unavailable target, a capability the adapter lacks).

The matrix has one row per operator and per domain and one column per target that ran, named by the
target; the per-test detail (one row per domain and item) is a second page. :func:`published_problems`
reads both pages back and says what keeps them from being published (``--publish`` of the command line).

This module holds the outcomes, the report a run builds and writes, merging and the command line; the
pages are rendered in :mod:`.matrix` and read back in :mod:`.published` (their names are re-exported here).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from mastra_memory.filters import ALL_OPERATORS

from .matrix import DETAILS_NAME, DOMAIN_ORDER, MATRIX_NAME, SYMBOLS, render_details, render_matrix
from .published import RenderedPage, published_problems, read_rendered
from .targets import SELF_CONTAINED_KINDS

if TYPE_CHECKING:
    from mastra_memory.capabilities import AdapterCapabilities

    from .targets import ConformanceTarget

__all__ = [
    "DETAILS_NAME",
    "DOMAIN_ORDER",
    "JSON_NAME",
    "MATRIX_NAME",
    "SYMBOLS",
    "Annotation",
    "ConformanceReport",
    "Outcome",
    "OutcomeName",
    "RenderedPage",
    "TargetInfo",
    "TestResult",
    "find_reports",
    "main",
    "merge_reports",
    "published_problems",
    "read_rendered",
    "render_details",
    "render_matrix",
]

OutcomeName = Literal["pass", "deviation", "unsupported", "fail", "xfail", "skipped"]
TargetStatus = Literal["not used", "provisioned", "unavailable"]

JSON_NAME: Final = "conformance.json"
SCHEMA_VERSION: Final = 1


@dataclass(frozen=True)
class Annotation:
    """A note a test made about its outcome: a declared deviation or an unsupported operator."""

    kind: Literal["deviation", "unsupported"]
    code: str
    detail: str = ""


class Outcome:
    """What the ``outcome`` fixture returns: annotations of the current test for the report.

    ``manifest`` returns the target's capability manifest; it is called only when a deviation or an
    unsupported operator is recorded, so tests of storage-only targets can take the fixture too.
    """

    def __init__(self, manifest: Callable[[], AdapterCapabilities]) -> None:
        self._manifest = manifest
        self.annotations: list[Annotation] = []

    def deviation(self, code: str, detail: str = "") -> None:
        """Record that the adapter showed the declared deviation ``code`` here.

        Raises AssertionError when the manifest declares no deviation with that code: a deviation must be
        declared with a reason before the kit accepts it.
        """
        manifest = self._manifest()
        if manifest.deviation(code) is None:
            declared = ", ".join(d.code for d in manifest.deviations) or "none"
            raise AssertionError(
                f"{manifest.name} shows deviation {code!r} ({detail or 'no detail'}), but its capability "
                f"manifest does not declare it (declared: {declared}); declare it with a reason or fix the "
                f"adapter"
            )
        self.annotations.append(Annotation("deviation", code, detail))

    def unsupported(self, operator: str, detail: str = "") -> None:
        """Record that the adapter raised ``UnsupportedFilterError`` for ``operator``, as it must.

        Raises AssertionError when ``operator`` is one the manifest declares as supported.
        """
        manifest = self._manifest()
        if operator in ALL_OPERATORS and operator in manifest.supported_operators:
            raise AssertionError(
                f"{manifest.name} declares {operator} as native or emulated but raised "
                f"UnsupportedFilterError ({detail or 'no detail'})"
            )
        self.annotations.append(Annotation("unsupported", operator, detail))

    @property
    def kind(self) -> Literal["deviation", "unsupported"] | None:
        """``deviation`` if any deviation was recorded, else ``unsupported`` if any, else ``None``."""
        kinds = {a.kind for a in self.annotations}
        if "deviation" in kinds:
            return "deviation"
        return "unsupported" if kinds else None


@dataclass
class TargetInfo:
    """A selected target as the report shows it."""

    name: str
    adapter: str
    kind: str
    description: str
    status: TargetStatus = "not used"
    reason: str = ""
    manifest: dict[str, Any] | None = None

    @property
    def label(self) -> str:
        return f"{self.adapter} ({self.kind})"


@dataclass
class TestResult:
    """The outcome of one test against one target."""

    __test__ = False  # not a pytest test class

    nodeid: str
    test: str
    target: str
    adapter: str
    kind: str
    domain: str
    item: str | None
    outcome: OutcomeName
    reason: str = ""
    annotations: list[Annotation] = field(default_factory=list)


class ConformanceReport:
    """Collects targets and results during a run and writes ``conformance.json`` and the matrix."""

    def __init__(self, kit_version: str = "") -> None:
        self.kit_version = kit_version
        self.targets: dict[str, TargetInfo] = {}
        self.results: list[TestResult] = []

    def add_target(self, target: ConformanceTarget) -> None:
        """Register a selected target (its column appears even when no test could run on it)."""
        if target.name not in self.targets:
            self.targets[target.name] = TargetInfo(
                target.name, target.adapter, target.kind, target.description
            )

    def target_status(self, target: ConformanceTarget, status: TargetStatus, reason: str = "") -> None:
        """Record whether the target could be provisioned (and why not)."""
        self.add_target(target)
        info = self.targets[target.name]
        info.status = status
        info.reason = reason

    def manifest(self, target: ConformanceTarget, capabilities: AdapterCapabilities) -> None:
        """Record the adapter's capability manifest (read by the ``capabilities`` fixture)."""
        self.add_target(target)
        self.targets[target.name].manifest = capabilities.model_dump(mode="json")

    def add(self, result: TestResult) -> None:
        self.results.append(result)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready data (the content of ``conformance.json``)."""
        return {
            "schema": SCHEMA_VERSION,
            "kit_version": self.kit_version,
            "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "targets": [{**asdict(info), "label": info.label} for info in self.targets.values()],
            "results": [asdict(result) for result in self.results],
            "summary": summarise(asdict(r) for r in self.results),
        }

    def write(self, directory: Path) -> tuple[Path, Path]:
        """Write ``conformance.json``, ``conformance-matrix.md`` and ``conformance-details.md`` into
        ``directory``; return the paths of the first two."""
        directory.mkdir(parents=True, exist_ok=True)
        data = self.to_json()
        json_path = directory / JSON_NAME
        json_path.write_text(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n", "utf-8")
        matrix_path = directory / MATRIX_NAME
        matrix_path.write_text(render_matrix(data), "utf-8")
        (directory / DETAILS_NAME).write_text(render_details(data), "utf-8")
        return json_path, matrix_path


def summarise(results: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Counts of each outcome per target."""
    summary: dict[str, dict[str, int]] = {}
    for result in results:
        counts = summary.setdefault(result["target"], {name: 0 for name in SYMBOLS})
        counts[result["outcome"]] += 1
    return summary


# --- merging reports (nox runs one report per adapter) -------------------------------------------


def find_reports(paths: Iterable[Path]) -> list[Path]:
    """``conformance.json`` files: each path is such a file, or a directory holding one or whose
    subdirectories do (one level down), in sorted order."""
    found: list[Path] = []
    for path in paths:
        if path.is_file():
            found.append(path)
        elif (path / JSON_NAME).is_file():
            found.append(path / JSON_NAME)
        elif path.is_dir():
            found += sorted(p for p in path.glob(f"*/{JSON_NAME}") if p.is_file())
    return found


def merge_reports(reports: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """One report of several: a target that appears in more than one keeps the last report's data."""
    targets: dict[str, Mapping[str, Any]] = {}
    results: dict[str, list[Mapping[str, Any]]] = {}
    version = ""
    for report in reports:
        version = version or str(report.get("kit_version", ""))
        for target in report["targets"]:
            targets[target["name"]] = target
            results[target["name"]] = [r for r in report["results"] if r["target"] == target["name"]]
    merged = [r for name in targets for r in results[name]]
    return {
        "schema": SCHEMA_VERSION,
        "kit_version": version,
        "targets": list(targets.values()),
        "results": merged,
        "summary": summarise(merged),
    }


def main(argv: list[str] | None = None) -> int:
    """``python -m mastra_memory_conformance.report REPORT... --output FILE [--publish]``: render one matrix
    (and its per-test detail, ``conformance-details.md`` beside it). With ``--publish`` the pages are
    checked first (:func:`published_problems`) and nothing is written when they would be incomplete."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m mastra_memory_conformance.report",
        description="Merge conformance.json reports and write their Markdown matrix.",
    )
    parser.add_argument("reports", nargs="+", type=Path, help="conformance.json files or directories")
    parser.add_argument("--output", "-o", type=Path, required=True, help="the Markdown file to write")
    parser.add_argument(
        "--publish",
        action="store_true",
        help="write only a publishable matrix: every target of kind "
        f"{', '.join(SELF_CONTAINED_KINDS)} ran, no test failed, the pages are well-formed",
    )
    args = parser.parse_args(argv)
    files = find_reports(args.reports)
    if not files:
        parser.error(f"no {JSON_NAME} found in {', '.join(map(str, args.reports))}")
    merged = merge_reports(json.loads(f.read_text("utf-8")) for f in files)
    details = args.output.with_name(DETAILS_NAME)
    matrix_text = render_matrix(merged, details.name)
    details_text = render_details(merged, args.output.name)
    problems = published_problems(matrix_text, details_text) if args.publish else []
    if problems:
        print(f"not publishing {args.output}: the run is not complete or not clean", file=sys.stderr)
        print("\n".join(f"  - {problem}" for problem in problems), file=sys.stderr)
        return 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(matrix_text, "utf-8")
    details.write_text(details_text, "utf-8")
    print(f"wrote {args.output} and {details.name} from {len(files)} report(s): {', '.join(map(str, files))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
