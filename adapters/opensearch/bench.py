"""Benchmark of the OpenSearch adapter: ingest throughput, and top-10 latency and recall with HNSW.

    python adapters/opensearch/bench.py                 # 100,000 vectors of 384 dimensions
    python adapters/opensearch/bench.py --count 20000   # a quicker run
    python adapters/opensearch/bench.py --url http://localhost:9200   # an existing cluster

Steps: start a private single-node OpenSearch 2.19.1 + k-NN (the conformance kit's native launcher, heap
``--heap``) or use ``--url``; upsert ``--count`` unit vectors scattered around 1,000 random topic centres
(embedding-like) with metadata ``{thread_id: t<i % 1000>, bucket: i % 100}`` into an HNSW index (Lucene,
``m=16``, ``ef_construction=64``) and report records per second (bulk requests, refreshed at the end of
each upsert call); force-merge to one segment and time it; time ``--queries`` top-10 queries per filter
through HNSW (the filter inside the ``knn`` clause) and through the exact ``script_score`` path, and report
p50/p95, recall@10 of HNSW against the exact answers (computed with numpy from the same vectors), and
whether every query returned 10 hits. Results are printed as a table and, with ``--json``, written to a file.
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from mastra_memory_opensearch import OpenSearchSettings
from mastra_memory_opensearch.store import OpenSearchVector

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
def _server(url: str | None, heap: str) -> Iterator[str]:
    if url:
        yield url
        return
    from mastra_memory_conformance.servers import opensearch_server

    started = time.perf_counter()
    with (
        tempfile.TemporaryDirectory(prefix="opensearch-bench-") as tmp,
        opensearch_server(Path(tmp), heap=heap) as u,
    ):
        print(f"private node ready in {time.perf_counter() - started:.1f} s at {u}", file=sys.stderr)
        yield u


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _mask(metadata: list[dict[str, Any]], flt: dict[str, Any] | None) -> np.ndarray[Any, Any]:
    from mastra_memory.filters import evaluate

    return np.array([flt is None or evaluate(flt, m) for m in metadata])


async def _time_queries(
    store: OpenSearchVector,
    index: str,
    queries: np.ndarray[Any, Any],
    flt: dict[str, Any] | None,
    **options: Any,
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
    centres = rng.normal(size=(1000, args.dimension))
    topics = rng.integers(0, len(centres), size=args.count)
    vectors = (centres[topics] + rng.normal(scale=0.6, size=(args.count, args.dimension))).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"v{i:07d}" for i in range(args.count)]
    metadata = [{"thread_id": f"t{i % 1000}", "bucket": i % 100} for i in range(args.count)]
    queries = centres[rng.integers(0, len(centres), size=args.queries)] + rng.normal(
        scale=0.6, size=(args.queries, args.dimension)
    )
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    report: dict[str, Any] = {"count": args.count, "dimension": args.dimension, "queries": args.queries}
    with _server(args.url, args.heap) as url:
        store = OpenSearchVector(OpenSearchSettings(url=url, index_prefix="bench_", timeout=600))
        index = "bench"
        try:
            await store.delete_index(index)
            await store.create_index(
                index, args.dimension, "cosine", index_config={"type": "hnsw", "m": 16, "ef_construction": 64}
            )
            started = time.perf_counter()
            for start in range(0, args.count, args.batch):
                end = start + args.batch
                await store.upsert(index, vectors[start:end], metadata[start:end], ids[start:end])
            elapsed = time.perf_counter() - started
            report["ingest_seconds"] = elapsed
            report["ingest_rows_per_second"] = args.count / elapsed
            started = time.perf_counter()
            await store.client.indices.forcemerge(
                index=store.settings.index_prefix + index, max_num_segments=1, request_timeout=3600
            )
            report["force_merge_seconds"] = time.perf_counter() - started

            report["hnsw"], report["exact"] = {}, {}
            unit = vectors.astype(np.float64)
            for label, flt in FILTERS.items():
                mask = _mask(metadata, flt)
                truth = []
                for query in queries:
                    scores = np.where(mask, unit @ query, -np.inf)
                    truth.append({ids[i] for i in np.argsort(-scores)[:10] if mask[i]})
                latencies, answers = await _time_queries(store, index, queries, flt)
                found = sum(len(set(a) & t) for a, t in zip(answers, truth, strict=True))
                report["hnsw"][label] = {
                    "p50_ms": statistics.median(latencies),
                    "p95_ms": _percentile(latencies, 0.95),
                    "recall_at_10": found / sum(len(t) for t in truth),
                    "always_10": all(len(a) == 10 for a in answers),
                }
                exact_queries = queries[: args.exact_queries]
                latencies, answers = await _time_queries(store, index, exact_queries, flt, exact=True)
                found = sum(len(set(a) & t) for a, t in zip(answers, truth, strict=False))
                report["exact"][label] = {
                    "p50_ms": statistics.median(latencies),
                    "recall_at_10": found / sum(len(t) for t in truth[: len(exact_queries)]),
                }
        finally:
            with contextlib.suppress(Exception):
                await store.delete_index(index)
            await store.close()
    return report


def _print(report: dict[str, Any]) -> None:
    print(
        f"\nopensearch adapter: {report['count']:,} vectors x {report['dimension']} dims, "
        f"{report['queries']} queries per row (Lucene HNSW m=16, ef_construction=64)"
    )
    print(
        f"ingest (bulk, HNSW built while indexing): {report['ingest_rows_per_second']:,.0f} records/s "
        f"({report['ingest_seconds']:.1f} s); force-merge to 1 segment "
        f"{report['force_merge_seconds']:.1f} s\n"
    )
    print(
        f"{'top-10 query':<46} {'HNSW p50':>10} {'HNSW p95':>10} {'recall':>7} {'10 hits':>8} "
        f"{'exact p50':>10} {'exact rec':>9}"
    )
    for label in FILTERS:
        h, e = report["hnsw"][label], report["exact"][label]
        print(
            f"{label:<46} {h['p50_ms']:>8.2f}ms {h['p95_ms']:>8.2f}ms {h['recall_at_10']:>7.3f} "
            f"{'always' if h['always_10'] else 'NO':>8} {e['p50_ms']:>8.2f}ms {e['recall_at_10']:>9.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--exact-queries", type=int, default=10, help="queries timed on the exact path")
    parser.add_argument("--batch", type=int, default=5_000, help="vectors per upsert call")
    parser.add_argument("--heap", default=os.environ.get("MASTRA_MEMORY_OPENSEARCH_HEAP") or "2g")
    parser.add_argument("--url", default=os.environ.get("MASTRA_MEMORY_TEST_OPENSEARCH_URL") or None)
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    args = parser.parse_args()
    report = asyncio.run(run(args))
    _print(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
