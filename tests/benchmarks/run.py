"""Benchmarks for ``nox -s bench``: numbers to compare over time, never pass/fail assertions.

Measures, for each vector store available here (today: the embedded SQLite store):

* ingest throughput: vectors per second through ``upsert`` in batches of 1,000;
* filtered top-10 query latency (p50/p95 over repeated queries) with a selective ``thread_id`` filter
  served by a metadata index, a range filter, and no filter.

Usage: ``python tests/benchmarks/run.py [--rows 100000] [--dim 384] [--queries 50]``; results print as a
table and are written to ``reports/bench-<store>.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from mastra_memory.stores.sqlite.store import SQLiteVector
from mastra_memory.vector import MastraVector

BATCH = 1_000
THREADS = 500


def _records(rows: int, dim: int, seed: int) -> tuple[np.ndarray, list[dict[str, Any]], list[str]]:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((rows, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    metadata = [
        {"thread_id": f"t{i % THREADS}", "resource_id": f"r{i % 50}", "n": int(i % 1000), "role": "user"}
        for i in range(rows)
    ]
    return vectors, metadata, [f"m{i}" for i in range(rows)]


async def _bench_store(name: str, store: MastraVector, rows: int, dim: int, queries: int) -> dict[str, Any]:
    vectors, metadata, ids = _records(rows, dim, seed=7)
    await store.create_index("bench", dim, metadata_indexes=["thread_id", "resource_id"])
    started = time.perf_counter()
    for start in range(0, rows, BATCH):
        end = start + BATCH
        await store.upsert("bench", vectors[start:end], metadata[start:end], ids[start:end])
    ingest_s = time.perf_counter() - started

    rng = np.random.default_rng(11)
    probes = rng.standard_normal((queries, dim)).astype(np.float32)
    cases: dict[str, dict[str, Any] | None] = {
        "no filter": None,
        "thread_id = t42 (indexed)": {"thread_id": "t42"},
        "n in [100, 200) (range)": {"n": {"$gte": 100, "$lt": 200}},
    }
    latency: dict[str, dict[str, float]] = {}
    for label, flt in cases.items():
        await store.query("bench", probes[0], top_k=10, filter=flt)  # warm the snapshot cache
        samples = []
        for q in probes:
            t0 = time.perf_counter()
            hits = await store.query("bench", q, top_k=10, filter=flt)
            samples.append((time.perf_counter() - t0) * 1000)
            assert len(hits) == 10  # a benchmark that returns nothing measures nothing
        samples.sort()
        latency[label] = {
            "p50_ms": statistics.median(samples),
            "p95_ms": samples[max(0, int(len(samples) * 0.95) - 1)],
        }
    return {
        "store": name,
        "rows": rows,
        "dim": dim,
        "ingest_vectors_per_s": rows / ingest_s,
        "ingest_seconds": ingest_s,
        "query_latency": latency,
    }


def _print(result: dict[str, Any]) -> None:
    print(f"\n{result['store']}: {result['rows']:,} vectors x {result['dim']} dims")
    print(f"  ingest: {result['ingest_vectors_per_s']:,.0f} vectors/s ({result['ingest_seconds']:.1f} s)")
    for label, stats in result["query_latency"].items():
        print(f"  top-10 {label:<28} p50 {stats['p50_ms']:7.2f} ms   p95 {stats['p95_ms']:7.2f} ms")


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--out", type=Path, default=Path("reports"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteVector(url=str(Path(tmp) / "bench.db"))
        try:
            result = await _bench_store("sqlite", store, args.rows, args.dim, args.queries)
        finally:
            await store.close()
    _print(result)
    (args.out / f"bench-{result['store']}.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
