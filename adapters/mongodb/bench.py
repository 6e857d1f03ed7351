"""Benchmark of the MongoDB adapter in exact mode: ingest throughput and filtered top-10 latency.

    python adapters/mongodb/bench.py                  # 100,000 vectors of 384 dimensions on FerretDB
    python adapters/mongodb/bench.py --count 20000    # a quicker run
    python adapters/mongodb/bench.py --uri mongodb://... --dialect mongodb   # an existing server

Steps: start a private FerretDB v1 (``mastra_memory_conformance.servers.ferretdb_server``) unless
``--uri`` is given; upsert ``--count`` unit vectors scattered around 1,000 topic centres with metadata
``{thread_id: t<i % 1000>, bucket: i % 100}`` (``metadata_indexes=["thread_id", "bucket"]``) and report
rows per second; then time ``--queries`` exact top-10 queries per filter. Results are printed as a table
and, with ``--json``, written to a file.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from mastra_memory_mongodb import MongoDBSettings
from mastra_memory_mongodb.store import MongoDBVector

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
def _server(uri: str | None) -> Iterator[str]:
    if uri:
        yield uri
        return
    from mastra_memory_conformance.servers import ferretdb_server

    with tempfile.TemporaryDirectory(prefix="mastra-bench-ferretdb-") as tmp:
        started = time.perf_counter()
        with ferretdb_server(Path(tmp)) as url:
            print(f"FerretDB ready in {time.perf_counter() - started:.2f} s at {url}", file=sys.stderr)
            yield url


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = np.random.default_rng(42)
    centres = rng.normal(size=(1000, args.dimension))
    topics = rng.integers(0, len(centres), size=args.count)
    vectors = (centres[topics] + rng.normal(scale=0.6, size=(args.count, args.dimension))).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"v{i:07d}" for i in range(args.count)]
    metadata = [{"thread_id": f"t{i % 1000}", "bucket": i % 100} for i in range(args.count)]
    queries = centres[rng.integers(0, len(centres), size=args.queries)] + rng.normal(
        scale=0.6, size=(args.queries, args.dimension)
    )
    dialect = args.dialect or ("mongodb" if args.uri else "ferretdb")
    report: dict[str, Any] = {
        "count": args.count,
        "dimension": args.dimension,
        "queries": args.queries,
        "server": "FerretDB v1 (SQLite)" if dialect == "ferretdb" else "MongoDB",
    }
    with _server(args.uri) as url:
        settings = MongoDBSettings(
            url=url, db_name=f"bench_{uuid.uuid4().hex[:8]}", dialect=dialect, search_mode="exact"
        )
        store = MongoDBVector(settings)
        index = "bench"
        try:
            await store.create_index(
                index, args.dimension, "cosine", metadata_indexes=["thread_id", "bucket"]
            )
            started = time.perf_counter()
            for start in range(0, args.count, args.batch):
                end = start + args.batch
                await store.upsert(index, vectors[start:end], metadata[start:end], ids[start:end])
            elapsed = time.perf_counter() - started
            report["ingest_seconds"] = elapsed
            report["ingest_rows_per_second"] = args.count / elapsed
            report["exact"] = {}
            for label, flt in FILTERS.items():
                latencies: list[float] = []
                for query in queries[: args.queries if flt else args.unfiltered_queries]:
                    began = time.perf_counter()
                    hits = await store.query(index, query.tolist(), top_k=10, filter=flt)
                    latencies.append((time.perf_counter() - began) * 1000)
                    assert len(hits) == 10
                report["exact"][label] = {
                    "p50_ms": statistics.median(latencies),
                    "p95_ms": _percentile(latencies, 0.95),
                    "queries": len(latencies),
                }
        finally:
            with contextlib.suppress(Exception):
                await store.delete_index(index)
            await store.close()
    return report


def _print(report: dict[str, Any]) -> None:
    print(
        f"\nmongodb adapter (exact mode, {report['server']}): {report['count']:,} vectors x "
        f"{report['dimension']} dims"
    )
    print(f"ingest: {report['ingest_rows_per_second']:,.0f} rows/s ({report['ingest_seconds']:.1f} s)\n")
    print(f"{'top-10 query':<46} {'p50':>10} {'p95':>10} {'queries':>8}")
    for label in FILTERS:
        e = report["exact"][label]
        print(f"{label:<46} {e['p50_ms']:>8.1f}ms {e['p95_ms']:>8.1f}ms {e['queries']:>8}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--queries", type=int, default=30, help="queries per filtered row")
    parser.add_argument(
        "--unfiltered-queries", type=int, default=5, help="queries of the unfiltered row (a full scan each)"
    )
    parser.add_argument("--batch", type=int, default=5_000, help="vectors per upsert call")
    parser.add_argument("--uri", default=os.environ.get("MASTRA_MEMORY_TEST_MONGODB_URI") or None)
    parser.add_argument("--dialect", choices=["mongodb", "ferretdb"], default=None)
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    args = parser.parse_args()
    report = asyncio.run(run(args))
    _print(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
