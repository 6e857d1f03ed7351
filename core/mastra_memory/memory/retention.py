"""Age-based retention of ``Memory``: Mastra's ``retention`` policies (``{maxAge, batchSize}``) and its
bounded, resumable ``prune()`` (docs/spec.md §5.11), composed from ``MemoryStorage`` calls.

Every batch finds the aged rows through the storage's own reads and deletes them through ``Memory``'s delete
path, so a pruned message loses its vectors in every memory index and a pruned thread takes its messages
and their vectors with it: nothing recall could still return outlives its row.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from pydantic import BaseModel

from ..errors import ConfigError, ValidationError
from ..storage import MemoryStorage
from ..timestamps import utc_now
from .config import UnsupportedOptionError

__all__ = ["PruneResult", "RetentionPolicy", "parse_duration", "parse_retention", "prune"]

#: Mastra's physical table of each retention key (what ``PruneResult.table`` names, as Mastra's does).
TABLES = {"messages": "mastra_messages", "threads": "mastra_threads"}
#: Mastra prunes messages before threads (its dependency order).
ORDER = ("messages", "threads")
DEFAULT_BATCH_SIZE = 1000
_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$")
#: Thread ids per storage read: keeps every backend's parameter list small.
_THREAD_CHUNK = 500


class PruneResult(BaseModel):
    """One table's progress in a :func:`prune` call (Mastra's ``PruneResult``): ``done=False`` means aged rows
    remain (a bound or the stop signal ended the call); call ``prune()`` again to continue."""

    domain: str
    table: str
    deleted: int
    done: bool


@dataclass(frozen=True)
class RetentionPolicy:
    """Rows whose ``created_at`` is strictly older than ``now - max_age`` are pruned, ``batch_size`` per
    batch (Mastra's ``TableRetentionPolicy``)."""

    max_age: timedelta
    batch_size: int = DEFAULT_BATCH_SIZE


class StopSignal(Protocol):
    """Anything with ``is_set()``: an ``asyncio.Event`` or ``threading.Event`` (Mastra's ``AbortSignal``)."""

    def is_set(self) -> bool: ...


def parse_duration(value: Any, what: str = "maxAge") -> timedelta:
    """Mastra's ``Duration``: milliseconds as a number ≥ 0, or ``"<number><unit>"`` with unit ms, s, m, h,
    d or w (``"30d"``, ``"12h"``, ``"1.5h"``)."""
    if isinstance(value, int | float) and not isinstance(value, bool):  # True is not 1 ms
        if math.isfinite(value) and value >= 0:
            return timedelta(milliseconds=value)
    elif isinstance(value, str) and (match := _DURATION.match(value)):
        return timedelta(milliseconds=float(match[1]) * _UNITS_MS[match[2]])
    raise ConfigError(
        f"{what} must be a number of milliseconds >= 0 or a '<number><unit>' string with unit ms, s, m, h, d "
        f"or w (such as '30d'), got {value!r}"
    )


def _policy(key: str, value: Any) -> RetentionPolicy:
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"retention.{key} must be a policy like {{'maxAge': '30d', 'batchSize': 1000}}, got {value!r}"
        )
    unknown = set(value) - {"maxAge", "max_age", "batchSize", "batch_size"}
    if unknown:
        raise ConfigError(
            f"retention.{key}: unknown keys {sorted(unknown)}; a policy has maxAge and batchSize"
        )
    if "maxAge" not in value and "max_age" not in value:
        raise ConfigError(f"retention.{key}.maxAge is required (such as '30d')")
    max_age = parse_duration(value.get("maxAge", value.get("max_age")), f"retention.{key}.maxAge")
    batch = value.get("batchSize", value.get("batch_size", DEFAULT_BATCH_SIZE))
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ConfigError(f"retention.{key}.batchSize must be an integer >= 1, got {batch!r}")
    return RetentionPolicy(max_age=max_age, batch_size=batch)


def parse_retention(value: Any) -> dict[str, RetentionPolicy]:
    """The memory policies of a retention config: ``{"messages": {...}, "threads": {...}}``, or Mastra's
    whole ``RetentionConfig`` ``{"memory": {...}}`` (other domains are not this project's and are refused).

    ``resources`` is refused with UnsupportedOptionError **[Δ]**: the storage contract cannot list
    resources, so they cannot be pruned by age here."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"retention must be a dict such as {{'messages': {{'maxAge': '30d'}}}}, got {value!r}"
        )
    if "memory" in value:
        others = set(value) - {"memory"}
        if others:
            raise ConfigError(
                f"retention domains {sorted(others)} are not memory's; Memory.prune prunes only the memory "
                "domain (messages, threads)"
            )
        value = value["memory"]
        if not isinstance(value, Mapping):
            raise ConfigError(f"retention.memory must be a dict of table policies, got {value!r}")
    policies: dict[str, RetentionPolicy] = {}
    for key, policy in value.items():
        if key == "resources":
            raise UnsupportedOptionError(
                "retention.resources is not supported: the storage contract cannot list resources "
                "(docs/spec.md §5.11 [Δ]); prune messages and threads, and delete resources explicitly",
                "retention.resources",
            )
        if key not in TABLES:
            raise ConfigError(f"retention key {key!r} is not a memory table; use 'messages' or 'threads'")
        policies[key] = _policy(key, policy)
    return policies


def check_bound(value: Any, what: str, *, minimum: int) -> int | None:
    """A ``prune`` bound: None or an integer ≥ ``minimum``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValidationError(f"{what} must be an integer >= {minimum} or None, got {value!r}")
    return value


