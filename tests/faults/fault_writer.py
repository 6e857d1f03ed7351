"""The child process of the fault tests: saves messages through ``Memory`` and acknowledges each save.

Run as a script (``python fault_writer.py --backend sqlite --url /tmp/m.db ...``), never imported by a
child: the tests import only :func:`message_id`, :func:`message_text` and :data:`OPTIONS` from it.

Message ``n`` of ``--tag`` has the id ``<tag>-<n>`` and a text unique to it. Saves are batches of one to
three messages (``Memory.save_messages`` stores a batch atomically, then indexes it, docs/spec.md §5.4).
After a save returns, its ids are appended to ``--acks`` as one line in a single ``write(2)`` on an
``O_APPEND`` descriptor, so a SIGKILL leaves either the whole line or none of it: a line there means the
caller was told the save succeeded.

``--on-error skip`` (the PostgreSQL test, with ``--pg-retries 0`` so the adapter does not hide the
outage): a failed save is not acknowledged and the writer goes on with the next batch on the same
``Memory``, so the messages of a save interrupted between its storage commit and its vector write stay
stored without vectors (what ``reindex`` is for), and later saves show the pool reconnecting;
``retry`` saves the same batch again; ``raise`` (the default, the SQLite tests: any error is a failure)
ends the process with a traceback. The process stops after
``--count`` messages, when ``--stop`` exists, or at ``--deadline`` seconds (exit code 3). On exit it
prints a JSON summary: acknowledged messages, failed attempts and their exception types.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
import time
import traceback
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

#: Semantic recall on, one hit, no surrounding messages, thread scope: recall of a message's own text
#: must return that message first (equal texts embed to cosine 1.0 under ``hash/64``).
OPTIONS: dict[str, Any] = {
    "lastMessages": 0,
    "semanticRecall": {"topK": 1, "messageRange": 0, "scope": "thread"},
}
EMBEDDER = "hash/64"
_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def message_id(tag: str, n: int) -> str:
    return f"{tag}-{n:06d}"


def message_text(tag: str, n: int) -> str:
    digest = hashlib.sha256(f"{tag}/{n}".encode()).hexdigest()[:20]
    return f"fault {tag} message {n} {digest}"


def _memory(args: argparse.Namespace) -> Any:
    from mastra_memory.memory import Memory

    if args.backend == "sqlite":
        from mastra_memory.plugins import create_storage, create_vector

        storage = create_storage("sqlite", url=args.url)
        vector = create_vector("sqlite", url=args.url)
    else:
        from mastra_memory_pgvector import PgVectorSettings
        from mastra_memory_pgvector.storage import PgStorage
        from mastra_memory_pgvector.store import PgVector

        settings = PgVectorSettings(
            url=args.url, schema_name=args.schema, connect_timeout=3.0, retries=args.pg_retries
        )
        storage, vector = PgStorage(settings), PgVector(settings)
    return Memory(storage=storage, vector=vector, embedder=EMBEDDER, options=OPTIONS)


def _batch(args: argparse.Namespace, start: int) -> list[dict[str, Any]]:
    size = min(1 + start % 3, args.count - start)
    return [
        {
            "id": message_id(args.tag, n),
            "thread_id": args.thread,
            "resource_id": args.resource,
            "role": "user" if n % 2 == 0 else "assistant",
            "content": message_text(args.tag, n),
            "created_at": _EPOCH + timedelta(milliseconds=n),
        }
        for n in range(start, start + size)
    ]


async def _run(args: argparse.Namespace, deadline: float) -> dict[str, Any]:
    memory = _memory(args)
    acks = os.open(args.acks, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    errors: Counter[str] = Counter()
    acked = 0
    try:
        if args.ready:
            await asyncio.to_thread(Path(args.ready).touch)
        if args.go:  # a start line shared with another writer: both open the fresh file at once
            while not await asyncio.to_thread(Path(args.go).exists):
                if time.monotonic() > deadline:
                    raise TimeoutError("the start signal never came")
                await asyncio.sleep(0.01)
        if args.create_thread:
            await memory.create_thread(args.resource, args.thread)
        n = args.start
        while n < args.count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"deadline reached after {acked} acknowledged messages")
            if args.stop and await asyncio.to_thread(Path(args.stop).exists):
                break
            batch = _batch(args, n)
            try:
                await memory.save_messages(batch)
            except Exception as exc:
                if args.on_error == "raise":
                    raise
                errors[type(exc).__name__] += 1
                await asyncio.sleep(0.05)
                if args.on_error == "skip":
                    n += len(batch)
                continue
            os.write(acks, (" ".join(m["id"] for m in batch) + "\n").encode())
            acked += len(batch)
            n += len(batch)
    finally:
        os.close(acks)
        await memory.close()
    return {"acked": acked, "failed_attempts": sum(errors.values()), "errors": dict(errors)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", choices=("sqlite", "pgvector"), required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--schema", default="public")
    parser.add_argument("--tag", required=True)
    parser.add_argument("--resource", required=True)
    parser.add_argument("--thread", required=True)
    parser.add_argument("--create-thread", action="store_true")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--acks", required=True)
    parser.add_argument("--stop")
    parser.add_argument("--ready")
    parser.add_argument("--go")
    parser.add_argument("--on-error", choices=("raise", "retry", "skip"), default="raise")
    parser.add_argument("--pg-retries", type=int, default=2)
    parser.add_argument("--deadline", type=float, required=True, help="seconds before giving up")
    args = parser.parse_args()
    deadline = time.monotonic() + args.deadline
    try:
        summary = asyncio.run(asyncio.wait_for(_run(args, deadline), args.deadline + 5))
    except BaseException:
        traceback.print_exc()
        return 3 if isinstance(sys.exc_info()[1], TimeoutError) else 1
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
