"""Benchmark of the LanceDB store: ingest throughput and filtered top-10 latency.

Usage::

    python adapters/lancedb/bench.py [--n 100000] [--dim 384] [--queries 50] [--json out.json]

It writes ``n`` random unit vectors with Memory-like metadata (``thread_id`` over 100 threads,
``resource_id`` over 10 resources, a numeric ``bucket``) through ``upsert`` in batches of 5,000, trains
the HNSW index, and times ``query(top_k=10)`` unfiltered and with three filters: an indexed key
(``thread_id``), a JSON range on a plain key, and an ``$and`` of both. It reports wall-clock numbers of
this machine; nothing is asserted.
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

from mastra_memory_lancedb.settings import LanceDBSettings
from mastra_memory_lancedb.store import LanceDBVector

BATCH = 5000
FILTERS: dict[str, dict[str, Any] | None] = {
    "none": None,
    "thread_id (indexed, 1%)": {"thread_id": "t7"},
    "bucket < 10 (JSON, 10%)": {"bucket": {"$lt": 10}},
    "resource_id AND bucket (1%)": {"$and": [{"resource_id": "r3"}, {"bucket": {"$lt": 10}}]},
}


async def run(n: int, dim: int, queries: int, directory: Path) -> dict[str, Any]:
    """Ingest, index and query; returns the measurements."""
    store = LanceDBVector(LanceDBSettings(url=str(directory), index_min_rows=max(n + 1, 256)))
    rng = np.random.default_rng(0)
    await store.create_index(
        "bench", dim, index_config={"type": "hnsw"}, metadata_indexes=["thread_id", "resource_id"]
    )
    started = time.perf_counter()
    for start in range(0, n, BATCH):
        count = min(BATCH, n - start)
        matrix = rng.normal(size=(count, dim))
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        ids = [f"m{i:07d}" for i in range(start, start + count)]
        metadata = [
            {"thread_id": f"t{i % 100}", "resource_id": f"r{i % 10}", "bucket": i % 100, "role": "user"}
            for i in range(start, start + count)
        ]
        await store.upsert("bench", matrix, metadata, ids)
    ingest = time.perf_counter() - started
    results: dict[str, Any] = {"n": n, "dim": dim, "ingest_seconds": ingest, "ingest_per_second": n / ingest}
    for phase in ("exact scan", "hnsw"):
        if phase == "hnsw":
            started = time.perf_counter()
            await store.build_index("bench")
            results["index_build_seconds"] = time.perf_counter() - started
        timings: dict[str, dict[str, float]] = {}
        for label, flt in FILTERS.items():
            samples = []
            for _ in range(queries):
                query = rng.normal(size=dim)
                t0 = time.perf_counter()
                hits = await store.query("bench", query, top_k=10, filter=flt)
                samples.append((time.perf_counter() - t0) * 1000)
                if len(hits) != 10:
                    raise RuntimeError(f"{label}: {len(hits)} hits instead of 10")
            samples.sort()
            timings[label] = {
                "median_ms": statistics.median(samples),
                "p95_ms": samples[int(0.95 * (len(samples) - 1))],
            }
        results[phase] = timings
    await store.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--json", type=Path, default=None, help="also write the results to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lancedb-bench-") as tmp:
        results = asyncio.run(run(args.n, args.dim, args.queries, Path(tmp)))
    print(f"lancedb: {results['n']:,} x {results['dim']} vectors")
    print(f"  ingest: {results['ingest_per_second']:,.0f} vectors/s ({results['ingest_seconds']:.1f} s)")
    print(f"  hnsw index build: {results['index_build_seconds']:.1f} s")
    for phase in ("exact scan", "hnsw"):
        print(f"  filtered top-10 latency, {phase}:")
        for label, timing in results[phase].items():
            print(f"    {label:30} median {timing['median_ms']:7.1f} ms   p95 {timing['p95_ms']:7.1f} ms")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
