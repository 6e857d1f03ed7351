"""The Mastra memory workload of issue 19, run through the public ``Memory`` API for any store.

Workload (deterministic, offline): ``N`` messages in 50 threads of one resource, saved 20 at a time (one
thread per save, threads in turn), embedded by the ``hash/384`` embedder (BLAKE2b hashing, so the model
costs nothing), then 100 timed recalls with ``topK 3``, ``messageRange 2`` in scope ``resource`` and 100
in scope ``thread``; then 20 recalls each right after a save of one agent turn (2 messages) and 20
without, interleaved. Every query is a paraphrase (a subset of the words, reordered) of one stored
"source" message.

Reported per store and size: ingest msg/s (overall, first tenth, last tenth), recall p50/p95 per scope,
recall right after a save against without, recall@3 against exact search and how often the source message
is among the hits, the bare-numpy limit of the same queries (hash embedding + one matmul + top-k over the
same vectors and candidate rows, best of 3 per query, in the same run) and each figure's ratio to it, disk
per message and peak RSS. Each store and size runs in a fresh subprocess, so the peak RSS is that run's
own (a server's memory, for pgvector, is not included). Numbers only: nothing here is a pass/fail
assertion.

When Mastra is run too (``--stores mastra``; the ``nox -s bench`` session does), ``node`` and
``tests/benchmarks/mastra/node_modules`` (``npm ci`` there) are needed: Mastra itself (``@mastra/memory``
+ ``@mastra/libsql``) runs the same workload with the same vectors (passed as a file) for the side-by-side
column. Without them, and in any table with no Mastra run, the figures measured in issue 19 are shown
instead, labelled as a reference.

Stores are the conformance kit's targets (``registry.registered_targets()``), so server-backed stores
reuse the kit's provisioners: ``sqlite`` (default), ``lancedb``, ``qdrant-edge``, ``qdrant-local``
(``qdrant`` means both), ``pgvector`` (``pgvector-native``: a private PostgreSQL on loopback),
``opensearch`` (``opensearch-native``), ``mongodb`` (``mongodb-ferretdb``: FerretDB, a SQLite-backed
wire-protocol server, so its figures are FerretDB's, not MongoDB's), or any other registered target name.
A vector-only target gets the embedded SQLite storage beside it.

Usage::

    python tests/benchmarks/memory_workload.py --stores sqlite,lancedb,qdrant,pgvector,mastra --sizes 1k,10k
    python tests/benchmarks/memory_workload.py --compare reports/bench/sqlite-A.json sqlite-B.json
    python tests/benchmarks/memory_workload.py --table reports/bench/*.json   # one table from saved runs

Results print as one table and are saved to ``reports/bench/<store>-<commit>.json`` with the git commit
and machine facts (load average included: the machine may be shared).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import platform
import random
import resource
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
MASTRA_DIR = Path(__file__).resolve().parent / "mastra"

DIMENSION = 384
THREADS = 50
SAVE_BATCH = 20
TOP_K = 3
MESSAGE_RANGE = 2
LAST_MESSAGES = 10
RECALLS = 100
SAVE_PAIRS = 20
LIMIT_REPEATS = 3
RESOURCE = "bench-user"
SEED = 19

#: Mastra + LibSQL as measured in issue 19 on this kind of machine (Mastra TS 1.71, same workload): the
#: reference column when Mastra cannot be run here. Keys as in :func:`summary_rows`.
MASTRA_REFERENCE: dict[int, dict[str, float]] = {
    1_000: {"ingest": 60.0, "recall_resource_p50": 12.3, "disk_per_msg_kb": 85.0},
    10_000: {
        "ingest": 57.0,
        "recall_resource_p50": 14.2,
        "recall_thread_p50": 31.8,
        "disk_per_msg_kb": 85.0,
    },
}

#: ``--stores`` shorthands: a name that is not a target name expands to these targets.
MASTRA = "mastra-libsql"
ALIASES = {
    "mastra": (MASTRA,),
    "qdrant": ("qdrant-edge", "qdrant-local"),
    "pgvector": ("pgvector-native",),
    "opensearch": ("opensearch-native",),
    # FerretDB, a SQLite-backed wire-protocol server: its figures describe FerretDB, not MongoDB.
    "mongodb": ("mongodb-ferretdb",),
}


# --- the workload ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Message:
    """One message of the workload."""

    id: str
    thread_id: str
    role: str
    content: str
    created_at: str


@dataclass(frozen=True)
class Query:
    """One recall: the thread it is made from, its text and the message it paraphrases."""

    thread_id: str
    text: str
    source: int  # index into the workload's messages


@dataclass(frozen=True)
class Workload:
    """Everything a run needs, derived from ``size`` and ``SEED`` alone."""

    messages: list[Message]
    resource_queries: list[Query]
    thread_queries: list[Query]
    # (recall before the save, the 2 messages saved, recall after the save), SAVE_PAIRS of them
    save_pairs: list[tuple[Query, list[Message], Query]]


def _vocabulary(rng: random.Random, count: int) -> list[str]:
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    words: set[str] = set()
    while len(words) < count:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def _timestamp(i: int) -> str:
    # One message a second from a fixed instant: deterministic, strictly increasing.
    seconds = 1_767_225_600 + i  # 2026-01-01T00:00:00Z
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(seconds))


def build_workload(size: int, recalls: int = RECALLS) -> Workload:
    """The messages and queries for ``size`` messages: the same on every machine and Python 3.11+."""
    rng = random.Random(SEED)
    vocab = _vocabulary(rng, 4_000)
    topics = [rng.sample(vocab, 120) for _ in range(THREADS)]

    def text(thread: int) -> str:
        n = rng.randint(12, 28)
        # Half the words from the thread's topic, half from everywhere: threads resemble each other
        # only loosely, and a paraphrase still points at its own message.
        return " ".join(
            rng.choice(topics[thread]) if rng.random() < 0.5 else rng.choice(vocab) for _ in range(n)
        )

    messages = []
    for i in range(size):
        thread = (i // SAVE_BATCH) % THREADS
        messages.append(
            Message(
                id=f"msg-{i:07d}",
                thread_id=f"thread-{thread:02d}",
                role="user" if i % 2 == 0 else "assistant",
                content=text(thread),
                created_at=_timestamp(i),
            )
        )

    def paraphrase(source: int) -> str:
        words = messages[source].content.split()
        kept = rng.sample(words, max(4, round(len(words) * 0.7)))
        return " ".join(kept)

    def query_from(source: int) -> Query:
        return Query(messages[source].thread_id, paraphrase(source), source)

    resource_queries = []
    for _ in range(recalls):
        source = rng.randrange(size)
        # The agent asks from some thread; scope resource searches all 50.
        asked_in = f"thread-{rng.randrange(min(THREADS, max(1, size // SAVE_BATCH))):02d}"
        resource_queries.append(Query(asked_in, paraphrase(source), source))
    thread_queries = [query_from(rng.randrange(size)) for _ in range(recalls)]
    pairs = []
    for j in range(SAVE_PAIRS):
        # An agent turn: recall in a thread, save the turn there, recall in the same thread again.
        without = query_from(rng.randrange(size))
        thread = int(without.thread_id[-2:])
        turn = [
            Message(
                id=f"turn-{j:03d}-{k}",
                thread_id=without.thread_id,
                role=("user", "assistant")[k],
                content=text(thread),
                created_at=_timestamp(size + 2 * j + k),
            )
            for k in range(2)
        ]
        pairs.append((without, turn, Query(without.thread_id, paraphrase(rng.randrange(size)), -1)))
    return Workload(messages, resource_queries, thread_queries, pairs)


# --- measuring ---------------------------------------------------------------------------------------


def _percentile(samples: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples), q)) if samples else float("nan")


def _latency(samples_ms: Sequence[float]) -> dict[str, float]:
    return {
        "p50_ms": _percentile(samples_ms, 50),
        "p95_ms": _percentile(samples_ms, 95),
        "n": len(samples_ms),
    }


def _dir_bytes(path: Path) -> int:
    """Bytes allocated on disk under ``path`` (blocks, not apparent sizes: sparse files count as written)."""
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
    return total


def _pg_database_bytes(url: str) -> int | None:
    """``pg_database_size`` of the database at ``url`` (pgvector's disk), or None without psycopg."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover - the pgvector extra brings it
        return None
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0]) if row else None


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


