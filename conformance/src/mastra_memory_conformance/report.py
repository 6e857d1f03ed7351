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
target; the per-test detail (one row per domain and item) is a second page.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from mastra_memory.filters import ALL_OPERATORS

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
    "TargetInfo",
    "TestResult",
    "find_reports",
    "main",
    "merge_reports",
    "render_details",
    "render_matrix",
]

OutcomeName = Literal["pass", "deviation", "unsupported", "fail", "xfail", "skipped"]
TargetStatus = Literal["not used", "provisioned", "unavailable"]

JSON_NAME: Final = "conformance.json"
MATRIX_NAME: Final = "conformance-matrix.md"
DETAILS_NAME: Final = "conformance-details.md"
SCHEMA_VERSION: Final = 1

#: Domains in the order the matrix lists them; domains not named here follow alphabetically.
DOMAIN_ORDER: Final = (
    "vector_basics",
    "filters",
    "differential",
    "scores",
    "roundtrip",
    "errors",
    "hostile",
    "concurrency",
    "storage",
    "memory",
)

SYMBOLS: Final[Mapping[str, str]] = {
    "pass": "✓",
    "deviation": "D",
    "unsupported": "✗",
    "fail": "FAIL",
    "xfail": "X",
    "skipped": "–",
}


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


# --- the Markdown matrix --------------------------------------------------------------------------


def _domain_key(domain: str) -> tuple[int, str]:
    return (DOMAIN_ORDER.index(domain), "") if domain in DOMAIN_ORDER else (len(DOMAIN_ORDER), domain)


def _cell(outcomes: list[Mapping[str, Any]], notes: _Notes, target: Mapping[str, Any]) -> str:
    kinds = {r["outcome"] for r in outcomes}
    if not outcomes:
        return ""
    if "fail" in kinds:
        failed = sum(1 for r in outcomes if r["outcome"] == "fail")
        return f"**FAIL** ({failed}/{len(outcomes)})"
    if "xfail" in kinds:
        reasons = sorted({r["reason"] for r in outcomes if r["outcome"] == "xfail"})
        return "X" + notes.refs(f"`{target['name']}` overrides this test as xfail: {r}" for r in reasons)
    if "deviation" in kinds:
        codes = sorted({a["code"] for r in outcomes for a in r["annotations"] if a["kind"] == "deviation"})
        return "D" + notes.refs(_deviation_note(target, code) for code in codes)
    ran = kinds - {"skipped"}
    if ran == {"pass", "unsupported"}:
        return "✓ / ✗"
    if ran:
        return SYMBOLS[next(iter(ran))]
    return SYMBOLS["skipped"]


def _deviation_note(target: Mapping[str, Any], code: str) -> str:
    manifest = target.get("manifest") or {}
    for deviation in manifest.get("deviations", []):
        if deviation["code"] == code:
            return f"{target['adapter']} `{code}`: {deviation['description']} — {deviation['reason']}"
    return f"{target['adapter']} `{code}`: not declared in the manifest"


class _Notes:
    def __init__(self) -> None:
        self.texts: list[str] = []

    def refs(self, texts: Iterable[str]) -> str:
        """``<sup>1,2</sup>``: the numbers of these notes (numbered in order of first use)."""
        numbers: list[int] = []
        for text in texts:
            if text not in self.texts:
                self.texts.append(text)
            numbers.append(self.texts.index(text) + 1)
        return f"<sup>{','.join(map(str, sorted(set(numbers))))}</sup>" if numbers else ""


def _item_label(item: str | None) -> str:
    if item is None:
        return "all tests"
    return f"`{item}`" if item.startswith("$") else item.replace("|", "\\|")


