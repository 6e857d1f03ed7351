"""Benchmark of the Qdrant adapter: numbers to compare over time, never pass/fail.

Same data and queries as the core's ``tests/benchmarks/run.py`` (the embedded SQLite store), so the
results sit side by side: ``rows`` normalised random vectors of ``dim`` dimensions with metadata
``{thread_id: t<i % 500>, resource_id: r<i % 50>, n: i % 1000, role: "user"}``.

* ingest throughput: vectors per second through ``upsert`` in calls of 1,000 (the adapter sends them in
  batches of 256, each acknowledged once applied), then the time to build the HNSW index
  (``QdrantVector.optimize``; the edge engine has no background optimiser);
* filtered top-10 query latency, p50/p95 over ``--queries`` queries, with no filter, a selective
  ``thread_id`` filter (keyword payload index), a numeric range and a combination;
* recall@10 of the HNSW search against exact search over the same filter (random vectors in 384
  dimensions are a hard case for HNSW: the default ``ef`` is ``m·top_k = 160``; rows with ``ef=1000``
  show the trade-off).

Usage::

    python adapters/qdrant/bench.py [--mode edge|memory|local] [--rows 100000] [--dim 384] [--queries 50]

``edge`` (the default) is the embedded Rust engine. ``memory`` and ``local`` are qdrant-client's local mode,
which scans in Python: use a smaller ``--rows`` there. Results print as a table and are written to
``<out>/bench-qdrant-<mode>.json``.
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
import numpy.typing as npt

from mastra_memory_qdrant.settings import QdrantSettings
from mastra_memory_qdrant.store import QdrantVector

CALL = 1_000
THREADS = 500
INDEX = "bench"
#: label -> (filter, query options)
CASES: dict[str, tuple[dict[str, Any] | None, dict[str, Any]]] = {
    "no filter": (None, {}),
    "no filter, ef=1000": (None, {"ef": 1000}),
    "thread_id = t42 (indexed)": ({"thread_id": "t42"}, {}),
    "n in [100, 200) (range)": ({"n": {"$gte": 100, "$lt": 200}}, {}),
    "n in [100, 200), ef=1000": ({"n": {"$gte": 100, "$lt": 200}}, {"ef": 1000}),
    "resource r7 and n < 500": ({"resource_id": "r7", "n": {"$lt": 500}}, {}),
}


def _records(
    rows: int, dim: int, seed: int
) -> tuple[npt.NDArray[np.float32], list[dict[str, Any]], list[str]]:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((rows, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    metadata = [
        {"thread_id": f"t{i % THREADS}", "resource_id": f"r{i % 50}", "n": int(i % 1000), "role": "user"}
        for i in range(rows)
    ]
    return vectors, metadata, [f"m{i}" for i in range(rows)]


def _settings(mode: str, root: Path) -> QdrantSettings:
    if mode == "edge":
        # The index is built once after ingest (measured on its own) rather than every 20,000 points.
        return QdrantSettings(edge_path=str(root / "edge"), edge_optimize_threshold=0)
    if mode == "local":
        return QdrantSettings(path=str(root / "local"))
    return QdrantSettings(url=":memory:")


async def bench(mode: str, rows: int, dim: int, queries: int, root: Path) -> dict[str, Any]:
    """Ingest ``rows`` vectors, build the index, and time the query cases."""
    store = QdrantVector(_settings(mode, root))
    try:
        vectors, metadata, ids = _records(rows, dim, seed=7)
        await store.create_index(INDEX, dim, metadata_indexes=["thread_id", "resource_id"])
        started = time.perf_counter()
        for start in range(0, rows, CALL):
            end = start + CALL
            await store.upsert(INDEX, vectors[start:end], metadata[start:end], ids[start:end])
        ingest_s = time.perf_counter() - started
        started = time.perf_counter()
        await store.optimize(INDEX)
        build_s = time.perf_counter() - started

        probes = np.random.default_rng(11).standard_normal((queries, dim)).astype(np.float32)
        latency: dict[str, dict[str, float]] = {}
        recall: dict[str, float] = {}
        for label, (flt, options) in CASES.items():
            await store.query(INDEX, probes[0], top_k=10, filter=flt, **options)  # warm up
            samples = []
            found = 0
            for probe in probes:
                t0 = time.perf_counter()
                hits = await store.query(INDEX, probe, top_k=10, filter=flt, **options)
                samples.append((time.perf_counter() - t0) * 1000)
                if len(hits) != 10:
                    raise RuntimeError(f"{label}: {len(hits)} hits instead of 10")
                exact = await store.query(INDEX, probe, top_k=10, filter=flt, exact=True)
                found += len({h.id for h in hits} & {h.id for h in exact})
            samples.sort()
            latency[label] = {
                "p50_ms": statistics.median(samples),
                "p95_ms": samples[max(0, int(len(samples) * 0.95) - 1)],
            }
            recall[label] = found / (10 * len(probes))
        return {
            "store": f"qdrant-{mode}",
            "rows": rows,
            "dim": dim,
            "ingest_vectors_per_s": rows / ingest_s,
            "ingest_seconds": ingest_s,
            "index_build_seconds": build_s,
            "query_latency": latency,
            "recall_at_10": recall,
        }
    finally:
        await store.close()


def _print(result: dict[str, Any]) -> None:
    print(f"\n{result['store']}: {result['rows']:,} vectors x {result['dim']} dims")
    print(f"  ingest: {result['ingest_vectors_per_s']:,.0f} vectors/s ({result['ingest_seconds']:.1f} s)")
    print(f"  index build (optimize): {result['index_build_seconds']:.1f} s")
    for label, stats in result["query_latency"].items():
        print(
            f"  top-10 {label:<28} p50 {stats['p50_ms']:7.2f} ms   p95 {stats['p95_ms']:7.2f} ms   "
            f"recall@10 {result['recall_at_10'][label]:.3f}"
        )


async def main() -> None:
    """Parse the arguments, run the benchmark, print and save the result."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mode", choices=("edge", "memory", "local"), default="edge")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--out", type=Path, default=Path("reports"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = await bench(args.mode, args.rows, args.dim, args.queries, Path(tmp))
    _print(result)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"bench-{result['store']}.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