class Exact:
    """The bare-numpy limit: the same vectors, grouped by thread, searched by one matmul + argpartition."""

    def __init__(self, messages: Sequence[Message]) -> None:
        from mastra_memory.embedders.hash import HashEmbedder

        self.embedder = HashEmbedder(DIMENSION)
        # Rows sorted by thread, so each thread's rows are one slice (a view, not a copy) and the harness's
        # own memory stays one float32 matrix: peak RSS should show the store, not the harness.
        order = sorted(range(len(messages)), key=lambda i: (messages[i].thread_id, i))
        self.matrix = np.empty((len(messages), DIMENSION), dtype=np.float32)
        started = time.perf_counter()
        for row, i in enumerate(order):
            self.matrix[row] = self.embedder.embed_one(messages[i].content)
        self.build_s = time.perf_counter() - started  # hash-embedding every message: ingest's floor
        self.ids = np.array([messages[i].id for i in order])
        bounds: dict[str, list[int]] = {}
        for row, i in enumerate(order):
            bounds.setdefault(messages[i].thread_id, [row, row])[1] = row + 1
        self.thread_rows = {t: np.arange(a, b) for t, (a, b) in bounds.items()}
        self.thread_matrix = {t: self.matrix[a:b] for t, (a, b) in bounds.items()}

    def top_k(self, text: str, thread_id: str | None) -> tuple[list[str], float]:
        """The exact top-k ids for ``text`` (scope thread when ``thread_id``) and the ms it took, embedding
        included (the store pays it too): the best of ``LIMIT_REPEATS`` runs, since a limit is a floor and
        one run on a loaded machine mostly measures BLAS threads waking up."""
        best_ms = math.inf
        for _ in range(LIMIT_REPEATS):
            started = time.perf_counter()
            q = self.embedder.embed_one(text).astype(np.float32)
            if thread_id is None:
                rows, matrix = None, self.matrix
            else:
                rows, matrix = self.thread_rows[thread_id], self.thread_matrix[thread_id]
            scores = matrix @ q
            k = min(TOP_K, len(scores))
            best = np.argpartition(-scores, k - 1)[:k]
            best = best[np.argsort(-scores[best])]
            best_ms = min(best_ms, (time.perf_counter() - started) * 1000)
        picked = best if rows is None else rows[best]
        return [str(i) for i in self.ids[picked]], best_ms


