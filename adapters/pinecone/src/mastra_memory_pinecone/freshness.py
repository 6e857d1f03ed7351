"""Reading one's own writes on an eventually consistent Pinecone (docs/spec.md §2.9).

A write is acknowledged before reads see it. The store remembers every write it makes (pinecone id -> the
record written, or ``None`` for a delete) in :class:`PendingWrites` until :meth:`PendingWrites.settle` has
seen it through ``fetch``; updates read the remembered record first (:meth:`PendingWrites.latest`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["PendingWrites", "Write", "Written"]


@dataclass(frozen=True, slots=True)
class Written:
    """What this store last wrote for one id: the vector (float32) and the Pinecone metadata."""

    values: npt.NDArray[np.float32]
    metadata: dict[str, Any]


@dataclass(slots=True)
class Write:
    """One write of one id by this store: the state it leaves (``None``: deleted), and whether it returned.

    Writes to one id that overlap in time may land in either order, so each stays a candidate final state
    until a later write to that id starts after it returned.
    """

    state: Written | None
    returned: bool = False


def _shows(seen: tuple[Any, Any] | None, state: Written | None) -> bool:
    """Whether a fetched record (values, metadata), or its absence, is ``state``."""
    if state is None or seen is None:
        return state is None and seen is None
    values = np.asarray(seen[0], dtype=np.float64)
    return (
        dict(seen[1] or {}) == state.metadata
        and values.shape == state.values.shape
        and bool(np.allclose(values, state.values, rtol=1e-6, atol=0))
    )


class PendingWrites:
    """index -> pinecone id -> the writes that may be its final state, until :meth:`settle` sees one."""

    def __init__(self) -> None:
        self._by_index: dict[str, dict[str, list[Write]]] = {}

    def begin(self, name: str, states: Sequence[tuple[str, Written | None]]) -> list[Write]:
        """Record writes about to be sent; earlier writes of those ids that returned are superseded."""
        pending = self._by_index.setdefault(name, {})
        started = []
        for pid, state in states:
            writes = pending.setdefault(pid, [])
            writes[:] = [w for w in writes if not w.returned]
            write = Write(state)
            writes.append(write)
            started.append(write)
        return started

    @staticmethod
    def returned(writes: list[Write]) -> None:
        """The requests of ``writes`` returned (successfully or not)."""
        for write in writes:
            write.returned = True

    def latest(self, name: str, pid: str) -> tuple[bool, Written | None]:
        """``(True, state)``: the record this store last wrote for ``pid`` (``None``: deleted) and reads may
        not show yet; ``(False, None)``: nothing pending, read it."""
        writes = self._by_index.get(name, {}).get(pid)
        return (True, writes[-1].state) if writes else (False, None)

    def forget(self, name: str) -> None:
        """The index was created or dropped: nothing of it is pending."""
        self._by_index.pop(name, None)

    async def settle(
        self,
        name: str,
        fetch: Callable[[list[str]], Awaitable[dict[str, tuple[Any, Any]]]],
        wait: float,
        timed_out: Callable[[int], Exception],
    ) -> None:
        """Wait until ``fetch`` shows every pending write to ``name`` (polling, backing off to 0.5 s); raise
        ``timed_out(number still pending)`` after ``wait`` seconds."""
        pending = self._by_index.get(name)
        deadline = time.monotonic() + wait
        delay = 0.01
        while pending:
            found = await fetch(list(pending))
            for pid, writes in list(pending.items()):
                seen = found.get(pid)
                if any(_shows(seen, w.state) for w in writes) and pending.get(pid) is writes:
                    del pending[pid]
            if not pending:
                break
            if time.monotonic() > deadline:
                raise timed_out(len(pending))
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)
        self._by_index.pop(name, None)
