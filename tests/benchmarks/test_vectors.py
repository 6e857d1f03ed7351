"""Smoke test of the vector benchmark (tests/benchmarks/vectors.py) on the kit's ``sqlite`` target, tiny.

It keeps the script from rotting and checks what its numbers rest on -- the exact search of the store finds
the numpy answer of every case, and every figure is there -- never how fast anything is.
"""

from __future__ import annotations

import json
from pathlib import Path

from . import vectors as bench


def test_every_adapter_with_a_plan_has_default_targets() -> None:
    assert set(bench.PLANS) == set(bench.DEFAULT_TARGETS)


def test_the_benchmark_runs_on_a_kit_target_and_agrees_with_numpy(tmp_path: Path) -> None:
    args = ["--target", "sqlite", "--count", "300", "--dimension", "8", "--queries", "3"]
    assert bench.main([*args, "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "bench-vectors-sqlite.json").read_text())
    assert (report["target"], report["adapter"], report["count"]) == ("sqlite", "sqlite", 300)
    assert report["ingest_vectors_per_s"] > 0
    exact = report["phases"]["exact"]
    assert set(exact) == set(bench.CASES)
    for row in exact.values():
        assert row["queries"] == 3
        assert row["p50_ms"] > 0
        assert (row["recall_at_10"], row["complete"]) == (1.0, True)


def test_alone_measures_one_user_on_the_full_index_and_on_its_own(tmp_path: Path) -> None:
    # Issue 28, "cost follows the user": 20 of the 1,000 records belong to r7 (one user among 50).
    args = ["--target", "sqlite", "--count", "1000", "--dimension", "8", "--queries", "3"]
    assert bench.main([*args, "--alone", "--cases", "scope", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "bench-vectors-sqlite.json").read_text())
    assert set(report["phases"]["exact"]) == {bench.SCOPE_LABEL}  # --cases scope: no other case
    assert report["alone"]["count"] == 20
    comparison = report["scope"]["exact"]
    for side in ("full", "alone"):
        assert comparison[side]["queries"] == 3
        assert (comparison[side]["recall_at_10"], comparison[side]["complete"]) == (1.0, True)
    assert comparison["p50_ratio"] > 0
    assert comparison["p95_ratio"] > 0
