"""Smoke test of issue 28's scale benchmark (tests/benchmarks/scale.py) at a tiny size.

It keeps the script from rotting and checks what its figures rest on: every scoped query returned the
exact top-k (the store searches exactly, so recall@k is 1), both stores were measured, and the first
query of the thousand-users layout read one user's scope, not the whole index. Never how fast anything is.
"""

from __future__ import annotations

import json
from pathlib import Path

from . import scale


def test_the_scale_benchmark_runs_and_is_exact(tmp_path: Path) -> None:
    args = ["--rows", "2000", "--users", "10", "--queries", "5", "--dim", "16"]
    paths = ["--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "out")]
    assert scale.main(["--scenario", "users", *args, *paths]) == 0
    (saved,) = (tmp_path / "out").glob("scale-users-2000-*.json")
    result = json.loads(saved.read_text())
    assert result["machine"]["commit"]
    assert len(result["build"]["ingest_tenths_msg_s"]) == 10
    for store in ("store", "alone"):
        for scope in ("resource", "thread"):
            assert result[store][scope]["recall_at_10"] == 1.0
            assert result[store][scope]["p50_ms"] > 0
    assert result["store"]["cold_loaded_whole_index"] is False
    assert result["resource_ratio_to_alone_p50"] > 0
