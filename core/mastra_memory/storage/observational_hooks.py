"""The hooks of the observational-memory template and the arithmetic it shares (docs/spec.md §4.8).

:class:`ObservationalMemoryHooks` is what a backend implements for :mod:`.observational`;
:func:`plan_activation` chooses how many buffered chunks an activation moves and :func:`deep_merge` merges
a config patch, both as Mastra's stores do.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Literal

from ..errors import StorageError
from .hooks import StorageHooks
from .observational_records import (
    BufferedObservationChunk,
    ObservationalMemoryRecord,
    OMKey,
    SwapBufferedToActiveInput,
)

__all__ = [
    "GenerationsQuery",
    "ObservationalMemoryHooks",
    "ObservationalMemoryNotFoundError",
    "deep_merge",
    "plan_activation",
]


class ObservationalMemoryNotFoundError(StorageError, LookupError):
    """No observational-memory record has that id (it was cleared, or never existed)."""

    default_category = "USER"


def deep_merge(target: Mapping[str, Any], source: Mapping[str, Any]) -> dict[str, Any]:
    """``source`` merged into a copy of ``target``: nested dicts merge, anything else replaces (Mastra's
    ``deepMergeConfig``)."""
    merged = copy.deepcopy(dict(target))
    for key, value in source.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def plan_activation(chunks: list[BufferedObservationChunk], args: SwapBufferedToActiveInput) -> int:
    """How many leading chunks an activation moves (Mastra's boundary choice, docs/spec.md §4.8).

    The target is ``current_pending_tokens - message_tokens_threshold * (1 - activation_ratio)`` message
    tokens. Prefer the smallest prefix at or over the target (unless it overshoots by more than 95 % of
    the retention floor), else the largest under it, never leaving fewer than ``min(1000, floor)``
    pending tokens when another choice exists; at least one chunk.
    """
    floor = args.message_tokens_threshold * (1 - args.activation_ratio)
    target = max(0.0, args.current_pending_tokens - floor)
    over = under = 0
    over_tokens = under_tokens = 0
    total = 0
    for boundary, chunk in enumerate(chunks, start=1):
        total += chunk.message_tokens
        if total >= target:
            if over == 0 or total < over_tokens:
                over, over_tokens = boundary, total
        elif total > under_tokens:
            under, under_tokens = boundary, total
    keep = min(1000.0, floor)
    over_leaves = args.current_pending_tokens - over_tokens
    if over and over_leaves >= keep and (args.force_max_activation or over_tokens - target <= floor * 0.95):
        return over
    if under and args.current_pending_tokens - under_tokens >= keep:
        return under
    return over or 1


@dataclass(frozen=True)
class GenerationsQuery:
    """What `ObservationalMemoryHooks._om_find_generations` reads: the records of ``key`` (its
    ``lookup_key`` and ``resource_id``) newest generation first, then newest ``created_at``."""

    key: OMKey
    #: Inclusive bounds on ``created_at``: ``(">=", start)`` and/or ``("<=", end)``.
    created: tuple[tuple[Literal[">=", "<="], datetime], ...]
    #: At most this many (never 0), after skipping ``offset``; ``None``: all.
    limit: int | None
    offset: int


class ObservationalMemoryHooks(StorageHooks):
    """The hooks of OM storage. A backend sets ``supports_observational_memory = True`` and implements all
    five; field names are the record's (`OM_COLUMNS`), timestamps are
    datetimes, ``json`` fields plain data."""

    #: Mastra's ``supportsObservationalMemory``.
    supports_observational_memory: ClassVar[bool] = False

    async def _om_load(self, tx: Any, om_id: str, *, lock: bool = False) -> ObservationalMemoryRecord | None:
        """The record with that id, or ``None``; with ``lock``, held against other writers until the unit
        ends where the backend can."""
        raise NotImplementedError

    async def _om_generations(
        self,
        tx: Any,
        key: OMKey,
        *,
        limit: int | None,
        offset: int = 0,
        start: datetime | None = None,
        end: datetime | None = None,
    ) -> list[ObservationalMemoryRecord]:
        """Records of ``key.lookup_key`` *and* ``key.resource_id``, ``created_at`` within ``[start, end]``
        when given, newest generation first, skipping ``offset``, at most ``limit`` (``None``: all).
        Not a hook: the backend's `_om_find_generations` reads them."""
        if limit == 0 or len(self._existing([key.lookup_key, key.resource_id])) < 2:
            return []  # an id the backend cannot hold has no record
        bounds: tuple[tuple[Literal[">=", "<="], datetime | None], ...] = ((">=", start), ("<=", end))
        created = tuple((op, bound) for op, bound in bounds if bound is not None)
        return await self._om_find_generations(tx, GenerationsQuery(key, created, limit, offset))

    async def _om_find_generations(self, tx: Any, query: GenerationsQuery) -> list[ObservationalMemoryRecord]:
        """The records ``query`` asks for, in its order (``generation_count`` then ``created_at``
        descending, then ``id`` where the backend can)."""
        raise NotImplementedError

    async def _om_insert(self, tx: Any, values: Mapping[str, Any]) -> bool:
        """Insert a row given as `om_values` makes it; ``False`` (and nothing written) when a row with that
        id exists, decided by the id's unique index so that of two concurrent inserts of one id exactly one
        succeeds (``ON CONFLICT (id) DO NOTHING``, a duplicate-key error)."""
        raise NotImplementedError

    async def _om_update(
        self, tx: Any, om_id: str, changes: Mapping[str, Any], expect: Mapping[str, Any]
    ) -> bool:
        """Set ``changes`` on the row with that id *only if* each field of ``expect`` still holds its value
        (one conditional write: ``UPDATE ... WHERE id = ? AND f = ?``, ``update_one`` with a filter);
        return whether a row was written. ``expect`` holds booleans and ``updated_at`` only."""
        raise NotImplementedError

    async def _om_delete(self, tx: Any, key: OMKey) -> None:
        """Delete every record of ``key.lookup_key`` and ``key.resource_id``."""
        raise NotImplementedError