@contextlib.contextmanager
def _provision(target_name: str, tmp: Path) -> Iterator[tuple[Any, Any, dict[str, Any]]]:
    """(storage, vector, facts) for a registered conformance target, torn down on exit."""
    from mastra_memory import create_storage, create_vector
    from mastra_memory_conformance.registry import registered_targets

    targets = registered_targets()
    if target_name not in targets:
        raise SystemExit(f"unknown store {target_name!r}; registered targets: {', '.join(targets)}")
    target = targets[target_name]
    with target.provision(tmp) as settings:
        vector = create_vector(target.adapter, **settings.vector)
        if settings.storage is not None:
            storage = create_storage(target.adapter, **settings.storage)
        else:
            storage = create_storage("sqlite", url=str(tmp / "storage.db"))
        facts: dict[str, Any] = {"target": target.name, "adapter": target.adapter, "kind": target.kind}
        facts["url"] = settings.vector.get("url") if target.adapter == "pgvector" else None
        yield storage, vector, facts


def _message_input(m: Message) -> dict[str, Any]:
    """What ``Memory.save_messages`` takes for a workload message (all of the one resource)."""
    return {
        "id": m.id,
        "thread_id": m.thread_id,
        "resource_id": RESOURCE,
        "role": m.role,
        "content": m.content,
        "created_at": m.created_at,
    }


