"""Smoke test of the SQLite hot-path micro-benchmark (tests/benchmarks/sqlite_hotpaths.py) at a tiny size.

It keeps the script from rotting and checks what its numbers rest on — every filtered search returned the
same top-3 as bare numpy over the same candidate rows (the script asserts it), and every figure is there —
never how fast anything is.
"""

from __future__ import annotations

from . import sqlite_hotpaths as bench


async def test_the_micro_benchmark_runs_and_agrees_with_numpy() -> None:
    result = await bench.run(rows=400, dim=8, queries=3)
    assert set(result["search"]) == {
        "no filter",
        "resource_id = r0 (all rows)",
        "thread_id = t3 (2 %)",
        "n in [0, 100) (10 % range)",
        "10-clause filter",
    }
    assert result["search"]["n in [0, 100) (10 % range)"]["candidates"] == 100  # n = i % 1000
    for figures in result["search"].values():
        assert figures["store_p50_ms"] > 0
        assert figures["numpy_p50_ms"] > 0
    assert result["save_20"]["msgs_per_s_full"] > 0
    assert result["query_after_upsert"]["after_upsert_p50_ms"] > 0
    assert result["translate_10_clauses_us"]["prepare_filter_node_warm"] > 0
