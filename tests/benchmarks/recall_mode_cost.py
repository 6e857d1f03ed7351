"""What ``semanticRecall.mode`` costs on the default SQLite store (issue 30): ingest and recall, mode by mode.

``python tests/benchmarks/recall_mode_cost.py --messages 10000 --modes vector,auto --repeat 2``

One resource, 50 threads, ``N`` messages of 8-30 words from a 4,000-word vocabulary (as
``memory_workload.py``), ``hash/384`` embeddings (the model costs nothing). One recall first, so that in mode
``auto`` the lexical index exists (its first hybrid recall builds it) and every save writes its FTS5 rows as
an application's would; then the messages saved 20 at a time (timed), then 100 recalls (``topK`` 3,
``messageRange`` 2, scope resource) of six words of a stored message. Modes alternate per repeat, so a
shared machine's load falls on each alike. Numbers only.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from mastra_memory.memory import Memory

VOCABULARY = [f"w{i}" for i in range(4000)]
RECALLS = 100


async def measure(mode: str, size: int) -> dict[str, float]:
    """Ingest ``size`` messages after one recall, then time :data:`RECALLS` recalls, in ``mode``."""
    rng = random.Random(7)
    texts = [" ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(8, 30))) for _ in range(size)]
    with tempfile.TemporaryDirectory(prefix="mm-mode-cost-") as tmp:
        recall = {"topK": 3, "messageRange": 2, "scope": "resource", "mode": mode}
        memory = Memory(
            storage=f"sqlite:///{Path(tmp) / 'm.db'}",
            embedder="hash/384",
            options={"lastMessages": False, "semanticRecall": recall},
        )
        try:
            for t in range(50):
                await memory.create_thread("r", f"t{t:02d}")
            seed = {"id": "seed", "thread_id": "t00", "role": "user", "content": "seed text"}
            await memory.save_messages([seed])
            await memory.recall("t00", resource_id="r", vector_search_string="seed")
            started = time.perf_counter()
            for start in range(0, size, 20):
                thread = f"t{(start // 20) % 50:02d}"
                batch = range(start, min(size, start + 20))
                await memory.save_messages(
                    [{"id": f"m{i}", "thread_id": thread, "role": "user", "content": texts[i]} for i in batch]
                )
            ingest_s = time.perf_counter() - started
            latencies = []
            for _ in range(RECALLS):
                words = " ".join(texts[rng.randrange(size)].split()[:6])
                started = time.perf_counter()
                await memory.recall("t00", resource_id="r", vector_search_string=words)
                latencies.append((time.perf_counter() - started) * 1000)
        finally:
            await memory.close()
    latencies.sort()
    return {
        "msg_per_s": size / ingest_s,
        "recall_p50_ms": statistics.median(latencies),
        "recall_p95_ms": latencies[int(0.95 * len(latencies)) - 1],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--modes", default="vector,auto")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    print("| mode | ingest msg/s | recall p50 ms | recall p95 ms |\n|---|---|---|---|")
    for _ in range(args.repeat):
        for mode in args.modes.split(","):
            r = asyncio.run(measure(mode, args.messages))
            print(f"| {mode} | {r['msg_per_s']:.0f} | {r['recall_p50_ms']:.1f} | {r['recall_p95_ms']:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