async def run_workload(target_name: str, size: int, recalls: int = RECALLS) -> dict[str, Any]:
    """Run the workload once on ``target_name`` with ``size`` messages; the measurements as a dict."""
    from mastra_memory import Memory

    work = build_workload(size, recalls)
    exact = Exact(work.messages)
    base_rss = _peak_rss_mb()
    with (
        tempfile.TemporaryDirectory(prefix="mm-bench-") as tmp_name,
        _provision(target_name, Path(tmp_name)) as (storage, vector, facts),
    ):
        tmp = Path(tmp_name)
        pg_url = facts.pop("url")
        disk_before = _pg_database_bytes(pg_url) if pg_url else _dir_bytes(tmp)
        # Mode vector: the workload measures vector recall against exact search (issue 19's figures);
        # mode auto (the default) goes hybrid where a store has a lexical index (recall_mode_cost.py).
        recall_cfg = {"topK": TOP_K, "messageRange": MESSAGE_RANGE, "scope": "resource", "mode": "vector"}
        memory = Memory(
            storage=storage,
            vector=vector,
            embedder=f"hash/{DIMENSION}",
            options={"lastMessages": LAST_MESSAGES, "semanticRecall": recall_cfg},
        )
        thread_scope = {"semanticRecall": {**recall_cfg, "scope": "thread"}}
        try:
            for t in range(THREADS):
                await memory.create_thread(resource_id=RESOURCE, thread_id=f"thread-{t:02d}")
            saves: list[tuple[int, float]] = []
            for start in range(0, size, SAVE_BATCH):
                batch = [_message_input(m) for m in work.messages[start : start + SAVE_BATCH]]
                t0 = time.perf_counter()
                await memory.save_messages(batch)
                saves.append((len(batch), time.perf_counter() - t0))
                if (start + SAVE_BATCH) % max(SAVE_BATCH, size // 10) == 0:
                    # Progress on stderr, so a run stopped by --timeout shows how far its ingest got.
                    done_n, spent = sum(n for n, _ in saves), sum(s for _, s in saves)
                    print(
                        f"[bench] {target_name}: {done_n:,} saved in {spent:.0f} s",
                        file=sys.stderr,
                        flush=True,
                    )
            ingest = _ingest_rates(saves, size)

            async def recall(q: Query, scope_thread: bool) -> tuple[list[str], float]:
                t0 = time.perf_counter()
                result = await memory.recall(
                    thread_id=q.thread_id,
                    resource_id=RESOURCE,
                    vector_search_string=q.text,
                    thread_config=thread_scope if scope_thread else None,
                )
                elapsed = (time.perf_counter() - t0) * 1000
                if not result.hits:  # a recall that finds nothing measures nothing
                    raise RuntimeError(f"{target_name}: recall for {q.text!r} returned no hits")
                return [h.message_id for h in result.hits], elapsed

            first_ms = (await recall(work.resource_queries[0], False))[1]  # cold: caches fill here
            measured: dict[str, list[tuple[list[str], float]]] = {}
            for scope, queries in (("resource", work.resource_queries), ("thread", work.thread_queries)):
                measured[scope] = [await recall(q, scope == "thread") for q in queries]
            without, after = [], []
            for before_q, turn, after_q in work.save_pairs:
                without.append((await recall(before_q, False))[1])
                await memory.save_messages([_message_input(m) for m in turn])
                after.append((await recall(after_q, False))[1])
            after_save: dict[str, Any] = {"without": _latency(without), "after_save": _latency(after)}
            # The exact searches run after every timed recall, not between them: streaming the harness's
            # own matrix through the caches between two recalls would slow the store's next one.
            scopes = _scope_figures(work, exact, measured)
            after_save["ratio_p50"] = after_save["after_save"]["p50_ms"] / after_save["without"]["p50_ms"]
        finally:
            await memory.close()
        disk_after = _pg_database_bytes(pg_url) if pg_url else _dir_bytes(tmp)
    matrix_mb = size * DIMENSION * 4 / 2**20
    disk_bytes = (disk_after or 0) - (disk_before or 0)
    return {
        "store": target_name,
        **facts,
        "size": size,
        "recalls": recalls,
        "ingest": {**ingest, "numpy_limit_msg_per_s": size / exact.build_s},
        "first_recall_ms": first_ms,
        "scopes": scopes,
        "after_save": after_save,
        "disk_bytes": disk_bytes,
        "disk_per_msg_kb": disk_bytes / (size + 2 * SAVE_PAIRS) / 1024,
        "peak_rss_mb": _peak_rss_mb(),
        "rss_before_ingest_mb": base_rss,
        "float32_matrix_mb": matrix_mb,
    }


def _scope_figures(
    work: Workload, exact: Exact, measured: dict[str, list[tuple[list[str], float]]]
) -> dict[str, Any]:
    """Latency, the numpy limit and its ratio, recall@k and source hits per scope, from each recall's
    (hit ids, ms) in the order of the workload's queries."""
    scopes: dict[str, Any] = {}
    for scope, queries in (("resource", work.resource_queries), ("thread", work.thread_queries)):
        overlap, source_hits, store_ms, numpy_ms = [], 0, [], []
        for q, (hits, ms) in zip(queries, measured[scope], strict=True):
            best, np_ms = exact.top_k(q.text, q.thread_id if scope == "thread" else None)
            store_ms.append(ms)
            numpy_ms.append(np_ms)
            overlap.append(len(set(hits[:TOP_K]) & set(best)) / len(best))
            source_hits += work.messages[q.source].id in hits
        store, limit = _latency(store_ms), _latency(numpy_ms)
        scopes[scope] = {
            "store": store,
            "numpy": limit,
            "ratio_p50": store["p50_ms"] / limit["p50_ms"],
            "recall_at_k": statistics.fmean(overlap),
            "source_hit_rate": source_hits / len(queries),
        }
    return scopes


def _ingest_rates(saves: Sequence[tuple[int, float]], size: int) -> dict[str, float]:
    def rate(part: Sequence[tuple[int, float]]) -> float:
        return sum(n for n, _ in part) / max(sum(s for _, s in part), 1e-9)

    tenth = max(1, len(saves) // 10)
    total = sum(s for _, s in saves)
    return {
        "msg_per_s": size / max(total, 1e-9),
        "first_tenth_msg_per_s": rate(saves[:tenth]),
        "last_tenth_msg_per_s": rate(saves[-tenth:]),
        "seconds": total,
    }


# --- Mastra (TypeScript) on the same workload --------------------------------------------------------


def mastra_available() -> str | None:
    """None when Mastra can run here, else why not."""
    if shutil.which("node") is None:
        return "node is not on PATH"
    if not (MASTRA_DIR / "node_modules" / "@mastra" / "memory").is_dir():
        return f"Mastra is not installed: run `npm ci` in {MASTRA_DIR.relative_to(ROOT)}"
    return None


def write_mastra_input(work: Workload, path: Path) -> None:
    """The workload for bench.mjs: texts and queries as JSON, every vector as float32 in ``vectors.f32``
    (the same hash/384 embeddings: Mastra's embedder looks each text up instead of hashing it again)."""
    from mastra_memory.embedders.hash import HashEmbedder

    embedder = HashEmbedder(DIMENSION)
    texts: dict[str, int] = {}

    def key(text: str) -> int:
        return texts.setdefault(text, len(texts))

    doc = {
        "dimension": DIMENSION,
        "resource": RESOURCE,
        "threads": THREADS,
        "saveBatch": SAVE_BATCH,
        "topK": TOP_K,
        "messageRange": MESSAGE_RANGE,
        "lastMessages": LAST_MESSAGES,
        "messages": [
            {
                "id": m.id,
                "threadId": m.thread_id,
                "role": m.role,
                "content": m.content,
                "createdAt": m.created_at,
                "v": key(m.content),
            }
            for m in work.messages
        ],
        "resourceQueries": [
            {"threadId": q.thread_id, "text": q.text, "source": work.messages[q.source].id, "v": key(q.text)}
            for q in work.resource_queries
        ],
        "threadQueries": [
            {"threadId": q.thread_id, "text": q.text, "source": work.messages[q.source].id, "v": key(q.text)}
            for q in work.thread_queries
        ],
        "savePairs": [
            {
                "without": {"threadId": a.thread_id, "text": a.text, "v": key(a.text)},
                "turn": [
                    {
                        "id": m.id,
                        "threadId": m.thread_id,
                        "role": m.role,
                        "content": m.content,
                        "createdAt": m.created_at,
                        "v": key(m.content),
                    }
                    for m in turn
                ],
                "after": {"threadId": b.thread_id, "text": b.text, "v": key(b.text)},
            }
            for a, turn, b in work.save_pairs
        ],
    }
    doc["texts"] = list(texts)
    (path / "workload.json").write_text(json.dumps(doc))
    with (path / "vectors.f32").open("wb") as out:
        for text in texts:
            out.write(struct.pack(f"<{DIMENSION}f", *embedder.embed_one(text)))


#: Seconds a timed-out child gets, after SIGINT, to stop the servers it started.
STOP_GRACE = 60.0
#: Seconds the processes a timed-out child left behind get, after SIGTERM, before SIGKILL.
LEFTOVER_GRACE = 10.0


def _started(pid: int) -> str | None:
    """The start time of process ``pid`` (``/proc/<pid>/stat``, field 22), or None if it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _process_tree(pid: int) -> list[tuple[int, str]]:
    """(pid, start time) of every live descendant of ``pid`` (Linux's ``/proc``; none found elsewhere)."""
    found: list[tuple[int, str]] = []
    todo = [pid]
    while todo:
        for listing in Path(f"/proc/{todo.pop()}/task").glob("*/children"):
            try:
                children = [int(child) for child in listing.read_text().split()]
            except OSError:
                continue
            for child in children:
                started = _started(child)
                if started is not None:
                    found.append((child, started))
                    todo.append(child)
    return found


def _stop_leftovers(tree: Sequence[tuple[int, str]]) -> None:
    """SIGTERM, then SIGKILL after :data:`LEFTOVER_GRACE`, the processes of ``tree`` still running (the same
    process: its start time unchanged, so a reused pid is left alone)."""
    alive = [(pid, started) for pid, started in tree if _started(pid) == started]
    for pid, _ in alive:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + LEFTOVER_GRACE
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [(pid, started) for pid, started in alive if _started(pid) == started]
    for pid, _ in alive:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _bounded_run(cmd: Sequence[str], *, timeout: float, **kwargs: Any) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run`` with a deadline that lets the child clean up.

    ``subprocess.run(timeout=...)`` SIGKILLs the child, so a worker never reaches the ``finally`` that
    stops the server its target started (servers run in their own session, see the kit's
    ``launcher.py``), and the server stays up. Here the child gets SIGINT first — its context
    managers stop what it started — and SIGKILL only after :data:`STOP_GRACE` seconds. A child busy in
    native code may never see the SIGINT: whatever it started and left running (its descendants when the
    deadline passed) is then stopped by pid.
    """
    with subprocess.Popen(list(cmd), **kwargs) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            tree = _process_tree(proc.pid)  # before the child exits and its servers lose their parent
            proc.send_signal(signal.SIGINT)
            try:
                proc.communicate(timeout=STOP_GRACE)
            except subprocess.TimeoutExpired:
                proc.kill()
            _stop_leftovers(tree)
            # The pipes end once nothing holds them: not before a server that inherited them is stopped.
            proc.communicate(timeout=STOP_GRACE)
            raise
    return subprocess.CompletedProcess(list(cmd), proc.returncode, out, err)


def run_mastra(size: int, recalls: int, timeout: float) -> dict[str, Any]:
    """Mastra + LibSQL on the workload of ``size`` (in a child node process); the measurements."""
    work = build_workload(size, recalls)
    exact = Exact(work.messages)
    with tempfile.TemporaryDirectory(prefix="mm-bench-mastra-") as tmp_name:
        tmp = Path(tmp_name)
        write_mastra_input(work, tmp)
        proc = _bounded_run(
            ["node", str(MASTRA_DIR / "bench.mjs"), str(tmp)],
            cwd=MASTRA_DIR,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            timeout=timeout,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"bench.mjs failed ({proc.returncode}): {proc.stderr[-2000:]}")
        raw = json.loads(proc.stdout.strip().splitlines()[-1])
    scopes = _scope_figures(
        work, exact, {k: list(zip(v["hits"], v["ms"], strict=True)) for k, v in raw["scopes"].items()}
    )
    after_save: dict[str, Any] = {
        "without": _latency(raw["afterSave"]["without"]),
        "after_save": _latency(raw["afterSave"]["after"]),
    }
    after_save["ratio_p50"] = after_save["after_save"]["p50_ms"] / after_save["without"]["p50_ms"]
    return {
        "store": MASTRA,
        "target": MASTRA,
        "adapter": "Mastra TS + LibSQL",
        "kind": "reference-run",
        "versions": raw.get("versions"),
        "size": size,
        "recalls": recalls,
        "ingest": {
            **_ingest_rates([tuple(s) for s in raw["saves"]], size),
            "numpy_limit_msg_per_s": size / exact.build_s,
        },
        "first_recall_ms": raw["firstRecallMs"],
        "scopes": scopes,
        "after_save": after_save,
        "disk_bytes": raw["diskBytes"],
        "disk_per_msg_kb": raw["diskBytes"] / size / 1024,
        "peak_rss_mb": raw["peakRssMb"],
        "float32_matrix_mb": size * DIMENSION * 4 / 2**20,
    }


# --- reporting ---------------------------------------------------------------------------------------


def machine_info() -> dict[str, Any]:
    """Commit and machine facts saved with every result."""

    def git(*args: str) -> str:
        try:
            return subprocess.run(
                ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30
            ).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""

    import importlib.metadata as md

    versions = {}
    for dist in (
        "mastra-memory",
        "numpy",
        "lancedb",
        "qdrant-client",
        "qdrant-edge-py",
        "psycopg",
        "opensearch-py",
        "pymongo",
    ):
        with contextlib.suppress(md.PackageNotFoundError):
            versions[dist] = md.version(dist)
    return {
        "commit": git("rev-parse", "--short=12", "HEAD") or "unknown",
        "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "load_average": os.getloadavg(),
        "versions": versions,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _size_label(size: int) -> str:
    return f"{size // 1000}k" if size % 1000 == 0 else str(size)


def _ms(value: float | None) -> str:
    if value is None or value != value:
        return "—"
    return f"{value:.1f} ms" if value >= 1 else f"{value:.2f} ms"


def _ratio(value: float) -> str:
    # Whole numbers hide a store within 2x of numpy (or below it, when a loaded machine slows numpy).
    return f"{value:.0f}" if value >= 10 else f"{value:.2f}"


def summary_rows(result: dict[str, Any]) -> dict[str, str]:
    """One column of the table: figure name -> cell text."""
    if result.get("kind") == "reference":
        ref = result["figures"]
        return {
            "ingest msg/s (first / last tenth)": f"{ref['ingest']:,.0f}" if "ingest" in ref else "—",
            "recall p50 / p95, scope resource": _ms(ref.get("recall_resource_p50")),
            "recall p50 / p95, scope thread": _ms(ref.get("recall_thread_p50")),
            "disk per message": f"{ref['disk_per_msg_kb']:.1f} KB" if "disk_per_msg_kb" in ref else "—",
        }
    ing = result["ingest"]
    rows = {
        "ingest msg/s (first / last tenth)": f"{ing['msg_per_s']:,.0f} "
        f"({ing['first_tenth_msg_per_s']:,.0f} / {ing['last_tenth_msg_per_s']:,.0f})",
        "ingest limit: hash embedding only": f"{ing['numpy_limit_msg_per_s']:,.0f}",
    }
    for scope in ("resource", "thread"):
        s = result["scopes"][scope]
        rows[f"recall p50 / p95, scope {scope}"] = (
            f"{_ms(s['store']['p50_ms'])} / {_ms(s['store']['p95_ms'])}"
        )
        rows[f"  numpy limit p50 (ratio), {scope}"] = (
            f"{_ms(s['numpy']['p50_ms'])} (×{_ratio(s['ratio_p50'])})"
        )
        rows[f"  recall@{TOP_K} vs exact / source found, {scope}"] = (
            f"{s['recall_at_k']:.0%} / {s['source_hit_rate']:.0%}"
        )
    if "after_save" in result:
        a = result["after_save"]
        rows["recall after a save vs without (p50)"] = (
            f"{_ms(a['after_save']['p50_ms'])} vs {_ms(a['without']['p50_ms'])} (×{a['ratio_p50']:.2f})"
        )
    rows["first (cold) recall"] = _ms(result.get("first_recall_ms"))
    rows["disk per message"] = f"{result['disk_per_msg_kb']:.1f} KB"
    # The harness holds its own copy of the vectors (the exact search) before the store starts: the
    # store's share is the growth from "before ingest".
    before = result.get("rss_before_ingest_mb")
    rows["peak RSS / before ingest (f32 matrix)"] = (
        f"{result['peak_rss_mb']:,.0f} / {before:,.0f} MB ({result['float32_matrix_mb']:.1f} MB)"
        if before is not None
        else f"{result['peak_rss_mb']:,.0f} MB ({result['float32_matrix_mb']:.1f} MB)"
    )
    return rows


def print_table(results: Sequence[dict[str, Any]], title: str) -> None:
    """One table: a row per figure, a column per store and size."""
    from rich.console import Console
    from rich.table import Table

    columns = [(f"{r['store']} {_size_label(r['size'])}", summary_rows(r)) for r in results]
    names: list[str] = []
    for _, rows in columns:
        names += [n for n in rows if n not in names]
    table = Table(title=title, show_lines=False)
    table.add_column("figure", no_wrap=True)
    for heading, _ in columns:
        table.add_column(heading, justify="right")
    for name in names:
        table.add_row(name, *(rows.get(name, "") for _, rows in columns))
    Console(width=max(120, 48 + 26 * len(columns))).print(table)


def markdown_tables(results: Sequence[dict[str, Any]]) -> str:
    """The same figures as Markdown, one table per size (a column per store), for docs/performance.md."""
    out = []
    for size in sorted({r["size"] for r in results}):
        columns = [(r["store"], summary_rows(r)) for r in results if r["size"] == size]
        names: list[str] = []
        for _, rows in columns:
            names += [n for n in rows if n not in names]
        out.append(f"**{size:,} messages**\n")
        out.append("| figure | " + " | ".join(h for h, _ in columns) + " |")
        out.append("|---|" + "---:|" * len(columns))
        for name in names:
            cells = (rows.get(name, "").replace("|", "/") for _, rows in columns)
            out.append(f"| {name.strip()} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def reference_columns(sizes: Sequence[int]) -> list[dict[str, Any]]:
    """Issue 19's measured Mastra figures for the sizes run, labelled as a reference (not this run)."""
    return [
        {
            "store": "Mastra+LibSQL (issue 19, reference)",
            "size": s,
            "kind": "reference",
            "figures": MASTRA_REFERENCE[s],
        }
        for s in sizes
        if s in MASTRA_REFERENCE
    ]


def _flatten(result: dict[str, Any], prefix: str = "") -> dict[str, float]:
    flat: dict[str, float] = {}
    for key, value in result.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{name}."))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            flat[name] = float(value)
    return flat


def compare(a_path: Path, b_path: Path) -> None:
    """Print every numeric figure of two saved runs side by side with the change from ``a`` to ``b``."""
    from rich.console import Console
    from rich.table import Table

    a, b = json.loads(a_path.read_text()), json.loads(b_path.read_text())
    table = Table(
        title=f"{a_path.name} ({a['machine']['commit']}) -> {b_path.name} ({b['machine']['commit']})"
    )
    for col in ("store / size", "figure", "a", "b", "change"):
        table.add_column(col, justify="left" if col in ("store / size", "figure") else "right")
    runs_b = {(r["store"], r["size"]): r for r in b["results"]}
    for run_a in a["results"]:
        run_b = runs_b.get((run_a["store"], run_a["size"]))
        if run_b is None:
            continue
        fa, fb = _flatten(run_a), _flatten(run_b)
        for name in fa:
            if name in fb and not name.endswith(".n") and name not in ("size", "recalls"):
                change = (fb[name] - fa[name]) / fa[name] if fa[name] else float("nan")
                table.add_row(
                    f"{run_a['store']} {_size_label(run_a['size'])}",
                    name,
                    f"{fa[name]:.4g}",
                    f"{fb[name]:.4g}",
                    f"{change:+.1%}",
                )
    Console(width=140).print(table)


# --- command line -----------------------------------------------------------------------------------


def _sizes(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        part = part.strip().lower()
        out.append(int(float(part[:-1]) * 1000) if part.endswith("k") else int(part))
    if any(s < SAVE_BATCH for s in out):
        raise argparse.ArgumentTypeError(f"every size must be at least {SAVE_BATCH} messages")
    return out


def _stores(text: str) -> list[str]:
    names: list[str] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        names += ALIASES.get(part, (part,))
    return names


def _run_child(store: str, size: int, recalls: int, timeout: float) -> dict[str, Any]:
    """One store and size in a fresh interpreter, so its peak RSS is its own."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
        out_path = Path(out.name)
    try:
        cmd = [
            sys.executable,
            __file__,
            "--worker",
            store,
            "--sizes",
            str(size),
            "--recalls",
            str(recalls),
            "--worker-out",
            str(out_path),
        ]
        done = _bounded_run(cmd, timeout=timeout)
        if done.returncode != 0:
            raise subprocess.CalledProcessError(done.returncode, cmd)
        result: dict[str, Any] = json.loads(out_path.read_text())
        return result
    finally:
        out_path.unlink(missing_ok=True)


#: Column order of a table: the embedded default first, Mastra last; other targets in between by name.
ORDER = (
    "sqlite",
    "lancedb",
    "qdrant-edge",
    "qdrant-local",
    "pgvector-native",
    "opensearch-native",
    "mongodb-ferretdb",
    MASTRA,
)


def _saved_runs(paths: Sequence[Path]) -> list[dict[str, Any]]:
    runs = [r for p in paths for r in json.loads(p.read_text())["results"]]
    runs.sort(
        key=lambda r: (ORDER.index(r["store"]) if r["store"] in ORDER else len(ORDER), r["store"], r["size"])
    )
    if not any(r["store"] == MASTRA for r in runs):
        runs += reference_columns(sorted({r["size"] for r in runs}))
    return runs


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring); 0 on success."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--stores",
        type=_stores,
        default=["sqlite"],
        help=f"comma-separated targets, or {MASTRA} (default sqlite)",
    )
    parser.add_argument("--sizes", type=_sizes, default=[1_000, 10_000, 100_000], help="e.g. 1k,10k,100k")
    parser.add_argument("--recalls", type=int, default=RECALLS)
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "bench")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per store and size")
    parser.add_argument(
        "--combined",
        action="store_true",
        help="print every run saved in --out for this commit, not only this one",
    )
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A.json", "B.json"))
    parser.add_argument("--table", nargs="+", type=Path, metavar="RUN.json", help="one table from saved runs")
    parser.add_argument("--markdown", action="store_true", help="with --table: Markdown, one table per size")
    parser.add_argument(
        "--scale",
        metavar="ROWS",
        help="instead of the workload: issue 28's scale scenarios on the default store (tests/benchmarks/"
        "scale.py: one user, then 1,000 users, ROWS vectors each, e.g. 1m; cached under /tmp/mm-scale)",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--worker-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.scale:
        if args.stores != ["sqlite"]:  # `nox -s bench -- --scale 1m` runs every store's session
            print(f"[bench] --scale measures the default store only; {args.stores} skipped", flush=True)
            return 0
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import scale  # only this option needs it

        for scenario in ("one", "users"):
            scale.main(["--scenario", scenario, "--rows", args.scale, "--out", str(args.out)])
        return 0

    if args.compare:
        compare(*args.compare)
        return 0
    if args.table:
        runs = _saved_runs(args.table)
        if args.markdown:
            print(markdown_tables(runs))
        else:
            print_table(runs, "Mastra memory workload (saved runs)")
        return 0
    if args.worker:
        # A SIGTERM (a CI timeout, a kill by PID) unwinds like SIGINT, so the target's server is stopped.
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
        result = asyncio.run(run_workload(args.worker, args.sizes[0], args.recalls))
        args.worker_out.write_text(json.dumps(result))
        return 0

    machine = machine_info()
    args.out.mkdir(parents=True, exist_ok=True)
    suffix = machine["commit"] + ("-dirty" if machine["dirty"] else "")
    everything: list[dict[str, Any]] = []
    failed = False
    for store in args.stores:
        results = []
        if store == MASTRA and (why_not := mastra_available()) is not None:
            print(
                f"[bench] Mastra not run ({why_not}); its column shows issue 19's measured figures",
                flush=True,
            )
            continue
        for size in args.sizes:
            print(f"[bench] {store} at {size:,} messages ...", flush=True)
            try:
                if store == MASTRA:
                    results.append(run_mastra(size, args.recalls, args.timeout))
                else:
                    results.append(_run_child(store, size, args.recalls, args.timeout))
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired, RuntimeError) as exc:
                failed = True
                print(f"[bench] {store} at {size:,} failed: {exc}", file=sys.stderr, flush=True)
        if results:
            path = args.out / f"{store}-{suffix}.json"
            path.write_text(json.dumps({"machine": machine, "results": results}, indent=2))
            print(f"[bench] saved {path}", flush=True)
            everything += results
    load = ", ".join(f"{x:.1f}" for x in machine["load_average"])
    title = f"Mastra memory workload @ {suffix} ({machine['cpus']} CPUs, load {load}; {args.recalls} recalls)"
    if args.combined:
        print_table(_saved_runs(sorted(args.out.glob(f"*-{suffix}.json"))), title)
    elif everything:
        print_table([*everything, *_reference_if_missing(everything)], title)
    return 1 if failed else 0


def _reference_if_missing(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    if any(r["store"] == MASTRA for r in runs):
        return []
    return reference_columns(sorted({r["size"] for r in runs}))


if __name__ == "__main__":
    sys.exit(main())
