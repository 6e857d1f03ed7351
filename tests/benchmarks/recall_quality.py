"""Recall quality on a conversational-memory benchmark: does recall find the message that answers?

``nox -s quality -- --locomo /path/to/locomo10.json`` (or ``python tests/benchmarks/recall_quality.py``).
LoCoMo (Maharana et al. 2024, ``snap-research/LoCoMo``, ``data/locomo10.json``, CC BY-NC 4.0: used to
evaluate, never copied here) as issue 30 frames it: each conversation a resource, each session a thread,
each turn a message (``"<speaker>: <text>"``), every non-adversarial question (categories 1-4) asked
through ``Memory.recall`` in scope resource. Printed per embedder and mode, beside SQLite FTS5 BM25 over
the same turns (the lexical index hybrid recall uses, searched alone): turn-level recall@5/@10 (share of
questions with an evidence turn in the top k), session-level recall@5/@10 (a turn of an evidence session
in the top k), NDCG@10 over the evidence turns, and recall latency p50/p95.

``--fusions`` also scores every fusion of :mod:`mastra_memory.memory.recall.fusion` offline, from the same
two candidate lists, which is how the default fusion was chosen. Embeddings are kept in an SQLite cache
(``--cache``, default ``reports/quality/embeddings.db``), so a second run embeds nothing. Without
``--locomo`` a tiny synthetic set written for this project runs (what the tests run).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import sqlite3
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from mastra_memory.embedders import EmbedResult, resolve_embedder
from mastra_memory.filters import Comparison
from mastra_memory.memory import Memory
from mastra_memory.memory.index.lexical import lexical_index_for
from mastra_memory.memory.recall.fusion import CANDIDATES, FUSIONS, fusion_for
from mastra_memory.memory.recall.search import search_messages

EMBEDDERS = ("local/wordllama", "local/all-minilm-l6-v2")
#: "auto" (the default) is "hybrid" on the SQLite store the benchmark runs on: measured as configured.
MODES = ("auto", "vector", "hybrid")
KS = (5, 10)
ADVERSARIAL = 5


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    speaker: str
    text: str


@dataclass(frozen=True, slots=True)
class Session:
    number: int
    date: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    evidence: frozenset[str]
    category: int


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    def session_of(self) -> dict[str, int]:
        return {t.dia_id: s.number for s in self.sessions for t in s.turns}


# --- data ------------------------------------------------------------------------------------------


def _locomo_date(text: str, fallback: datetime) -> datetime:
    # "1:56 pm on 8 May, 2023"
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(text.strip(), fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return fallback


def load_locomo(path: Path) -> list[Conversation]:
    """LoCoMo's conversations with their non-adversarial questions whose evidence names turns."""
    raw = json.loads(path.read_text())
    conversations = []
    for sample in raw:
        conv = sample["conversation"]
        sessions = []
        base = datetime(2020, 1, 1, tzinfo=UTC)
        number = 1
        while f"session_{number}" in conv:
            turns = tuple(
                Turn(
                    t["dia_id"],
                    t["speaker"],
                    t["text"] + (f" [shares a photo: {t['blip_caption']}]" if t.get("blip_caption") else ""),
                )
                for t in conv[f"session_{number}"]
            )
            date = _locomo_date(conv.get(f"session_{number}_date_time", ""), base + timedelta(days=number))
            if turns:
                sessions.append(Session(number, date, turns))
            number += 1
        known = {t.dia_id for s in sessions for t in s.turns}
        questions = tuple(
            Question(q["question"], frozenset(e for e in q.get("evidence", []) if e in known), q["category"])
            for q in sample["qa"]
            if q["category"] != ADVERSARIAL and any(e in known for e in q.get("evidence", []))
        )
        conversations.append(Conversation(sample["sample_id"], tuple(sessions), questions))
    return conversations