@dataclass(frozen=True)
class PruneBounds:
    """Mastra's ``PruneOptions`` minus ``retention``: per table, at most ``max_batches`` batches and
    ``max_rows`` rows; ``pause_ms`` between batches; ``signal`` stops between batches."""

    max_batches: int | None = None
    max_rows: int | None = None
    pause_ms: float = 0
    signal: StopSignal | None = None

    def stopped(self) -> bool:
        return self.signal is not None and self.signal.is_set()


DeleteIds = Callable[[list[str]], Awaitable[None]]


async def prune(
    storage: MemoryStorage,
    policies: Mapping[str, RetentionPolicy],
    bounds: PruneBounds,
    *,
    delete_messages: DeleteIds,
    delete_threads: DeleteIds,
    now: datetime | None = None,
) -> list[PruneResult]:
    """Prune each configured table in Mastra's order, one batch loop per table (Mastra's
    ``runRetentionBatches``): a batch finds up to ``batch_size`` aged rows (fewer when ``max_rows`` is near)
    and deletes them; a batch that finds fewer than it asked for ends the table with ``done=True``."""
    now = now or utc_now()
    results: list[PruneResult] = []
    for key in ORDER:
        policy = policies.get(key)
        if policy is None:
            continue
        if bounds.stopped():
            results.append(PruneResult(domain="memory", table=TABLES[key], deleted=0, done=False))
            continue
        cutoff = now - policy.max_age
        batch: Callable[[int], Awaitable[int]]
        if key == "messages":
            batch = _MessageBatch(storage, await _all_thread_ids(storage), cutoff, delete_messages)
        else:
            batch = _ThreadBatch(storage, cutoff, delete_threads)
        deleted, done = await _batches(batch, policy.batch_size, bounds)
        results.append(PruneResult(domain="memory", table=TABLES[key], deleted=deleted, done=done))
    return results


@dataclass(frozen=True)
class _MessageBatch:
    """Deletes up to ``limit`` messages created before ``cutoff`` in ``thread_ids`` (listed once per call:
    a thread created during the call is pruned by the next one)."""

    storage: MemoryStorage
    thread_ids: list[str]
    cutoff: datetime
    delete: DeleteIds

    async def __call__(self, limit: int) -> int:
        ids = await _aged_message_ids(self.storage, self.thread_ids, self.cutoff, limit)
        if ids:
            await self.delete(ids)
        return len(ids)


@dataclass(frozen=True)
class _ThreadBatch:
    """Deletes up to ``limit`` threads created before ``cutoff``."""

    storage: MemoryStorage
    cutoff: datetime
    delete: DeleteIds

    async def __call__(self, limit: int) -> int:
        ids = await _aged_thread_ids(self.storage, self.cutoff, limit)
        if ids:
            await self.delete(ids)
        return len(ids)


async def _batches(
    batch: Callable[[int], Awaitable[int]], size: int, bounds: PruneBounds
) -> tuple[int, bool]:
    deleted = batches = 0
    while True:
        if bounds.stopped() or (bounds.max_batches is not None and batches >= bounds.max_batches):
            return deleted, False
        limit = size
        if bounds.max_rows is not None:
            remaining = bounds.max_rows - deleted
            if remaining <= 0:
                return deleted, False
            limit = min(limit, remaining)
        affected = await batch(limit)
        deleted += affected
        batches += 1
        if affected < limit:
            return deleted, True
        if bounds.pause_ms > 0:
            await asyncio.sleep(bounds.pause_ms / 1000)


async def _all_thread_ids(storage: MemoryStorage) -> list[str]:
    # Every thread, archived ones included: retention is by age, not by visibility.
    page = await storage.list_threads(per_page=False, include_archived=True)
    return [t.id for t in page.threads]


async def _aged_message_ids(
    storage: MemoryStorage, thread_ids: Sequence[str], cutoff: datetime, limit: int
) -> list[str]:
    """Up to ``limit`` ids of messages created strictly before ``cutoff`` (oldest first per chunk)."""
    found: list[str] = []
    for start in range(0, len(thread_ids), _THREAD_CHUNK):
        if len(found) >= limit:
            break
        page = await storage.list_messages(
            list(thread_ids[start : start + _THREAD_CHUNK]),
            per_page=limit - len(found),
            filter={"date_range": {"end": cutoff, "end_exclusive": True}},
            order_by={"field": "created_at", "direction": "ASC"},
            include_total=False,
        )
        found.extend(m.id for m in page.messages)
    return found


async def _aged_thread_ids(storage: MemoryStorage, cutoff: datetime, limit: int) -> list[str]:
    """Up to ``limit`` ids of threads created strictly before ``cutoff``, oldest first."""
    page = await storage.list_threads(
        per_page=limit, order_by={"field": "created_at", "direction": "ASC"}, include_archived=True
    )
    return [t.id for t in page.threads if t.created_at < cutoff]
