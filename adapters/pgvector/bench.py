"""Benchmark of the pgvector adapter: ingest throughput and filtered top-10 latency, without and with HNSW.

    python adapters/pgvector/bench.py                 # 100,000 vectors of 384 dimensions
    python adapters/pgvector/bench.py --count 20000   # a quicker run
    python adapters/pgvector/bench.py --dsn postgresql://...   # an existing server (default: a private one)

Steps: start a private PostgreSQL + pgvector (or use ``--dsn``); upsert ``--count`` unit vectors scattered
around 1,000 random topic centres (embedding-like: uniform random vectors would be the worst case of any
ANN index) with metadata ``{thread_id: t<i % 1000>, bucket: i % 100}`` into a ``flat`` index (no ANN
index) and report rows per second; time ``--queries`` top-10 queries per filter, exactly; rebuild the
index as HNSW (``m=16``, ``ef_construction=64``) and time it; run the same queries through HNSW and
report their latency, their recall against the exact answers, and whether every query returned 10 hits.
Results are printed as a table and, with ``--json``, written to a file.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from mastra_memory_pgvector import PgVectorSettings
from mastra_memory_pgvector.server import local_server
from mastra_memory_pgvector.store import PgVector

FILTERS: dict[str, dict[str, Any] | None] = {
    "no filter": None,
    "bucket = 7 (1%)": {"bucket": 7},
    "thread_id = t7 (0.1%)": {"thread_id": "t7"},
    "bucket in [1, 2, 3] and thread_id != t1 (3%)": {
        "bucket": {"$in": [1, 2, 3]},
        "thread_id": {"$ne": "t1"},
    },
}


@contextlib.contextmanager
def _server(dsn: str | None) -> Iterator[str]:
    if dsn:
        yield dsn
        return
    started = time.perf_counter()
    with local_server() as url:
        print(f"private server ready in {time.perf_counter() - started:.2f} s at {url}", file=sys.stderr)
        yield url


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _time_queries(
    store: PgVector, index: str, queries: np.ndarray[Any, Any], flt: dict[str, Any] | None, **options: Any
) -> tuple[list[float], list[list[str]]]:
    latencies: list[float] = []
    answers: list[list[str]] = []
    for query in queries:
        started = time.perf_counter()
        hits = await store.query(index, query.tolist(), top_k=10, filter=flt, **options)
        latencies.append((time.perf_counter() - started) * 1000)
        answers.append([h.id for h in hits])
    return latencies, answers


async def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = np.random.default_rng(42)
    # Embedding-like data: unit vectors around 1,000 topic centres (uniform random vectors in 384
    # dimensions have no neighbourhood structure and are the worst case of every ANN index).
    centres = rng.normal(size=(1000, args.dimension))
    topics = rng.integers(0, len(centres), size=args.count)
    vectors = (centres[topics] + rng.normal(scale=0.6, size=(args.count, args.dimension))).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"v{i:07d}" for i in range(args.count)]
    metadata = [{"thread_id": f"t{i % 1000}", "bucket": i % 100} for i in range(args.count)]
    queries = centres[rng.integers(0, len(centres), size=args.queries)] + rng.normal(
        scale=0.6, size=(args.queries, args.dimension)
    )
    report: dict[str, Any] = {"count": args.count, "dimension": args.dimension, "queries": args.queries}
    with _server(args.dsn) as url:
        settings = PgVectorSettings(url=url, schema_name=f"bench_{uuid.uuid4().hex[:8]}")
        store = PgVector(settings)
        index = "bench"
        try:
            await store.create_index(
                index, args.dimension, "cosine", index_config={"type": "flat"}, metadata_indexes=["thread_id"]
            )
            started = time.perf_counter()
            for start in range(0, args.count, args.batch):
                end = start + args.batch
                await store.upsert(index, vectors[start:end], metadata[start:end], ids[start:end])
            elapsed = time.perf_counter() - started
            report["ingest_seconds"] = elapsed
            report["ingest_rows_per_second"] = args.count / elapsed

            exact: dict[str, list[list[str]]] = {}
            report["exact"] = {}
            for label, flt in FILTERS.items():
                latencies, answers = await _time_queries(store, index, queries, flt)
                exact[label] = answers
                report["exact"][label] = {
                    "p50_ms": statistics.median(latencies),
                    "p95_ms": _percentile(latencies, 0.95),
                }

            started = time.perf_counter()
            await store.create_index(
                index, args.dimension, index_config={"type": "hnsw", "m": 16, "ef_construction": 64}
            )
            report["hnsw_build_seconds"] = time.perf_counter() - started

            report["hnsw"] = {}
            for label, flt in FILTERS.items():
                latencies, answers = await _time_queries(store, index, queries, flt)
                found = sum(len(set(a) & set(e)) for a, e in zip(answers, exact[label], strict=True))
                wanted = sum(len(e) for e in exact[label])
                report["hnsw"][label] = {
                    "p50_ms": statistics.median(latencies),
                    "p95_ms": _percentile(latencies, 0.95),
                    "recall_at_10": found / wanted if wanted else 1.0,
                    "always_10": all(len(a) == 10 for a in answers),
                }
        finally:
            with contextlib.suppress(Exception):
                await store.delete_index(index)
            await store.close()
    return report


def _print(report: dict[str, Any]) -> None:
    print(
        f"\npgvector adapter: {report['count']:,} vectors x {report['dimension']} dims, "
        f"{report['queries']} queries per row"
    )
    print(
        f"ingest (flat, no ANN index): {report['ingest_rows_per_second']:,.0f} rows/s "
        f"({report['ingest_seconds']:.1f} s)"
    )
    print(f"HNSW build (m=16, ef_construction=64): {report['hnsw_build_seconds']:.1f} s\n")
    print(
        f"{'top-10 query':<46} {'exact p50':>10} {'exact p95':>10} "
        f"{'HNSW p50':>10} {'HNSW p95':>10} {'recall':>7} {'10 hits':>8}"
    )
    for label in FILTERS:
        e, h = report["exact"][label], report["hnsw"][label]
        print(
            f"{label:<46} {e['p50_ms']:>8.2f}ms {e['p95_ms']:>8.2f}ms "
            f"{h['p50_ms']:>8.2f}ms {h['p95_ms']:>8.2f}ms "
            f"{h['recall_at_10']:>7.3f} {'always' if h['always_10'] else 'NO':>8}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--batch", type=int, default=5_000, help="vectors per upsert call")
    parser.add_argument("--dsn", default=os.environ.get("MASTRA_MEMORY_TEST_PG_DSN") or None)
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    args = parser.parse_args()
    report = asyncio.run(run(args))
    _print(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