def synthetic() -> list[Conversation]:
    """A tiny conversation set written for this project: two users, three sessions each, questions whose
    evidence turns are marked (some share words with their answer, some only meaning)."""
    day = datetime(2024, 3, 1, tzinfo=UTC)

    def session(n: int, *lines: tuple[str, str]) -> Session:
        return Session(n, day + timedelta(days=7 * n), tuple(
            Turn(f"D{n}:{i}", who, text) for i, (who, text) in enumerate(lines, start=1)
        ))  # fmt: skip

    ada = Conversation(
        "ada",
        (
            session(
                1,
                ("Ada", "I adopted a grey cat called Biscuit last week."),
                ("Ben", "Lovely! How is she settling in?"),
                ("Ada", "She hides under the sofa most of the day."),
                ("Ben", "Give her time, cats need a few weeks."),
            ),
            session(
                2,
                ("Ben", "Did you start the pottery class?"),
                ("Ada", "Yes, on Tuesdays at the community centre; I made a lopsided bowl."),
                ("Ben", "Everyone's first bowl is lopsided."),
                ("Ada", "My sister Clara is visiting from Lisbon in May."),
            ),
            session(
                3,
                ("Ada", "I'm training for the city half marathon in October."),
                ("Ben", "How far do you run now?"),
                ("Ada", "Twelve kilometres on Sundays along the river."),
                ("Ben", "Remember to buy proper running shoes."),
            ),
        ),
        (
            Question("What is the name of Ada's cat?", frozenset({"D1:1"}), 1),
            Question("When does Ada go to pottery class?", frozenset({"D2:2"}), 2),
            Question("Where does Ada's sister live?", frozenset({"D2:4"}), 1),
            Question("Which race is Ada preparing for?", frozenset({"D3:1"}), 4),
            Question("How far does Ada jog each week?", frozenset({"D3:3"}), 4),
            Question("Where does the new pet hide?", frozenset({"D1:3"}), 4),
        ),
    )
    omar = Conversation(
        "omar",
        (
            session(
                1,
                ("Omar", "We moved into a flat in Rotterdam near the harbour."),
                ("Lena", "Is it noisy with the ships?"),
                ("Omar", "Only the foghorns in the morning."),
            ),
            session(
                2,
                ("Lena", "How is the new job at the bakery?"),
                ("Omar", "I start at four in the morning to bake sourdough."),
                ("Lena", "That is early!"),
            ),
            session(
                3,
                ("Omar", "My daughter Noor won the school chess tournament."),
                ("Lena", "Congratulations to her!"),
                ("Omar", "She wants a wooden chess set for her birthday."),
            ),
        ),
        (
            Question("Which city did Omar move to?", frozenset({"D1:1"}), 1),
            Question("What does Omar bake at work?", frozenset({"D2:2"}), 1),
            Question("What did Noor win?", frozenset({"D3:1"}), 1),
            Question("What gift does Omar's daughter want?", frozenset({"D3:3"}), 4),
        ),
    )
    return [ada, omar]


# --- the embedding cache -----------------------------------------------------------------------------


class DiskCachedEmbedder:
    """An embedder whose vectors are kept in an SQLite file, keyed by model and text: a second run of the
    benchmark embeds nothing."""

    def __init__(self, inner: Any, path: Path) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.cache_namespace = getattr(inner, "cache_namespace", inner.model_id)
        self.dimension = inner.dimension
        self.max_batch_size = inner.max_batch_size
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path)
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
        self.embedded = 0

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.cache_namespace}\x00{text}".encode()).hexdigest()

    async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
        keys = [self._key(t) for t in texts]
        found: dict[str, list[float]] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for key, blob in self._db.execute(
                f"SELECT key, vector FROM vectors WHERE key IN ({marks})", chunk
            ):
                found[key] = np.frombuffer(blob, dtype="<f4").astype(np.float64).tolist()
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            result = await self.inner.embed_many([texts[i] for i in missing], **options)
            self.embedded += len(missing)
            rows = []
            for i, vector in zip(missing, result.embeddings, strict=True):
                found[keys[i]] = list(vector)
                rows.append((keys[i], np.asarray(vector, dtype="<f4").tobytes()))
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)
            self._db.commit()
        vectors = [found[k] for k in keys]
        self.dimension = len(vectors[0]) if vectors else self.dimension
        return EmbedResult(vectors, None)

    def close(self) -> None:
        self._db.close()


# --- metrics -----------------------------------------------------------------------------------------


