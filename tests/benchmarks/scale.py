"""Issue 28's scale benchmark of the default store: a million vectors, one user or a thousand users.

Scenarios (``--scenario``):

* ``users``: ``--users`` resources (default 1,000) × ``rows / users`` messages each (1M in all), 20 threads
  per resource, the users' messages interleaved in the table as they would arrive. Scoped recall of one
  user is compared with a store holding only that user's messages (built beside it): the ratio is what
  "cost follows the user" means.
* ``one``: every row in one resource (50 threads): the whole matrix is that user's history.

Data: seeded, clustered unit vectors resembling embeddings (``--dim`` 384; 1,000 cluster centres, each
vector its centre plus Gaussian noise, cosine ≈ 0.6 between two vectors of one cluster), generated with
numpy and cached in ``--cache`` (``/tmp/mm-scale``) as ``.npy``, with the built SQLite file beside it, so
a second run measures without rebuilding. Every query is a stored vector plus noise (a paraphrase).

Measured at the vector-store level (``SQLiteVector.query`` with the filter ``Memory`` sends in each scope,
``top_k`` ``--k``), every figure in a fresh process: ingest msg/s per tenth (``upsert`` batches of 1,000,
the metadata indexes ``Memory`` asks for), the first query right after opening the file (cold start), then
p50/p95 per scope, the bare-numpy limit (one float32 matmul and a top-k over the same candidate rows,
already gathered in one contiguous matrix: best of 3 per query), recall@k against that exact top-k, and
resident memory (VmRSS after the queries minus before opening, per row). Cold starts apart: five fresh
processes per condition (files in the page cache or dropped from it; the store opened just before the query
or half a second before), each timing its first query. Every measuring process starts with the store's files
in the OS page cache (read just before), except the cold-disk starts, and imports from bytecode, as an
installed package does (``_installed_env``). Numbers only, never pass/fail;
saved as ``reports/bench/scale-<scenario>-<commit>.json`` with the commit and machine.

Usage::

    python tests/benchmarks/scale.py --scenario users            # 1,000 users × 1,000 messages
    python tests/benchmarks/scale.py --scenario one --rows 1m
    python tests/benchmarks/scale.py --scenario users --rows 20k --users 20   # a quick look
    nox -s "bench(store='sqlite')" -- --scale 1m                 # both scenarios, from the bench session
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[2]
INDEX = "memory_messages_384"
SEED = 28
CENTRES = 1_000
THREADS_PER_USER = 20
THREADS_ONE_USER = 50
BATCH = 1_000
QUERIES = 100


# --- data --------------------------------------------------------------------------------------------


def _unit(block: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    block /= np.linalg.norm(block, axis=1, keepdims=True)
    return block


def vectors(cache: Path, rows: int, dim: int) -> npt.NDArray[np.float32]:
    """``rows`` clustered unit vectors (seeded), generated once into ``cache`` and memory-mapped."""
    path = cache / f"vectors-{rows}-{dim}-{SEED}.npy"
    if not path.exists():
        rng = np.random.default_rng(SEED)
        centres = _unit(rng.standard_normal((CENTRES, dim), dtype=np.float32))
        tmp = path.with_suffix(".tmp.npy")
        out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(rows, dim))
        for start in range(0, rows, 100_000):
            n = min(100_000, rows - start)
            block = centres[rng.integers(0, CENTRES, n)] + rng.standard_normal((n, dim), dtype=np.float32) * (
                0.8 / np.sqrt(dim, dtype=np.float32)
            )
            out[start : start + n] = _unit(block)
        out.flush()
        del out
        tmp.rename(path)
    return np.load(path, mmap_mode="r")


def layout(scenario: str, rows: int, users: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(user, thread-within-user) of every row: users interleaved (row i belongs to user i % users)."""
    idx = np.arange(rows, dtype=np.int64)
    if scenario == "one":
        return np.zeros(rows, dtype=np.int64), idx % THREADS_ONE_USER
    user = idx % users
    return user, (idx // users) % THREADS_PER_USER


def _metadata(user: int, thread: int, row: int) -> dict[str, Any]:
    return {
        "resource_id": f"user-{user:05d}",
        "thread_id": f"user-{user:05d}-t{thread:02d}",
        "message_id": f"m{row:08d}",
        "role": "user" if row % 2 == 0 else "assistant",
        "created_at": 1_700_000_000_000 + row * 1_000,
    }


def queries(
    data: npt.NDArray[np.float32], rows: npt.NDArray[np.int64], count: int
) -> npt.NDArray[np.float32]:
    """``count`` paraphrases: stored vectors of ``rows`` (seeded choice) plus noise."""
    rng = np.random.default_rng(SEED + 1)
    sources = rng.choice(rows, size=count, replace=False)
    dim = data.shape[1]
    q = np.asarray(data[np.sort(sources)], dtype=np.float32)
    q += rng.standard_normal(q.shape, dtype=np.float32) * (0.5 / np.sqrt(dim, dtype=np.float32))
    return _unit(q)


# --- building the store ------------------------------------------------------------------------------


async def _ingest(
    path: Path, data: npt.NDArray[np.float32], user: Any, thread: Any, rows: Sequence[int]
) -> list[float]:
    """Upsert ``rows`` in batches; msg/s of each tenth."""
    from mastra_memory.stores.sqlite.store import SQLiteVector

    store = SQLiteVector(str(path))
    try:
        await store.create_index(
            INDEX, data.shape[1], "cosine", metadata_indexes=["thread_id", "resource_id", "message_id"]
        )
        tenth = max(1, len(rows) // 10)
        batch = min(BATCH, tenth)  # a small run still reports ten tenths
        rates: list[float] = []
        started, done_in_tenth = time.perf_counter(), 0
        for start in range(0, len(rows), batch):
            part = rows[start : start + batch]
            await store.upsert(
                INDEX,
                np.asarray(data[part], dtype=np.float32),
                [_metadata(int(user[r]), int(thread[r]), int(r)) for r in part],
                [f"m{int(r):08d}" for r in part],
            )
            done_in_tenth += len(part)
            if done_in_tenth >= tenth or start + batch >= len(rows):
                rates.append(done_in_tenth / (time.perf_counter() - started))
                started, done_in_tenth = time.perf_counter(), 0
        return rates
    finally:
        await store.close()


def build(cache: Path, scenario: str, rows: int, users: int, dim: int) -> dict[str, Any]:
    """The scenario's SQLite file (and, for ``users``, the file holding one user alone), built once."""
    data = vectors(cache, rows, dim)
    user, thread = layout(scenario, rows, users)
    name = f"{scenario}-{rows}-{users}-{dim}"
    meta_path = cache / f"{name}.build.json"
    if meta_path.exists():
        return dict(json.loads(meta_path.read_text()))
    db = cache / f"{name}.db"
    for stale in cache.glob(f"{name}*.db*"):
        stale.unlink()
    everything = np.arange(rows, dtype=np.int64)
    t0 = time.perf_counter()
    rates = asyncio.run(_ingest(db, data, user, thread, everything.tolist()))
    info: dict[str, Any] = {
        "db": str(db),
        "ingest_seconds": time.perf_counter() - t0,
        "ingest_tenths_msg_s": rates,
        "disk_bytes": db.stat().st_size,
    }
    if scenario == "users":
        alone = cache / f"{name}.user0.db"
        mine = np.flatnonzero(user == 0)
        asyncio.run(_ingest(alone, data, user, thread, mine.tolist()))
        info["alone_db"] = str(alone)
    meta_path.write_text(json.dumps(info))
    return info


# --- measuring ---------------------------------------------------------------------------------------


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _anon_mb() -> float:
    """The process's private resident memory (RssAnon): VmRSS also counts pages of memory-mapped files
    (the graph's vectors), which are the page cache, shared between processes and reclaimable."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _pct(samples: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples), q))


def exact_top(
    data: npt.NDArray[np.float32], rows: npt.NDArray[np.int64], q: npt.NDArray[np.float32], k: int
) -> tuple[set[int], float]:
    """The exact top-k rows (by cosine: the vectors are unit) and the best of 3 timings of the bare pass
    over the candidate rows already gathered into one contiguous matrix (``data`` here)."""
    best = float("inf")
    top: npt.NDArray[np.int64] = np.empty(0, dtype=np.int64)
    for _ in range(3):
        t = time.perf_counter()
        scores = data @ q
        top = np.argpartition(-scores, k)[:k] if scores.size > k else np.arange(scores.size)
        best = min(best, time.perf_counter() - t)
    return {int(rows[i]) for i in top}, best * 1e3


def _store(db: str, scope_rows: int, ann: bool) -> Any:
    """The store as measured: approximate route on (graph built beforehand, no background build while
    measuring) or off (exact, as before issue 28's approximate index)."""
    from mastra_memory.stores.sqlite.settings import SQLiteSettings
    from mastra_memory.stores.sqlite.store import SQLiteVector

    settings = (
        SQLiteSettings(url=db, ann_background=False) if ann else SQLiteSettings(url=db, ann_threshold=10**12)
    )
    return SQLiteVector(settings) if scope_rows < 0 else SQLiteVector(settings, scope_rows=scope_rows)


async def _measure(
    db: str,
    scenario: str,
    rows: int,
    users: int,
    dim: int,
    cache: Path,
    k: int,
    count: int,
    scope_rows: int,
    ann: bool,
) -> dict[str, Any]:

    rss0 = _rss_mb()
    data = vectors(cache, rows, dim)
    user, thread = layout(scenario, rows, users)
    target = 0
    mine = np.flatnonzero(user == target)
    threads = thread[mine]
    qs = queries(data, mine, count)
    # the exact answers and the numpy limit: the user's rows gathered once, contiguous, as a bare pass
    user_matrix = np.ascontiguousarray(data[mine])
    thread_of_q = np.random.default_rng(SEED + 2).choice(np.unique(threads), count)
    created = np.asarray([_metadata(0, 0, int(r))["created_at"] for r in mine], dtype=np.int64)
    date_rng = np.random.default_rng(SEED + 3)
    rss_before_open = _rss_mb()
    anon_before_open = _anon_mb()
    store = _store(db, scope_rows, ann)  # the first query follows at once (no time to open in the background)
    out: dict[str, Any] = {}
    try:
        resource = {"resource_id": f"user-{target:05d}"}
        t = time.perf_counter()
        await store.query(INDEX, qs[0].tolist(), top_k=k, filter=resource)
        out["cold_first_query_ms"] = (time.perf_counter() - t) * 1e3
        out["rss_after_cold_mb"] = _rss_mb() - rss_before_open
        out["anon_after_cold_mb"] = _anon_mb() - anon_before_open
        # what the first query read: the whole index, or that user's scope alone (a private look)
        out["cold_loaded_whole_index"] = INDEX in store._snapshots
        for scope in ("resource", "thread", "dates"):
            lat, limit, hits = [], [], []
            filters: list[tuple[list[float], dict[str, Any]]] = []
            for i, q in enumerate(qs):
                if scope == "resource":
                    flt: dict[str, Any] = resource
                    cand = mine
                    cand_matrix = user_matrix
                elif scope == "dates":
                    # The user's messages in a window holding half of them (a date-filtered recall).
                    lo = int(created[int(date_rng.integers(0, mine.size // 2))])
                    hi = int(created[min(mine.size - 1, int(np.searchsorted(created, lo)) + mine.size // 2)])
                    flt = {**resource, "created_at": {"$gte": lo, "$lt": hi}}
                    sel = np.flatnonzero((created >= lo) & (created < hi))
                    cand, cand_matrix = mine[sel], user_matrix[sel]
                else:
                    th = int(thread_of_q[i])
                    flt = {"thread_id": f"user-{target:05d}-t{th:02d}"}
                    sel = np.flatnonzero(threads == th)
                    cand, cand_matrix = mine[sel], user_matrix[sel]
                vec = q.tolist()
                t = time.perf_counter()
                got = await store.query(INDEX, vec, top_k=k, filter=flt)
                lat.append((time.perf_counter() - t) * 1e3)
                filters.append((vec, flt))
                truth, bare = exact_top(cand_matrix, cand, q, k)
                limit.append(bare)
                found = {int(r.id[1:]) for r in got}
                hits.append(len(found & truth) / max(1, len(truth)))
            # The same queries again, back to back: the first pass pays for pages of the memory-mapped
            # graph and of the file that the page cache or this process has not mapped yet (and runs
            # between the harness's own passes over the user's rows, which evict the CPU caches).
            again = []
            for vec, flt in filters:
                t = time.perf_counter()
                await store.query(INDEX, vec, top_k=k, filter=flt)
                again.append((time.perf_counter() - t) * 1e3)
            out[scope] = {
                "p50_ms": _pct(lat, 50),
                "p95_ms": _pct(lat, 95),
                "second_pass_p50_ms": _pct(again, 50),
                "second_pass_p95_ms": _pct(again, 95),
                "numpy_limit_p50_ms": _pct(limit, 50),
                "ratio_to_numpy_p50": _pct(lat, 50) / max(1e-9, _pct(limit, 50)),
                f"recall_at_{k}": float(np.mean(hits)),
            }
        # The harness's last candidate matrix (half the user's rows for dates) is not the store's memory.
        cand = cand_matrix = user_matrix[:0]
        out["rss_store_mb"] = _rss_mb() - rss_before_open
        out["rss_per_row_bytes"] = out["rss_store_mb"] * 2**20 / rows
        out["anon_store_mb"] = _anon_mb() - anon_before_open
        out["anon_per_row_bytes"] = out["anon_store_mb"] * 2**20 / rows
        out["peak_rss_mb"] = resource_peak_mb()
        out["rss_process_start_mb"] = rss0
    finally:
        await store.close()
    return out


def resource_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _ensure_indexes(db: str, dim: int) -> float:
    from mastra_memory.stores.sqlite.store import SQLiteVector

    async def ensure() -> None:
        store = SQLiteVector(db)
        try:
            await store.create_index(
                INDEX, dim, "cosine", metadata_indexes=["thread_id", "resource_id", "message_id"]
            )
        finally:
            await store.close()

    t = time.perf_counter()
    asyncio.run(ensure())
    return time.perf_counter() - t


def _build_graph(db: str) -> float:
    """Build (or bring up to date) the approximate index of the file, as ``build_ann_index`` does: seconds;
    nothing to do when a persisted graph already holds every row."""
    from mastra_memory.stores.sqlite.store import SQLiteVector

    async def build() -> None:
        store = SQLiteVector(db)
        try:
            await store.build_ann_index(INDEX)
        finally:
            await store.close()

    t = time.perf_counter()
    asyncio.run(build())
    return time.perf_counter() - t


def _installed_env(cache: Path) -> dict[str, str]:
    """The environment of a measuring interpreter: imports as an installed package runs them, from bytecode
    (pip compiles it at install). With ``PYTHONDONTWRITEBYTECODE`` set (as on the machine the figures in
    docs/performance.md come from) every import compiles its source again: faiss took 115 ms, not 27."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(cache / "pycache")
    return env


def _child(args: argparse.Namespace, db: str) -> dict[str, Any]:
    """Run one measurement in a fresh interpreter (cold start and RSS are that process's own)."""
    cmd = [
        sys.executable, __file__, "--worker", db, "--scenario", args.scenario, "--rows", str(args.rows),
        "--users", str(args.users), "--dim", str(args.dim), "--cache", str(args.cache), "--k", str(args.k),
        "--queries", str(args.queries), "--scope-rows", str(args.scope_rows), "--ann", args.ann,
    ]  # fmt: skip
    done = subprocess.run(
        cmd, capture_output=True, text=True, timeout=args.timeout, check=False, env=_installed_env(args.cache)
    )
    if done.returncode != 0:
        raise RuntimeError(f"measurement failed: {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


# --- cold starts -------------------------------------------------------------------------------------

COLD_RUNS = 5


def _files_of(db: str) -> list[Path]:
    """The store's files: the database, its journal files, and the persisted graphs beside it."""
    found = [Path(db + suffix) for suffix in ("", "-wal", "-shm") if Path(db + suffix).exists()]
    graphs = Path(db + ".ann")
    return found + (sorted(f for f in graphs.rglob("*") if f.is_file()) if graphs.is_dir() else [])


def _page_cache(files: Sequence[Path], keep: bool) -> None:
    """Read ``files`` into the OS page cache (``keep``: as a server that has been running holds them), or
    drop their pages from it (as after a reboot; pages another process maps stay)."""
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            if keep:
                while os.read(fd, 1 << 24):
                    pass
            else:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


async def _cold_worker(db: str, gap: float, dim: int, seed: int) -> dict[str, Any]:
    """One process start: import the store, open it, wait ``gap`` seconds, one resource-scoped query."""
    started = time.perf_counter()
    from mastra_memory.stores.sqlite.settings import SQLiteSettings
    from mastra_memory.stores.sqlite.store import SQLiteVector

    imported = time.perf_counter()
    rng = np.random.default_rng(seed)
    query = _unit(rng.standard_normal((1, dim), dtype=np.float32))[0].tolist()
    store = SQLiteVector(SQLiteSettings(url=db, ann_background=False))
    try:
        if gap:
            await asyncio.sleep(gap)
        t = time.perf_counter()
        await store.query(INDEX, query, top_k=10, filter={"resource_id": "user-00000"})
        first = time.perf_counter() - t
    finally:
        await store.close()
    return {"import_ms": (imported - started) * 1e3, "first_query_ms": first * 1e3}


def cold_starts(args: argparse.Namespace, db: str) -> dict[str, Any]:
    """The first resource-scoped query of a fresh process, ``COLD_RUNS`` times in each of three conditions:
    the store's files in the OS page cache and the query right after opening the store; the same with the
    store opened half a second before (a service that started earlier: the graph opens in the background);
    the files' pages dropped first (a cold disk), query right after opening."""
    files = _files_of(db)
    out: dict[str, Any] = {}
    for label, keep, gap in (("page_cache", True, 0.0), ("page_cache_opened_0_5s_before", True, 0.5),
                             ("cold_disk", False, 0.0)):  # fmt: skip
        runs = []
        for i in range(COLD_RUNS):
            _page_cache(files, keep)
            cmd = [sys.executable, __file__, "--cold-worker", db, "--gap", str(gap), "--dim", str(args.dim),
                   "--seed", str(SEED + 10 + i)]  # fmt: skip
            done = subprocess.run(
                cmd, capture_output=True, text=True, timeout=600, check=False, env=_installed_env(args.cache)
            )
            if done.returncode != 0:
                raise RuntimeError(f"cold start failed: {done.stderr[-2000:]}")
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        firsts = [r["first_query_ms"] for r in runs]
        out[label] = {"first_query_p50_ms": _pct(firsts, 50), "first_query_ms": firsts,
                      "import_p50_ms": _pct([r["import_ms"] for r in runs], 50)}  # fmt: skip
    return out


def _rows(text: str) -> int:
    text = text.lower().replace(",", "").replace("_", "")
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * scale)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Build (once) and measure one scenario; the result saved and returned."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from memory_workload import machine_info

    args.cache.mkdir(parents=True, exist_ok=True)
    info = build(args.cache, args.scenario, args.rows, args.users, args.dim)
    result: dict[str, Any] = {"scenario": args.scenario, "rows": args.rows, "users": args.users, "k": args.k}
    result["build"] = info
    # A file built by an older version lacks indexes this one adds: create_index adds them (idempotent,
    # as Memory calls it), timed apart from the cold start.
    result["index_upgrade_s"] = [_ensure_indexes(info["db"], args.dim)]
    if "alone_db" in info:
        result["index_upgrade_s"].append(_ensure_indexes(info["alone_db"], args.dim))
    if args.ann == "on":
        result["ann_build_s"] = [_build_graph(info["db"])]
        if "alone_db" in info:
            result["ann_build_s"].append(_build_graph(info["alone_db"]))
    tenths = info["ingest_tenths_msg_s"]
    result["ingest_first_last_tenth_msg_s"] = [tenths[0], tenths[-1]]
    # Measured as a restarted service finds its files: in the OS page cache (a cold disk: cold_starts).
    _page_cache(_files_of(info["db"]), keep=True)
    result["store"] = _child(args, info["db"])
    if args.ann == "on":
        result["cold_starts"] = cold_starts(args, info["db"])
    if "alone_db" in info:
        _page_cache(_files_of(info["alone_db"]), keep=True)
        result["alone"] = _child(args, info["alone_db"])
        for scope in ("resource", "thread", "dates"):
            result[f"{scope}_ratio_to_alone_p50"] = (
                result["store"][scope]["p50_ms"] / result["alone"][scope]["p50_ms"]
            )
    machine = machine_info()
    result["machine"] = machine
    result["scope_rows"] = args.scope_rows
    result["ann"] = args.ann
    variant = ("" if args.scope_rows < 0 else f"-scope{args.scope_rows}") + (
        "-exact" if args.ann == "off" else ""
    )
    commit = machine["commit"] + ("-dirty" if machine["dirty"] else "")
    out = args.out / f"scale-{args.scenario}-{args.rows}{variant}-{commit}.json"
    args.out.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=2))
    print(f"[scale] saved {out}", flush=True)
    return result


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", choices=["users", "one"], default="users")
    p.add_argument("--rows", type=_rows, default=1_000_000, help="e.g. 1m, 100k")
    p.add_argument("--users", type=int, default=1_000)
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--queries", type=int, default=QUERIES)
    p.add_argument("--cache", type=Path, default=Path("/tmp/mm-scale"))
    p.add_argument("--out", type=Path, default=ROOT / "reports" / "bench")
    p.add_argument("--timeout", type=float, default=3600)
    p.add_argument(
        "--scope-rows",
        type=int,
        default=-1,
        help="the store's scope budget (0: the whole index always, as before issue 28; default: the store's)",
    )
    p.add_argument(
        "--ann",
        choices=["on", "off"],
        default="on",
        help="on: the approximate index (built, or extended, before measuring); off: exact search only",
    )
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--cold-worker", help=argparse.SUPPRESS)
    p.add_argument("--gap", type=float, default=0.0, help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=SEED, help=argparse.SUPPRESS)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.cold_worker:
        print(json.dumps(asyncio.run(_cold_worker(args.cold_worker, args.gap, args.dim, args.seed))))
        return 0
    if args.worker:
        result = asyncio.run(
            _measure(
                args.worker,
                args.scenario,
                args.rows,
                args.users,
                args.dim,
                args.cache,
                args.k,
                args.queries,
                args.scope_rows,
                args.ann == "on",
            )
        )
        print(json.dumps(result))
        return 0
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
