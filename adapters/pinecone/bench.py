"""Benchmark of the Pinecone adapter: numbers to compare over time, never pass/fail.

Same data and queries as the core's ``tests/benchmarks/run.py``: ``rows`` normalised random vectors of
``dim`` dimensions with metadata ``{thread_id: t<i % 500>, resource_id: r<i % 50>, n: i % 1000, role:
"user"}``; ingest throughput through ``upsert`` in calls of 1,000 (sent as requests of 100 records),
the time until ``wait_for_indexing`` sees every write, and filtered top-10 query latency p50/p95.

By default it runs against the kit's **emulator** (a brute-force Python stand-in on loopback, writes
visible after 50 ms), so the numbers measure the adapter, the SDK and HTTP on this machine — not
Pinecone. Use ``--rows`` of 10,000 or so there (every query scans every record in Python). With
``--api-key`` (and optionally ``--controller-host-url``) it runs against that Pinecone project instead.

Usage::

    python adapters/pinecone/bench.py [--rows 10000] [--dim 384] [--queries 50] [--api-key KEY]

Results print as a table and are written to ``<out>/bench-pinecone-<target>.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mastra_memory_pinecone.settings import PineconeSettings
from mastra_memory_pinecone.store import PineconeVector

CALL = 1_000
THREADS = 500
INDEX = "bench"
CASES: dict[str, dict[str, Any] | None] = {
    "no filter": None,
    "thread_id = t42": {"thread_id": "t42"},
    "n in [100, 200) (range)": {"n": {"$gte": 100, "$lt": 200}},
    "resource r7 and n < 500": {"resource_id": "r7", "n": {"$lt": 500}},
    "role != user or n != 3 (negations)": {"$or": [{"role": {"$ne": "user"}}, {"n": {"$ne": 3}}]},
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


@contextlib.contextmanager
def _target(args: argparse.Namespace) -> Iterator[tuple[str, PineconeSettings]]:
    if args.api_key:
        extra = {"controller_host_url": args.controller_host_url} if args.controller_host_url else {}
        yield "cloud", PineconeSettings(api_key=args.api_key, wait_timeout=600, **extra)
        return
    from mastra_memory_conformance.emulators.pinecone import running_emulator

    with running_emulator(visibility_delay=0.05) as emulator:
        yield (
            "emulated",
            PineconeSettings(api_key=emulator.api_key, controller_host_url=emulator.url, wait_timeout=600),
        )


async def bench(label: str, settings: PineconeSettings, rows: int, dim: int, queries: int) -> dict[str, Any]:
    store = PineconeVector(settings)
    try:
        vectors, metadata, ids = _records(rows, dim, seed=7)
        await store.create_index(INDEX, dim)
        started = time.perf_counter()
        for start in range(0, rows, CALL):
            end = start + CALL
            await store.upsert(INDEX, vectors[start:end], metadata[start:end], ids[start:end])
        ingest_s = time.perf_counter() - started
        started = time.perf_counter()
        await store.wait_for_indexing(INDEX)
        visible_s = time.perf_counter() - started
        probes = np.random.default_rng(11).standard_normal((queries, dim)).astype(np.float32)
        latency: dict[str, dict[str, float]] = {}
        for case, flt in CASES.items():
            await store.query(INDEX, probes[0], top_k=10, filter=flt)  # warm up
            samples = []
            for probe in probes:
                t0 = time.perf_counter()
                hits = await store.query(INDEX, probe, top_k=10, filter=flt)
                samples.append((time.perf_counter() - t0) * 1000)
                if len(hits) != 10:
                    raise RuntimeError(f"{case}: {len(hits)} hits instead of 10")
            samples.sort()
            latency[case] = {
                "p50_ms": statistics.median(samples),
                "p95_ms": samples[max(0, int(len(samples) * 0.95) - 1)],
            }
        await store.delete_index(INDEX)
        return {
            "store": f"pinecone-{label}",
            "rows": rows,
            "dim": dim,
            "ingest_vectors_per_s": rows / ingest_s,
            "ingest_seconds": ingest_s,
            "wait_for_indexing_seconds": visible_s,
            "query_latency": latency,
        }
    finally:
        await store.close()


def _print(result: dict[str, Any]) -> None:
    print(f"\n{result['store']}: {result['rows']:,} vectors x {result['dim']} dims")
    print(f"  ingest: {result['ingest_vectors_per_s']:,.0f} vectors/s ({result['ingest_seconds']:.1f} s)")
    print(f"  wait_for_indexing after ingest: {result['wait_for_indexing_seconds']:.1f} s")
    for label, stats in result["query_latency"].items():
        print(f"  top-10 {label:<36} p50 {stats['p50_ms']:8.2f} ms   p95 {stats['p95_ms']:8.2f} ms")


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--api-key", default="")
    parser.add_argument("--controller-host-url", default="")
    parser.add_argument("--out", type=Path, default=Path("reports"))
    args = parser.parse_args()
    with _target(args) as (label, settings):
        result = await bench(label, settings, args.rows, args.dim, args.queries)
    _print(result)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"bench-{result['store']}.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
