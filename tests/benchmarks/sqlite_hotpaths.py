"""Micro-benchmark of the SQLite store's four hot paths of issue 19, each beside bare numpy in the same run.

Numbers to compare over time, never pass/fail assertions. Deterministic (fixed seeds) and offline.

1. Filtered exact search: ``{"resource_id": r}`` (every row matches, as in the Memory workload: one
   resource), a 10 % numeric range, and a 10-clause filter, against numpy scoring the same candidate rows
   (gather, matmul, top-k) with the rows known in advance.
2. The first query after a one-vector upsert, against a query without one (cache maintenance).
3. One save of 20 messages as ``Memory`` does it (delete the messages' old vectors by ``message_id``,
   then upsert), near the start and at the end of the store's growth: flat means no full-table scan.
4. Parse and translate of a 10-clause filter: cold (first time) and warm (the same filter again).

Usage: ``python tests/benchmarks/sqlite_hotpaths.py [--rows 10000] [--dim 384] [--queries 30]``; prints a
table and writes ``reports/bench-sqlite-hotpaths.json`` (``--out`` changes the directory).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mastra_memory.filters import evaluate, parse
from mastra_memory.stores.sqlite.store import SQLiteVector

INDEX = "memory_messages_384"
THREADS = 50
BATCH = 1_000
SAVE = 20
# The keys MessageIndexer.ensure_index asks for (core/mastra_memory/memory/index/indexer.py).
METADATA_INDEXES = ["thread_id", "resource_id", "message_id"]

TEN_CLAUSES: dict[str, Any] = {
    "resource_id": "r0",
    "role": {"$in": ["user", "assistant"]},
    "n": {"$gte": 10, "$lt": 990},
    "thread_id": {"$ne": "t7"},
    "created_at": {"$gte": "2024-01-01"},
    "message_id": {"$nin": ["m1", "m2", "m3"]},
    "archived": {"$exists": False},
    "score": {"$gt": -1.0},
    "lang": "en",
    "$or": [{"n": {"$lt": 500}}, {"role": "assistant"}],
}


def _metadata(i: int) -> dict[str, Any]:
    return {
        "message_id": f"m{i}",
        "thread_id": f"t{i % THREADS}",
        "resource_id": "r0",
        "role": "user" if i % 2 else "assistant",
        "content": f"message number {i}",
        "created_at": f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T00:00:00.000Z",
        "n": i % 1000,
        "score": (i % 97) / 97,
        "lang": "en",
    }


def _p50(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def _timed(fn: Callable[[], Awaitable[Any]], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        await fn()
        out.append(time.perf_counter() - t0)
    return out


def _numpy_topk(
    matrix: npt.NDArray[np.float32], norms: npt.NDArray[np.float32], rows: npt.NDArray[np.int64] | None,
    q: npt.NDArray[np.float32], k: int,
) -> npt.NDArray[np.int64]:  # fmt: skip
    """Bare numpy: cosine over the candidate rows (known in advance) and the top k.

    Of two strategies, the faster one for the candidate count: gather the rows and score them, or score
    the whole contiguous matrix and pick the rows (faster when most rows are candidates).
    """
    if rows is None:
        scores = (matrix @ q) / (norms * np.linalg.norm(q))
    elif rows.size * 2 >= matrix.shape[0]:
        scores = (matrix @ q)[rows] / (norms[rows] * np.linalg.norm(q))
    else:
        scores = (matrix[rows] @ q) / (norms[rows] * np.linalg.norm(q))
    top = np.argpartition(-scores, k)[:k] if scores.size > k else np.arange(scores.size)
    return top[np.argsort(-scores[top])]


async def run(rows: int, dim: int, queries: int) -> dict[str, Any]:
    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((rows, dim)).astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1).astype(np.float32)
    metadata = [_metadata(i) for i in range(rows)]
    ids = [f"m{i}" for i in range(rows)]
    probes = rng.standard_normal((queries, dim)).astype(np.float32)
    result: dict[str, Any] = {"rows": rows, "dim": dim, "queries": queries}

    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteVector(str(Path(tmp) / "bench.db"))
        try:
            await store.create_index(INDEX, dim, metadata_indexes=METADATA_INDEXES)
            first_tenth = rows // 10
            for start in range(0, first_tenth, BATCH):
                end = min(start + BATCH, first_tenth)
                await store.upsert(INDEX, matrix[start:end], metadata[start:end], ids[start:end])

            async def save_cycle(at: int) -> float:
                """One Memory-style save of SAVE messages that already exist (re-saved): delete, upsert."""
                batch = list(range(at - SAVE, at))
                t0 = time.perf_counter()
                await store.delete_vectors(INDEX, filter={"message_id": {"$in": [ids[i] for i in batch]}})
                await store.upsert(
                    INDEX, matrix[batch], [metadata[i] for i in batch], [ids[i] for i in batch]
                )
                return time.perf_counter() - t0

            early = [await save_cycle(first_tenth) for _ in range(10)]
            for start in range(first_tenth, rows, BATCH):
                end = min(start + BATCH, rows)
                await store.upsert(INDEX, matrix[start:end], metadata[start:end], ids[start:end])
            late = [await save_cycle(rows) for _ in range(10)]
            result["save_20"] = {
                "first_tenth_ms": _p50(early),
                "full_ms": _p50(late),
                "msgs_per_s_first_tenth": SAVE / statistics.median(early),
                "msgs_per_s_full": SAVE / statistics.median(late),
            }

            # 1. filtered searches against numpy over the same candidate rows
            ten = parse(TEN_CLAUSES)
            cases: dict[str, Any] = {
                "no filter": None,
                "resource_id = r0 (all rows)": {"resource_id": "r0"},
                "thread_id = t3 (2 %)": {"thread_id": "t3"},
                "n in [0, 100) (10 % range)": {"n": {"$gte": 0, "$lt": 100}},
                "10-clause filter": TEN_CLAUSES,
            }
            searches: dict[str, Any] = {}
            for label, flt in cases.items():
                node = None if flt is None else (ten if flt is TEN_CLAUSES else parse(flt))
                candidates = (
                    None
                    if node is None
                    else np.array([i for i in range(rows) if evaluate(node, metadata[i])], dtype=np.int64)
                )
                if candidates is not None and candidates.size == rows:
                    candidates = None  # every row: numpy scores the matrix as it is
                prepared = store.prepare_filter(flt)
                hits = await store.query(INDEX, probes[0], top_k=3, filter=prepared)
                expected = _numpy_topk(matrix, norms, candidates, probes[0], 3)
                picked = expected if candidates is None else candidates[expected]
                assert [h.id for h in hits] == [ids[i] for i in picked], label  # same answer as numpy
                store_s = []
                for q in probes:
                    t0 = time.perf_counter()
                    await store.query(INDEX, q, top_k=3, filter=prepared)
                    store_s.append(time.perf_counter() - t0)
                numpy_s = []
                for q in probes:
                    t0 = time.perf_counter()
                    _numpy_topk(matrix, norms, candidates, q, 3)
                    numpy_s.append(time.perf_counter() - t0)
                searches[label] = {
                    "candidates": rows if candidates is None else int(candidates.size),
                    "store_p50_ms": _p50(store_s),
                    "numpy_p50_ms": _p50(numpy_s),
                    "ratio": statistics.median(store_s) / statistics.median(numpy_s),
                }
            result["search"] = searches

            # 2. a query right after a one-vector upsert
            scope = store.prepare_filter({"resource_id": "r0"})
            after: list[float] = []
            for i in range(min(queries, 20)):
                j = i % rows
                await store.upsert(INDEX, matrix[j : j + 1], [metadata[j]], [ids[j]])
                t0 = time.perf_counter()
                await store.query(INDEX, probes[i % queries], top_k=3, filter=scope)
                after.append(time.perf_counter() - t0)
            steady = await _timed(lambda: store.query(INDEX, probes[0], top_k=3, filter=scope), 20)
            result["query_after_upsert"] = {
                "after_upsert_p50_ms": _p50(after),
                "steady_p50_ms": _p50(steady),
                "ratio": statistics.median(after) / statistics.median(steady),
            }
        finally:
            await store.close()

    # 4. parse + translate of a 10-clause filter
    def per_call(fn: Callable[[], Any], n: int = 300) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - t0) / n * 1e6

    translator = SQLiteVector.translator
    assert translator is not None
    variants = [dict(TEN_CLAUSES, lang=f"l{i}") for i in range(300)]  # distinct filters: never cached
    cold_it = iter(variants)
    result["translate_10_clauses_us"] = {
        "parse": per_call(lambda: parse(TEN_CLAUSES)),
        "translate_cold": per_call(lambda: translator().translate(parse(next(cold_it))), len(variants))
        - per_call(lambda: parse(TEN_CLAUSES)),
        "prepare_filter_node_warm": per_call(lambda: store.prepare_filter(ten)),
        "prepare_filter_dict_warm": per_call(lambda: store.prepare_filter(TEN_CLAUSES)),
    }
    return result


def _print(r: dict[str, Any]) -> None:
    print(f"\nsqlite hot paths: {r['rows']:,} vectors x {r['dim']} dims, top-3, p50 of {r['queries']}")
    print(f"  {'search':<30} {'rows':>8} {'store ms':>9} {'numpy ms':>9} {'ratio':>6}")
    for label, s in r["search"].items():
        print(
            f"  {label:<30} {s['candidates']:>8,} {s['store_p50_ms']:>9.2f} {s['numpy_p50_ms']:>9.2f} "
            f"{s['ratio']:>6.1f}"
        )
    a = r["query_after_upsert"]
    print(
        f"  query after 1-vector upsert {a['after_upsert_p50_ms']:.2f} ms vs steady "
        f"{a['steady_p50_ms']:.2f} ms (x{a['ratio']:.2f})"
    )
    s = r["save_20"]
    print(
        f"  save of {SAVE} (delete by message_id + upsert): {s['first_tenth_ms']:.2f} ms at N/10, "
        f"{s['full_ms']:.2f} ms at N "
        f"({s['msgs_per_s_first_tenth']:,.0f} -> {s['msgs_per_s_full']:,.0f} msg/s)"
    )
    t = r["translate_10_clauses_us"]
    print(
        f"  10-clause filter: parse {t['parse']:.0f} us, translate (cold) {t['translate_cold']:.0f} us, "
        f"prepare_filter warm: node {t['prepare_filter_node_warm']:.0f} us, "
        f"dict {t['prepare_filter_dict_warm']:.0f} us"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--out", type=Path, default=Path("reports"))
    args = parser.parse_args()
    result = asyncio.run(run(args.rows, args.dim, args.queries))
    _print(result)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench-sqlite-hotpaths.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