@dataclass(slots=True)
class Scores:
    """Per-question outcomes of one ranker."""

    turn_hits: dict[int, list[bool]] = field(default_factory=lambda: {k: [] for k in KS})
    session_hits: dict[int, list[bool]] = field(default_factory=lambda: {k: [] for k in KS})
    ndcg: list[float] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)

    def add(self, ranked: Sequence[str], evidence: frozenset[str], sessions: dict[str, int]) -> None:
        wanted = {sessions[e] for e in evidence}
        for k in KS:
            top = ranked[:k]
            self.turn_hits[k].append(any(t in evidence for t in top))
            self.session_hits[k].append(any(sessions.get(t) in wanted for t in top))
        gains = sum(1 / math.log2(i + 2) for i, t in enumerate(ranked[:10]) if t in evidence)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(len(evidence), 10)))
        self.ndcg.append(gains / ideal if ideal else 0.0)

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"questions": len(self.ndcg)}
        for k in KS:
            out[f"turn_recall@{k}"] = _mean(self.turn_hits[k])
            out[f"session_recall@{k}"] = _mean(self.session_hits[k])
        out["ndcg@10"] = _mean(self.ndcg)
        if self.latency_ms:
            out["p50_ms"] = float(np.percentile(self.latency_ms, 50))
            out["p95_ms"] = float(np.percentile(self.latency_ms, 95))
        return out


def _mean(values: Sequence[float | bool]) -> float:
    return float(np.mean(values)) if values else 0.0


# --- the run -----------------------------------------------------------------------------------------


def _message_id(conv: Conversation, turn: Turn) -> str:
    return f"{conv.id}|{turn.dia_id}"


async def _ingest(memory: Memory, conversations: Sequence[Conversation]) -> float:
    started = time.perf_counter()
    for conv in conversations:
        for s in conv.sessions:
            thread = f"{conv.id}|s{s.number}"
            await memory.create_thread(conv.id, thread, title=f"session {s.number}")
            await memory.save_messages(
                [
                    {
                        "id": _message_id(conv, t),
                        "thread_id": thread,
                        "resource_id": conv.id,
                        "role": "user" if t.speaker == s.turns[0].speaker else "assistant",
                        "content": f"{t.speaker}: {t.text}",
                        "created_at": s.date + timedelta(seconds=i),
                    }
                    for i, t in enumerate(s.turns)
                ]
            )
    return time.perf_counter() - started


async def run_embedder(
    embedder_name: str,
    conversations: Sequence[Conversation],
    *,
    modes: Sequence[str],
    cache: Path,
    workdir: Path,
    fusions: bool,
    candidates: bool = False,
) -> dict[str, Any]:
    """Ingest every conversation with ``embedder_name``, then ask every question in each mode, by BM25
    alone and (``fusions``) by every fusion of the two candidate lists."""
    embedder = DiskCachedEmbedder(resolve_embedder(embedder_name), cache)
    db = workdir / f"{embedder_name.replace('/', '_')}.db"
    memory = Memory(
        storage=f"sqlite:///{db}",
        embedder=embedder,
        options={
            "lastMessages": False,
            "semanticRecall": {"topK": 10, "messageRange": 0, "scope": "resource"},
        },
    )
    try:
        ingest_s = await _ingest(memory, conversations)
        rankers: dict[str, Scores] = {f"recall {mode}": Scores() for mode in modes}
        rankers["fts5 bm25"] = Scores()
        if fusions:
            rankers.update({f"fusion {name}": Scores() for name in FUSIONS})
        indexer = memory.indexer()
        lexical = lexical_index_for(memory.vector)
        assert lexical is not None
        kept: list[dict[str, Any]] = []
        for conv in conversations:
            sessions = conv.session_of()
            first = f"{conv.id}|s{conv.sessions[0].number}"
            for q in conv.questions:
                for mode in modes:
                    started = time.perf_counter()
                    result = await memory.recall(
                        first,
                        resource_id=conv.id,
                        vector_search_string=q.text,
                        per_page=0,
                        thread_config={"semanticRecall": {"mode": mode}},
                    )
                    scores = rankers[f"recall {mode}"]
                    scores.latency_ms.append((time.perf_counter() - started) * 1000)
                    scores.add([_dia(h.message_id) for h in result.hits], q.evidence, sessions)
                scope = Comparison(("resource_id",), "$eq", conv.id)
                started = time.perf_counter()
                native = memory.vector.to_native_index_name(indexer.index_name_for(_dimension(embedder)))
                words = await lexical.search(native, q.text, top_k=CANDIDATES, flt=scope)
                rankers["fts5 bm25"].latency_ms.append((time.perf_counter() - started) * 1000)
                lexical_ranking = _best_per_message(words)
                rankers["fts5 bm25"].add([_dia(m) for m, _ in lexical_ranking], q.evidence, sessions)
                if fusions:
                    found = await search_messages(
                        indexer, q.text, top_k=CANDIDATES, flt=scope, threshold=None, mode="vector"
                    )
                    vector_ranking = [(h.message_id, h.score) for h in found.hits]
                    if candidates:
                        kept.append({
                            "conversation": conv.id,
                            "evidence": sorted(q.evidence),
                            "vector": vector_ranking,
                            "lexical": lexical_ranking,
                        })  # fmt: skip
                    for name, fuse in FUSIONS.items():
                        fused = fuse(vector_ranking, lexical_ranking)
                        rankers[f"fusion {name}"].add([_dia(m) for m, _ in fused], q.evidence, sessions)
        return {
            "embedder": embedder_name,
            "recall_fusion": fusion_for(embedder.model_id),
            "candidates": kept,
            "ingest_s": ingest_s,
            "embedded_now": embedder.embedded,
            "rankers": {name: s.summary() for name, s in rankers.items()},
        }
    finally:
        await memory.close()
        embedder.close()


