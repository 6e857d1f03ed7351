"""Breaking the SQLite translator on purpose makes the kit fail, and the failure explains itself.

The pytester run registers a second vector store, ``sqlite-broken``: the real SQLite store with one
deliberate bug in its translator — ``$ne`` excludes records that lack the field (the bug docs/spec.md §7 lists
first among the ``$ne``/``$nin`` traps). The kit's filter domain then runs against both ``sqlite`` and
``sqlite-broken``: the real store passes everything, the broken one fails exactly the cases that use
``$ne``, and the failure message shows the filter, the expected ids and the returned ids.
"""

from __future__ import annotations

import json
import re

import pytest

# Imported here, not first inside the pytester run: numpy (which the store uses) cannot be imported twice
# in one process, and pytester forgets the modules each inline run imported.
from mastra_memory.stores.sqlite.capabilities import SQLITE_CAPABILITIES

from .conftest import REGISTER_CONFTEST

BROKEN_PLUGIN = """
from mastra_memory.filters import And, Comparison
from mastra_memory.hookspecs import hookimpl
from mastra_memory.stores.sqlite.translate import SQLiteFilterTranslator
from mastra_memory.stores.sqlite.settings import SQLiteSettings
from mastra_memory.stores.sqlite.store import SQLiteVector
from mastra_memory_conformance.hookspecs import hookimpl as target_hookimpl
from mastra_memory_conformance.sqlite_targets import sqlite_target
from mastra_memory_conformance.targets import ConformanceTarget


class NeExcludesMissing(SQLiteFilterTranslator):
    # The bug: {f: {$ne: v}} becomes "f exists AND f != v", so records without f no longer match.
    def comparison(self, node):
        if node.op != "$ne":
            return super().comparison(node)
        present = super().comparison(Comparison(node.path, "$exists", True))
        return self.logical_and(And((node,)), [present, super().comparison(node)])


class BrokenSQLiteVector(SQLiteVector):
    translator = NeExcludesMissing


@hookimpl
def register_vector_stores(register):
    register("sqlite-broken", lambda settings: BrokenSQLiteVector(url=settings.url), SQLiteSettings)


@target_hookimpl
def register_conformance_targets(register):
    register(
        ConformanceTarget(
            name="sqlite-broken",
            adapter="sqlite-broken",
            kind="embedded",
            provision=sqlite_target().provision,
            description="the SQLite store with $ne broken on purpose",
        )
    )
"""

RUNNER = """
from mastra_memory_conformance.suite.filters import FilterOperatorsSuite


class TestFilterOperators(FilterOperatorsSuite):
    pass
"""


def test_a_broken_translator_fails_the_kit_with_an_explaining_message(kit_pytester: pytest.Pytester) -> None:
    # One pytester run (the whole filter domain on both targets) feeds every assertion below.
    kit_pytester.makepyfile(extra_plugin=BROKEN_PLUGIN, test_filters_broken=RUNNER)
    kit_pytester.makeconftest(REGISTER_CONFTEST)
    out = kit_pytester.path / "report"
    result = kit_pytester.runpytest(
        "-p", "no:socket", "--target", "sqlite,sqlite-broken", "--conformance-report", str(out)
    )
    results = json.loads((out / "conformance.json").read_text("utf-8"))["results"]

    # The run fails, and the failure shows the filter, the expected ids and the returned ids.
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.re_match_lines(
        [
            ".*" + re.escape(line)
            for line in (
                "TestFilterOperators.test_fixed_case[sqlite-broken-D9-8]",
                "AssertionError: filter returned the wrong records on target sqlite",
                "  filter:   {'available': {'$ne': True}}",
                "  expected: ['C', 'G', 'I'] (3)",
                "  returned: ['C', 'G'] (2)",
                "  missing:  ['I']",
                "  extra:    []",
            )
        ]
    )

    # Only the broken store fails, and only where $ne is used.
    real = [r for r in results if r["target"] == "sqlite"]
    broken = [r for r in results if r["target"] == "sqlite-broken"]
    assert len(real) == len(broken) > 50
    assert {r["outcome"] for r in real} == {"pass"}  # no deviation, although the manifest declares some:
    assert SQLITE_CAPABILITIES.deviations  # they concern values the filter cases never write
    failed = [r for r in broken if r["outcome"] == "fail"]
    # `available $ne true` on D9 (product I has no `available`); `price $ne 50` still passes, since I's
    # price is null, not missing. The §2.3 `$ne` examples fail the same way, and so do `reviews.score`
    # with `$ne` and `$not: {$ne}` (#49, #51), missing on A-F.
    assert {r["item"] for r in failed} == {"§8.2 #8", "§8.2 #49", "§8.2 #51", "$ne"}
    assert {r["test"] for r in failed} == {"test_fixed_case", "test_operator_example"}
    assert all("$ne" in str(r["reason"]) for r in failed), [r["reason"] for r in failed]
    passed_items = {r["item"] for r in broken if r["outcome"] == "pass"}
    assert {"§8.2 #1", "§8.2 #12", "§8.2 #33"} <= passed_items  # ranges, $nin and $nor are untouched
