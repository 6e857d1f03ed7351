"""The vector-level benchmark of every store: ingest throughput, then top-10 latency and recall per filter.

Numbers to compare over time, never pass/fail. One harness for every adapter, on the conformance kit's
targets (``registry.registered_targets()``): the kit provisions the store (a temporary directory, a private
server, an emulator, or the service an environment variable names) and this script measures it.

* data: ``--count`` unit vectors of ``--dimension`` (default 100,000 x 384) scattered around 1,000 topic
  centres (embedding-like; ``--vectors uniform`` for uniformly random ones, the worst case of every ANN
  index), with metadata ``{thread_id: t<i % 1000>, resource_id: r<i % 50>, bucket: i % 100,
  n: i % 1000, role: "user"}``;
* ingest: vectors per second through ``upsert`` in calls of the adapter's batch size;
* the adapter's steps after ingest, each timed: an index build, a force-merge, a wait until every write is
  visible (see ``PLANS``);
* per query phase (exact and/or ANN) and filter case: p50/p95 over ``--queries`` top-10 queries (after one
  warm-up query), recall@10 against the exact answer computed with numpy (the reference evaluator picks the
  matching rows), and whether every query returned 10 hits (or every match, when fewer match);
* ``--alone`` (issue 28, "cost follows the user, not the store"): the scope of one user among the 50,
  ``{resource_id: r7}`` (2 % of records), queried on the full index and then on a second index holding only
  that user's records (the same vectors, ids and metadata, the same steps after ingest): p50/p95 of both,
  their ratio, recall@10 of both. Both indexes declare ``thread_id`` and ``resource_id`` as metadata
  indexes, as the memory layer does. ``--cases scope`` runs only that case (no other filter case).

Usage::

    python tests/benchmarks/vectors.py --target qdrant                 # an adapter: its default target
    python tests/benchmarks/vectors.py --target qdrant-local --count 2000 --queries 10
    python tests/benchmarks/vectors.py --target pgvector --out /tmp/bench
    python tests/benchmarks/vectors.py --target qdrant --alone --cases scope   # cost follows the user

An adapter name stands for its first available target in ``DEFAULT_TARGETS``: the service its ``url``
target's environment variable names (``MASTRA_MEMORY_TEST_PG_DSN``, ``..._MONGODB_URI``,
``..._OPENSEARCH_URL``) when set, else a private one. Results print as a table and are written to
``<out>/bench-vectors-<target>.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

INDEX = "bench"
TOP_K = 10
#: Filter cases by label, with the share of records they match.
CASES: dict[str, dict[str, Any] | None] = {
    "no filter": None,
    "thread_id = t7 (0.1 %)": {"thread_id": "t7"},
    "bucket = 7 (1 %)": {"bucket": 7},
    "n in [100, 200) (10 %, range)": {"n": {"$gte": 100, "$lt": 200}},
    "resource_id = r7 and n < 500 (1 %)": {"resource_id": "r7", "n": {"$lt": 500}},
    "bucket in [1, 2, 3] and thread_id != t1 (3 %)": {
        "bucket": {"$in": [1, 2, 3]},
        "thread_id": {"$ne": "t1"},
    },
    "role != user or n != 3 (99.9 %, negations)": {"$or": [{"role": {"$ne": "user"}}, {"n": {"$ne": 3}}]},
}
#: One user among the 50 of the data (2 % of records): the scope ``--alone`` measures.
SCOPE_LABEL = "resource_id = r7 (2 %, one user)"
SCOPE = {"resource_id": "r7"}
#: The keys the memory layer declares as metadata indexes for the scope (memory/index/indexer.py).
SCOPE_INDEXES = ("thread_id", "resource_id")
ALONE = "bench_alone"
HNSW = {"type": "hnsw", "m": 16, "ef_construction": 64}

#: ``step(store, index, dimension)``: what an adapter does between ingest and its queries.
Step = Callable[[Any, str, int], Awaitable[Any]]


@dataclass(frozen=True)
class Phase:
    """Timed top-10 queries of every case; ``options`` go to ``query``, ``queries`` caps their number."""

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)
    queries: int | None = None


@dataclass(frozen=True)
class Timed:
    """A step after ingest whose seconds are reported under ``key`` (an index build, a wait, a merge)."""

    key: str
    run: Step


def _no_settings(count: int) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class Plan:
    """How one adapter is measured: settings on top of its target's (by ``--count``), the index, the
    batch size, defaults of ``--count``/``--queries``, and what follows ingest."""

    settings: Callable[[int], dict[str, Any]] = _no_settings
    create: Mapping[str, Any] = field(default_factory=dict)
    batch: int = 5_000
    count: int = 100_000
    queries: int = 50
    steps: tuple[Phase | Timed, ...] = (Phase("exact"),)


async def _force_merge(store: Any, index: str, dimension: int) -> None:
    # One segment, as a quiet production index ends up; the HNSW graphs of the segments are merged.
    native = store.settings.index_prefix + index
    await store.client.indices.forcemerge(index=native, max_num_segments=1, request_timeout=3600)


PLANS: dict[str, Plan] = {
    "sqlite": Plan(batch=1_000, create={"metadata_indexes": ["thread_id", "resource_id"]}),
    "lancedb": Plan(
        # Below index_min_rows the store scans exactly: the index is trained once after ingest, timed.
        settings=lambda count: {"index_min_rows": max(count + 1, 256)},
        create={"index_config": {"type": "hnsw"}, "metadata_indexes": ["thread_id", "resource_id"]},
        steps=(
            Phase("exact scan"),
            Timed("index_build_seconds", lambda store, index, dim: store.build_index(index)),
            Phase("hnsw"),
        ),
    ),
    "pgvector": Plan(
        settings=lambda count: {"schema_name": f"bench_{uuid.uuid4().hex[:8]}"},
        create={"index_config": {"type": "flat"}, "metadata_indexes": ["thread_id"]},
        steps=(
            Phase("exact"),
            Timed(
                "hnsw_build_seconds",
                lambda store, index, dim: store.create_index(index, dim, index_config=HNSW),
            ),
            Phase("hnsw"),
        ),
    ),
    "qdrant": Plan(
        # The edge engine has no background optimiser: its HNSW index is built once, timed, on all threads.
        settings=lambda count: {"edge_optimize_threshold": 0, "edge_search_threads": None},
        create={"metadata_indexes": ["thread_id", "resource_id"]},
        batch=1_000,
        steps=(
            Timed("index_build_seconds", lambda store, index, dim: store.optimize(index)),
            Phase("hnsw"),
            Phase("hnsw, ef=1000", {"ef": 1000}),
        ),
    ),
    "opensearch": Plan(
        settings=lambda count: {"index_prefix": "bench_", "timeout": 600},
        create={"index_config": HNSW},
        steps=(
            Timed("force_merge_seconds", _force_merge),
            Phase("hnsw"),
            Phase("exact", {"exact": True}, 10),
        ),
    ),
    "mongodb": Plan(
        # Exact mode scans every matching document (FerretDB: seconds per query at 100k).
        settings=lambda count: {"search_mode": "exact"},
        create={"metadata_indexes": ["thread_id", "bucket"]},
        queries=5,
    ),
    "pinecone": Plan(
        # The emulator scans every record in Python per query: 10,000 by default.
        settings=lambda count: {"wait_timeout": 600},
        batch=1_000,
        count=10_000,
        steps=(
            Timed("wait_for_indexing_seconds", lambda store, index, dim: store.wait_for_indexing(index)),
            Phase("ann"),
        ),
    ),
}
#: The target an adapter name stands for: the first of these the kit can provision.
DEFAULT_TARGETS: dict[str, tuple[str, ...]] = {
    "sqlite": ("sqlite",),
    "lancedb": ("lancedb",),
    "pgvector": ("pgvector-url", "pgvector-native"),
    "qdrant": ("qdrant-edge",),
    "opensearch": ("opensearch-url", "opensearch-native"),
    "mongodb": ("mongodb-url", "mongodb-ferretdb"),
    "pinecone": ("pinecone-emulated",),
}


@dataclass(frozen=True)
class Data:
    """The records, the probe vectors, and for each case the ids of the exact top 10 of every probe and
    the number of records it matches."""

    vectors: npt.NDArray[np.float32]
    metadata: list[dict[str, Any]]
    ids: list[str]
    probes: npt.NDArray[np.float32]
    truth: dict[str, list[set[str]]]
    matching: dict[str, int]


def make_data(
    count: int, dimension: int, queries: int, vectors: str, cases: Mapping[str, Any] = CASES
) -> Data:
    """The records and probes (seeded), and the exact answers of ``cases`` the recall is measured against."""
    from mastra_memory.filters import matches, parse

    rng = np.random.default_rng(42)
    if vectors == "uniform":
        matrix = rng.standard_normal((count, dimension))
        probes = rng.standard_normal((queries, dimension))
    else:
        centres = rng.standard_normal((1000, dimension))
        matrix = centres[rng.integers(0, len(centres), count)] + rng.normal(
            scale=0.6, size=(count, dimension)
        )
        probes = centres[rng.integers(0, len(centres), queries)] + rng.normal(
            scale=0.6, size=(queries, dimension)
        )
    unit = (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)
    probes = (probes / np.linalg.norm(probes, axis=1, keepdims=True)).astype(np.float32)
    metadata = [
        {
            "thread_id": f"t{i % 1000}",
            "resource_id": f"r{i % 50}",
            "bucket": i % 100,
            "n": i % 1000,
            "role": "user",
        }
        for i in range(count)
    ]
    ids = [f"v{i:07d}" for i in range(count)]
    scores = probes @ unit.T  # cosine: every vector is a unit vector
    truth: dict[str, list[set[str]]] = {}
    matching: dict[str, int] = {}
    for label, flt in cases.items():
        node = parse(flt) if flt is not None else None
        mask = np.array([matches(node, m) for m in metadata])
        masked = np.where(mask, scores, -np.inf)
        best = np.argsort(-masked, axis=1)[:, :TOP_K]
        truth[label] = [{ids[i] for i in row if mask[i]} for row in best]
        matching[label] = int(mask.sum())
    return Data(unit, metadata, ids, probes, truth, matching)


def _percentile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _phase(
    store: Any,
    data: Data,
    phase: Phase,
    queries: int,
    cases: Mapping[str, Any] = CASES,
    index: str = INDEX,
) -> dict[str, dict[str, Any]]:
    probes = data.probes[: min(queries, phase.queries or queries)]
    rows: dict[str, dict[str, Any]] = {}
    for label, flt in cases.items():
        await store.query(index, probes[0], top_k=TOP_K, filter=flt, **phase.options)  # warm up
        latencies: list[float] = []
        found = wanted = 0
        complete = True  # every query returned min(10, matching records) hits
        expected = min(TOP_K, data.matching[label])
        for probe, truth in zip(probes, data.truth[label], strict=False):
            started = time.perf_counter()
            hits = await store.query(index, probe, top_k=TOP_K, filter=flt, **phase.options)
            latencies.append((time.perf_counter() - started) * 1000)
            found += len({h.id for h in hits} & truth)
            wanted += len(truth)
            complete = complete and len(hits) == expected
        latencies.sort()
        rows[label] = {
            "p50_ms": statistics.median(latencies),
            "p95_ms": _percentile(latencies, 0.95),
            "recall_at_10": found / wanted if wanted else 1.0,
            "complete": complete,
            "queries": len(latencies),
        }
    return rows


@contextlib.contextmanager
def provisioned(name: str, tmp: Path) -> Iterator[tuple[Any, dict[str, Any]]]:
    """The target ``name`` (or an adapter's default target) provisioned: its settings and facts."""
    from mastra_memory_conformance.registry import registered_targets
    from mastra_memory_conformance.targets import TargetUnavailable

    targets = registered_targets()
    candidates = DEFAULT_TARGETS.get(name, (name,))
    reasons = []
    for candidate in candidates:
        target = targets.get(candidate)
        if target is None:
            reasons.append(f"{candidate}: not registered (registered: {', '.join(targets)})")
            continue
        try:
            with target.provision(tmp / candidate) as settings:
                facts = {"target": target.name, "adapter": target.adapter, "kind": target.kind}
                yield settings, facts
                return
        except TargetUnavailable as exc:
            reasons.append(f"{candidate}: {exc.reason}")
    raise SystemExit(f"no target of {name!r} is available: " + "; ".join(reasons))


async def _measure(
    store: Any,
    index: str,
    data: Data,
    rows: npt.NDArray[np.intp],
    plan: Plan,
    create: Mapping[str, Any],
    queries: int,
    cases: Mapping[str, Any],
) -> dict[str, Any]:
    """Create ``index``, ingest the records at positions ``rows``, run the plan's steps and query phases."""
    dimension = data.vectors.shape[1]
    await store.create_index(index, dimension, "cosine", **create)
    report: dict[str, Any] = {}
    started = time.perf_counter()
    for start in range(0, len(rows), plan.batch):
        chunk = rows[start : start + plan.batch]
        await store.upsert(
            index,
            data.vectors[chunk],
            [data.metadata[i] for i in chunk],
            [data.ids[i] for i in chunk],
        )
    report["ingest_seconds"] = time.perf_counter() - started
    report["ingest_vectors_per_s"] = len(rows) / report["ingest_seconds"]
    report["steps"], report["phases"] = {}, {}
    for step in plan.steps:
        if isinstance(step, Timed):
            started = time.perf_counter()
            await step.run(store, index, dimension)
            report["steps"][step.key] = time.perf_counter() - started
        else:
            report["phases"][step.name] = await _phase(store, data, step, queries, cases, index)
    return report


def _scope_comparison(full: dict[str, Any], alone: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per query phase: the scope on the full index and on the user's own index, and the ratio."""
    rows = {}
    for phase, cases in full["phases"].items():
        on_full, on_alone = cases[SCOPE_LABEL], alone["phases"][phase][SCOPE_LABEL]
        rows[phase] = {
            "full": on_full,
            "alone": on_alone,
            "p50_ratio": on_full["p50_ms"] / on_alone["p50_ms"],
            "p95_ratio": on_full["p95_ms"] / on_alone["p95_ms"],
        }
    return rows


async def bench(
    name: str,
    tmp: Path,
    count: int | None,
    dimension: int,
    queries: int | None,
    vectors: str,
    alone: bool = False,
    only_scope: bool = False,
) -> dict[str, Any]:
    """Provision ``name``, ingest, run the adapter's steps and query phases; the measurements.

    ``alone``: then the scope case on a second index holding only that user's records (``ALONE``).
    """
    from mastra_memory import create_vector

    cases: dict[str, Any] = {} if only_scope else dict(CASES)
    if alone or only_scope:
        cases[SCOPE_LABEL] = SCOPE
    with provisioned(name, tmp) as (settings, facts):
        plan = PLANS[facts["adapter"]]
        count = count or plan.count
        queries = queries or plan.queries
        create = dict(plan.create)
        if alone or only_scope:
            declared = list(create.get("metadata_indexes", []))
            create["metadata_indexes"] = declared + [k for k in SCOPE_INDEXES if k not in declared]
        data = make_data(count, dimension, queries, vectors, cases)
        store = create_vector(facts["adapter"], **{**settings.vector, **plan.settings(count)})
        report: dict[str, Any] = {**facts, "count": count, "dimension": dimension, "vectors": vectors}
        report["started_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        created = [INDEX]
        try:
            everyone = np.arange(count)
            report |= await _measure(store, INDEX, data, everyone, plan, create, queries, cases)
            if alone:
                created.append(ALONE)
                own = np.array([i for i, m in enumerate(data.metadata) if m["resource_id"] == "r7"])
                scope = {SCOPE_LABEL: SCOPE}
                report["alone"] = {
                    "count": len(own),
                    **await _measure(store, ALONE, data, own, plan, create, queries, scope),
                }
                report["scope"] = _scope_comparison(report, report["alone"])
        finally:
            for index in created:
                with contextlib.suppress(Exception):
                    await store.delete_index(index)
            await store.close()
    return report


def show(report: dict[str, Any]) -> None:
    """Print ``report`` as a table."""
    r = report
    print(f"\n{r['target']} ({r['kind']}): {r['count']:,} {r['vectors']} vectors x {r['dimension']} dims")
    print(f"  ingest: {r['ingest_vectors_per_s']:,.0f} vectors/s ({r['ingest_seconds']:.1f} s)")
    for key, seconds in r["steps"].items():
        print(f"  {key.removesuffix('_seconds').replace('_', ' ')}: {seconds:.1f} s")
    for phase, rows in r["phases"].items():
        print(f"  {'top-10, ' + phase:<48} {'p50':>10} {'p95':>10} {'recall':>7} {'all hits':>8}")
        for label, row in rows.items():
            _row(label, row)
    if "alone" in r:
        a = r["alone"]
        print(
            f"\n  one user alone: {a['count']:,} vectors, ingest {a['ingest_vectors_per_s']:,.0f} vectors/s"
        )
        for key, seconds in a["steps"].items():
            print(f"    {key.removesuffix('_seconds').replace('_', ' ')}: {seconds:.1f} s")
        for phase, cmp in r["scope"].items():
            print(f"  {SCOPE_LABEL + ', ' + phase:<48} {'p50':>10} {'p95':>10} {'recall':>7} {'all hits':>8}")
            _row(f"on {r['count']:,}", cmp["full"])
            _row(f"on the user's {a['count']:,} alone", cmp["alone"])
            print(f"    {'ratio (full / alone)':<46} {cmp['p50_ratio']:>9.2f}x {cmp['p95_ratio']:>9.2f}x")


def _row(label: str, row: Mapping[str, Any]) -> None:
    hits = "always" if row["complete"] else "NO"
    print(
        f"    {label:<46} {row['p50_ms']:>8.2f}ms {row['p95_ms']:>8.2f}ms "
        f"{row['recall_at_10']:>7.3f} {hits:>8}"
    )


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run the benchmark, print and save the result."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--target", required=True, help="a conformance target, or an adapter name")
    parser.add_argument("--count", type=int, default=None, help="vectors (default 100,000; pinecone 10,000)")
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--queries", type=int, default=None, help="per case (default 50; mongodb 5)")
    parser.add_argument("--vectors", choices=("topics", "uniform"), default="topics")
    parser.add_argument("--out", type=Path, default=Path("reports"))
    parser.add_argument(
        "--alone",
        action="store_true",
        help="then the scope of one user (resource_id r7, 2 %%) on an index holding only that user's records",
    )
    parser.add_argument(
        "--cases",
        choices=("all", "scope"),
        default="all",
        help="scope: only the one-user scope case (the other filter cases are skipped)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mm-bench-vectors-") as tmp:
        report = asyncio.run(
            bench(
                args.target,
                Path(tmp),
                args.count,
                args.dimension,
                args.queries,
                args.vectors,
                alone=args.alone,
                only_scope=args.cases == "scope",
            )
        )
    show(report)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"bench-vectors-{report['target']}.json"
    path.write_text(json.dumps(report, indent=2))
    print(f"\nsaved {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