def _dimension(embedder: DiskCachedEmbedder) -> int:
    assert embedder.dimension is not None
    return int(embedder.dimension)


def _dia(message_id: str) -> str:
    return message_id.split("|", 1)[1]


def _best_per_message(rows: Sequence[Any]) -> list[tuple[str, float]]:
    best: dict[str, float] = {}
    for row in rows:
        message_id = row.metadata.get("message_id")
        if isinstance(message_id, str) and message_id not in best:
            best[message_id] = row.score
    return list(best.items())


def table(results: Sequence[dict[str, Any]]) -> str:
    """The figures as a Markdown table, one row per embedder and ranker."""
    head = (
        "| embedder | ranking | turn R@5 | turn R@10 | session R@5 | session R@10 | NDCG@10 "
        "| p50 ms | p95 ms |\n"
        "|---|---|---|---|---|---|---|---|---|"
    )
    rows = [head]
    for result in results:
        for name, s in result["rankers"].items():
            p50 = f"{s['p50_ms']:.1f}" if "p50_ms" in s else "–"
            p95 = f"{s['p95_ms']:.1f}" if "p95_ms" in s else "–"
            rows.append(
                f"| {result['embedder']} | {name} | {s['turn_recall@5']:.3f} | {s['turn_recall@10']:.3f} | "
                f"{s['session_recall@5']:.3f} | {s['session_recall@10']:.3f} | {s['ndcg@10']:.3f} | "
                f"{p50} | {p95} |"
            )
    fusions = ", ".join(f"{r['embedder']}: {r['recall_fusion']}" for r in results)
    return "\n".join(rows) + f"\n\nrecall hybrid and auto fuse with {fusions} (fusion.fusion_for)"


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    conversations = load_locomo(Path(args.locomo)) if args.locomo else synthetic()
    if args.conversations:
        conversations = conversations[: args.conversations]
    results = []
    with tempfile.TemporaryDirectory(prefix="mm-quality-") as tmp:
        for name in args.embedders.split(","):
            results.append(
                await run_embedder(
                    name,
                    conversations,
                    modes=args.modes.split(","),
                    cache=Path(args.cache),
                    workdir=Path(tmp),
                    fusions=args.fusions,
                    candidates=bool(args.candidates),
                )
            )
    questions = sum(len(c.questions) for c in conversations)
    turns = sum(len(s.turns) for c in conversations for s in c.sessions)
    print(f"{len(conversations)} conversations, {turns} turns, {questions} questions (non-adversarial)")
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--locomo", help="path to LoCoMo's data/locomo10.json (default: the synthetic set)")
    parser.add_argument("--embedders", default=",".join(EMBEDDERS))
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--conversations", type=int, default=0, help="only the first N conversations")
    parser.add_argument("--cache", default="reports/quality/embeddings.db", help="embedding cache file")
    parser.add_argument("--fusions", action="store_true", help="also score every fusion offline")
    parser.add_argument("--json", help="write the figures here as JSON")
    parser.add_argument(
        "--candidates", help="with --fusions: write each question's two candidate lists here (a folder)"
    )
    args = parser.parse_args(argv)
    results = asyncio.run(run(args))
    for result in results:
        kept = result.pop("candidates")
        if args.candidates:
            folder = Path(args.candidates)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{result['embedder'].replace('/', '_')}.json").write_text(json.dumps(kept))
    print(table(results))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
