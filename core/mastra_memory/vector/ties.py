"""Ties at the ``top_k`` cut-off, for stores whose engine ranks by score alone (docs/spec.md §3.1).

Results are ordered by score and then by id, and the engine does not know the second key: among records
tied with the ``top_k``-th it may return any. So a store asks for a few more (:data:`TIE_MARGIN`), and for
more still while the last one returned ties with the last one kept; the template then sorts and cuts.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, TypeVar

__all__ = ["TIE_MARGIN", "past_ties"]

H = TypeVar("H")

#: Extra results asked for, so that ties at the ``top_k`` cut-off can be ordered by id.
TIE_MARGIN: Final = 4


async def past_ties(
    fetch: Callable[[int], Awaitable[Sequence[H]]],
    top_k: int,
    score: Callable[[H], Any],
    most: int | None = None,
    first: int | None = None,
) -> Sequence[H]:
    """``fetch(n)``, the ``n`` best hits, for ``n`` from ``top_k + TIE_MARGIN`` (or ``first``) doubling
    until fewer than ``n`` come back, the last one no longer ties with the ``top_k``-th by ``score``, or
    ``n`` reaches ``most`` (the engine's own limit)."""
    cap = sys.maxsize if most is None else most
    n = min(top_k + TIE_MARGIN, cap) if first is None else first
    while True:
        hits = await fetch(n)
        if len(hits) < n or n >= cap or score(hits[top_k - 1]) != score(hits[-1]):
            return hits
        n = min(n * 2, cap)