def _ran(data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The targets with at least one test that ran (not skipped): a target that could not start here, or
    whose every test was skipped, gets no column, only a line in the targets table."""
    ran = {r["target"] for r in data["results"] if r["outcome"] != "skipped"}
    return [t for t in data["targets"] if t["name"] in ran]


def _header(data: Mapping[str, Any], columns: list[Mapping[str, Any]], title: str) -> list[str]:
    results = data["results"]
    idle = len(data["targets"]) - len(columns)
    lines = [
        f"# {title}",
        "",
        f"Generated by mastra-memory-conformance {data.get('kit_version', '')} from {len(results)} test "
        f"results: {len(columns)} target(s) ran"
        + (f", {idle} more registered target(s) could not run here (see Targets)." if idle else "."),
        "",
    ]
    emulated = [t for t in columns if t["kind"] == "emulated"]
    if emulated:
        names = ", ".join(f"`{t['name']}`" for t in emulated)
        lines += [
            f"> **Emulated targets:** {names} ran against a local stand-in for the real service, not the "
            f"service itself. Their columns show what the adapter does against that stand-in.",
            "",
        ]
    return lines


def _notes_section(notes: _Notes) -> list[str]:
    if not notes.texts:
        return []
    return ["Notes:", "", *(f"{n}. {text}" for n, text in enumerate(notes.texts, 1)), ""]


def _operator_of(item: str | None) -> str | None:
    """The operator a filters row is about: ``$not (root)`` and ``$not vs $nor`` count for ``$not``."""
    if item is None or not item.startswith("$"):
        return None
    head = item.split(" ", 1)[0]
    return head if head in ALL_OPERATORS else None


def _operator_cell(
    operator: str, outcomes: list[Mapping[str, Any]], notes: _Notes, target: Mapping[str, Any]
) -> str:
    manifest = target.get("manifest")
    if manifest is None:
        return "–"  # a storage-only target: no vector store, no filters
    failed = [r for r in outcomes if r["outcome"] == "fail"]
    if failed:
        return f"**FAIL** ({len(failed)}/{len(outcomes)})"
    if operator in manifest.get("native_operators", []):
        symbol = "✓"
    elif operator in manifest.get("emulated_operators", []):
        symbol = "E"
    else:
        symbol = "✗"
    codes = sorted({a["code"] for r in outcomes for a in r["annotations"] if a["kind"] == "deviation"})
    xfails = sorted({r["reason"] for r in outcomes if r["outcome"] == "xfail"})
    refs = [_deviation_note(target, code) for code in codes]
    refs += [f"`{target['name']}` overrides a test of {operator} as xfail: {r}" for r in xfails]
    return symbol + notes.refs(refs)


def _domain_cell(outcomes: list[Mapping[str, Any]], notes: _Notes, target: Mapping[str, Any]) -> str:
    ran = [r for r in outcomes if r["outcome"] != "skipped"]
    failed = [r for r in ran if r["outcome"] == "fail"]
    if failed:
        return f"**FAIL** ({len(failed)}/{len(outcomes)})"
    if not ran:
        reasons = sorted({r["reason"] for r in outcomes if r["reason"]})
        return "–" + notes.refs(reasons[:1])
    codes = sorted({a["code"] for r in ran for a in r["annotations"] if a["kind"] == "deviation"})
    cell = f"✓ {len(ran)}"
    if len(ran) < len(outcomes):
        cell += f" ({len(outcomes) - len(ran)} n/a)"
    return cell + notes.refs(_deviation_note(target, code) for code in codes)


def _targets_section(data: Mapping[str, Any]) -> list[str]:
    lines = ["## Targets", "", "| Target | Adapter | Kind | Status | Description |", "|---|---|---|---|---|"]
    for t in data["targets"]:
        status = t["status"] + (f": {t['reason']}" if t["reason"] else "")
        lines.append(f"| `{t['name']}` | {t['adapter']} | {t['kind']} | {status} | {t['description']} |")
    return [*lines, ""]


def _deviations_section(data: Mapping[str, Any]) -> list[str]:
    lines = ["## Declared deviations", ""]
    seen: set[str] = set()
    for t in data["targets"]:
        manifest = t.get("manifest")
        if not manifest or manifest["name"] in seen:
            continue
        seen.add(manifest["name"])
        lines += [
            f"- **{manifest['name']}** `{d['code']}`: {d['description']}. Reason: {d['reason']}"
            for d in manifest.get("deviations", [])
        ]
    if len(lines) == 2:
        lines.append("None of the adapters in this run declares a deviation.")
    return [*lines, ""]


def render_matrix(data: Mapping[str, Any], details: str = DETAILS_NAME) -> str:
    """The compact Markdown matrix of a report (as written by :meth:`ConformanceReport.to_json`).

    One row per filter operator and one per domain, one column per target that ran, named by the
    target; the operator's symbol comes from the manifest (native, emulated, or undeclared and therefore
    rejected) and is overridden by a failing test. The per-test rows are :func:`render_details`, linked as
    ``details``.
    """
    columns = _ran(data)
    results: list[Mapping[str, Any]] = list(data["results"])
    lines = _header(data, columns, "Conformance matrix")
    lines += [
        "Legend: ✓ native, every test passes · E emulated: the adapter answers part of the filter with the "
        "reference evaluator, exactly · D¹ passes with a declared deviation (see the note) · ✗ not declared: "
        "raises `UnsupportedFilterError` before any I/O, as it must · **FAIL** (n/m) n of m tests fail · "
        "X¹ overridden as xfail by the adapter's own tests · – not applicable (the note says why). "
        f"Domain cells count the tests that ran. Per-test detail: [{details}]({details}).",
        "",
    ]
    notes = _Notes()
    names = " | ".join(f"`{t['name']}`" for t in columns)
    by_operator: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    by_domain: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in results:
        operator = _operator_of(r["item"]) if r["domain"] == "filters" else None
        if operator is not None:
            by_operator.setdefault((operator, r["target"]), []).append(r)
        by_domain.setdefault((r["domain"], r["target"]), []).append(r)

    lines += ["## Operators", "", f"| Operator | {names} |", "|---|" + "---|" * len(columns)]
    for operator in sorted(ALL_OPERATORS):
        cells = [
            _operator_cell(operator, by_operator.get((operator, t["name"]), []), notes, t) for t in columns
        ]
        lines.append(f"| `{operator}` | " + " | ".join(cells) + " |")
    lines.append("")

    domains = sorted({r["domain"] for r in results}, key=_domain_key)
    lines += ["## Domains", "", f"| Domain | {names} |", "|---|" + "---|" * len(columns)]
    for domain in domains:
        cells = [_domain_cell(by_domain.get((domain, t["name"]), []), notes, t) for t in columns]
        lines.append(f"| {domain} | " + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join([*lines, *_notes_section(notes), *_targets_section(data), *_deviations_section(data)])


def render_details(data: Mapping[str, Any], matrix: str = MATRIX_NAME) -> str:
    """The per-test Markdown matrix: one row per domain and item, one column per target that ran."""
    columns = _ran(data)
    results: list[Mapping[str, Any]] = list(data["results"])
    rows: dict[tuple[str, str | None], dict[str, list[Mapping[str, Any]]]] = {}
    for result in results:
        rows.setdefault((result["domain"], result["item"]), {}).setdefault(result["target"], []).append(
            result
        )
    ordered = sorted(rows, key=lambda key: (_domain_key(key[0]), list(rows).index(key)))
    lines = _header(data, columns, "Conformance matrix: every test")
    lines += [
        f"The summary is [{matrix}]({matrix}). Legend: ✓ pass · D declared deviation (see the note) · ✗ "
        "unsupported: raises `UnsupportedFilterError`, as the manifest declares · **FAIL** fails the kit · X "
        "overridden as xfail by the adapter's own tests · – skipped",
        "",
    ]
    notes = _Notes()
    lines += [
        "| Domain | Operator / item | " + " | ".join(f"`{t['name']}`" for t in columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for domain, item in ordered:
        cells = [_cell(rows[(domain, item)].get(t["name"], []), notes, t) for t in columns]
        lines.append(f"| {domain} | {_item_label(item)} | " + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join([*lines, *_notes_section(notes)])


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
    """``python -m mastra_memory_conformance.report REPORT... --output FILE``: render one matrix (and its
    per-test detail, ``conformance-details.md`` beside it)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m mastra_memory_conformance.report",
        description="Merge conformance.json reports and write their Markdown matrix.",
    )
    parser.add_argument("reports", nargs="+", type=Path, help="conformance.json files or directories")
    parser.add_argument("--output", "-o", type=Path, required=True, help="the Markdown file to write")
    args = parser.parse_args(argv)
    files = find_reports(args.reports)
    if not files:
        parser.error(f"no {JSON_NAME} found in {', '.join(map(str, args.reports))}")
    merged = merge_reports(json.loads(f.read_text("utf-8")) for f in files)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    details = args.output.with_name(DETAILS_NAME)
    args.output.write_text(render_matrix(merged, details.name), "utf-8")
    details.write_text(render_details(merged, args.output.name), "utf-8")
    print(f"wrote {args.output} and {details.name} from {len(files)} report(s): {', '.join(map(str, files))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
