"""Helpers of the fault tests: writer child processes, their acknowledgements, and the checks that every
acknowledged message survived a fault with its vectors.

Every child gets a deadline of its own (``--deadline``) and is killed by its PID when the test leaves
:func:`writer`, whatever happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mastra_memory.memory import Memory

from .fault_writer import message_text

WRITER = Path(__file__).with_name("fault_writer.py")
_REAP_TIMEOUT = 10.0


@dataclass
class Writer:
    """A running ``fault_writer.py`` child and the files it writes."""

    process: subprocess.Popen[bytes]
    acks: Path
    stdout: Path
    stderr: Path

    def acked(self) -> list[str]:
        """The acknowledged message ids so far (complete lines only), in acknowledgement order."""
        return read_acks(self.acks)

    def output(self) -> str:
        out = self.stdout.read_text(errors="replace") if self.stdout.exists() else ""
        err = self.stderr.read_text(errors="replace") if self.stderr.exists() else ""
        return f"exit code {self.process.returncode}\n--- stdout\n{out[-3000:]}\n--- stderr\n{err[-6000:]}"

    def summary(self) -> dict[str, Any]:
        """The JSON summary the child prints on a clean exit."""
        lines = self.stdout.read_text().strip().splitlines()
        result: dict[str, Any] = json.loads(lines[-1])
        return result

    def finish(self, timeout: float) -> int:
        """Wait (bounded) for the child to exit on its own; its exit code."""
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(f"the writer did not finish within {timeout} s\n{self.output()}") from exc

    def kill9(self) -> None:
        """SIGKILL this child (by its PID) and reap it."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(_REAP_TIMEOUT)


def read_acks(path: Path) -> list[str]:
    if not path.exists():
        return []
    text = path.read_text()
    complete = text[: text.rfind("\n") + 1]  # a line is written in one write(2); never trust a tail
    return [mid for line in complete.splitlines() for mid in line.split()]


@contextlib.contextmanager
def writer(workdir: Path, name: str, *args: str, deadline: float) -> Iterator[Writer]:
    """Start ``fault_writer.py <args>`` with ``--deadline``; on exit SIGKILL it by PID if still running."""
    workdir.mkdir(parents=True, exist_ok=True)
    acks = workdir / f"{name}.acks"
    out, err = workdir / f"{name}.out", workdir / f"{name}.err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, str(WRITER), *args, "--acks", str(acks), "--deadline", str(deadline)],
            stdout=stdout,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
        )
    child = Writer(process, acks, out, err)
    try:
        yield child
    finally:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGKILL)
            process.wait(_REAP_TIMEOUT)


async def wait_until(
    what: str, condition: Callable[[], bool], within: float, *children: Writer, poll: float = 0.02
) -> None:
    """Poll ``condition`` until it holds; AssertionError after ``within`` s or when a child exits."""
    end = time.monotonic() + within
    while not condition():
        for child in children:
            if child.process.poll() is not None:
                raise AssertionError(f"a writer exited while waiting for {what}\n{child.output()}")
        if time.monotonic() > end:
            detail = "\n".join(child.output() for child in children)
            raise AssertionError(f"timed out after {within} s waiting for {what}\n{detail}")
        await asyncio.sleep(poll)


async def message_vectors(memory: Memory) -> dict[str, int]:
    """message_id → how many vector records it has, over every memory index of the store."""
    counts: dict[str, int] = {}
    for index in await memory.indexer().message_index_set():
        for record in await memory.vector.query(index, None, top_k=10_000):
            mid = str(record.metadata.get("message_id"))
            counts[mid] = counts.get(mid, 0) + 1
    return counts


async def stored_texts(memory: Memory, thread_id: str) -> dict[str, str]:
    """message_id → text of every message stored in the thread."""
    page = await memory.storage.list_messages(thread_id, per_page=False)
    return {m.id: m.content.content or "" for m in page.messages}


async def assert_recallable(memory: Memory, thread_id: str, resource_id: str, ids: list[str]) -> None:
    """Semantic recall of each message's own text returns that message as its best hit."""
    wrong: list[tuple[str, list[str]]] = []
    for mid in ids:
        tag, n = mid.rsplit("-", 1)
        result = await memory.recall(thread_id, resource_id, vector_search_string=message_text(tag, int(n)))
        found = [hit.message_id for hit in result.hits]
        if found[:1] != [mid]:
            wrong.append((mid, found))
    assert not wrong, f"{len(wrong)} of {len(ids)} messages not recalled by their own text: {wrong[:5]}"
