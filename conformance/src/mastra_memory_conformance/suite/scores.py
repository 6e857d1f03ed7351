"""Portable scores (docs/spec.md §3.4): per metric, recomputed by brute force from the stored vectors.

``ScoresSuite`` writes random vectors of varied norms (plus the query itself and three copies of one
vector), queries with ``include_vector=True`` and checks, for every metric the manifest declares:

* each score is within 1e-4 of :func:`mastra_memory.scores.exact_scores` recomputed in float64 from the
  vector the adapter returns (1e-2 when the adapter declares ``half-precision`` or ``quantised``);
* scores are in the metric's range, the query's own vector scores 1.0 (cosine, euclidean) or ``|q|²``;
* results are best first: scores non-increasing, equal scores ordered by id;
* ``top_k`` takes the best records, and a score threshold keeps exactly the records brute force keeps.

A metric the manifest does not declare must make ``create_index`` raise ("unsupported metric").
"""

from __future__ import annotations

import itertools
from typing import Final

import numpy as np
import pytest

from mastra_memory.capabilities import Metric
from mastra_memory.errors import CapabilityError, ValidationError
from mastra_memory.scores import exact_scores
from mastra_memory.vector import QueryResult

from ..plugin import set_item
from ..report import Outcome
from . import METRICS, IndexUnderTest, Item, VectorSuiteBase, score_tolerance

__all__ = ["ScoresSuite"]

RECORDS: Final = 24
TIES: Final = ("tie-b", "tie-a", "tie-c")


def _data(dimension: int) -> tuple[list[Item], list[float]]:
    rng = np.random.default_rng(20240901)
    query = (rng.normal(size=dimension) * 1.5).tolist()
    items = [
        Item(f"r{i:02d}", (rng.normal(size=dimension) * rng.uniform(0.3, 2.5)).tolist(), {"i": i})
        for i in range(RECORDS)
    ]
    tie = (rng.normal(size=dimension)).tolist()
    items += [Item(rid, tie, {"tie": True}) for rid in TIES]
    items.append(Item("self", list(query), {"self": True}))
    return items, query


def _ordered(hits: list[QueryResult]) -> None:
    for before, after in itertools.pairwise(hits):
        assert before.score > after.score or (before.score == after.score and before.id < after.id), (
            f"results must be best first with ties by id: {before.id} ({before.score!r}) came before "
            f"{after.id} ({after.score!r})"
        )


@pytest.mark.asyncio
class ScoresSuite(VectorSuiteBase):
    """Portable scores against brute force, for each metric."""

    @pytest.mark.parametrize("metric", METRICS)
    async def test_scores_match_brute_force(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, outcome: Outcome, metric: Metric
    ) -> None:
        set_item(request, metric)
        items, query = _data(idx.dimension)
        if metric not in idx.capabilities.metrics:
            with pytest.raises((CapabilityError, ValidationError), match="unsupported metric"):
                await idx.store.create_index(idx.name, idx.dimension, metric)
            outcome.unsupported(metric, f"create_index rejects the undeclared metric {metric}")
            return
        await idx.load(items, metric=metric)
        assert (await idx.store.describe_index(idx.name)).metric == metric
        tolerance = score_tolerance(idx.capabilities)
        top_k = idx.limit(len(items))
        hits = await idx.store.query(idx.name, query, top_k=top_k, include_vector=True)
        assert len(hits) == top_k

        stored = np.array([hit.vector for hit in hits], dtype=np.float64)
        expected = exact_scores(stored, np.array(query, dtype=np.float64), metric)
        for hit, want in zip(hits, expected.tolist(), strict=True):
            assert abs(hit.score - want) <= tolerance, (
                f"{metric}: {hit.id} scored {hit.score!r}, brute force from the stored vector gives {want!r}"
            )
        if metric == "cosine":
            assert all(-1 - tolerance <= h.score <= 1 + tolerance for h in hits)
        if metric == "euclidean":
            assert all(0 < h.score <= 1 + tolerance for h in hits)
        by_id = {h.id: h for h in hits}
        if "self" in by_id:
            own = {"cosine": 1.0, "euclidean": 1.0, "dotproduct": float(np.dot(query, query))}[metric]
            assert abs(by_id["self"].score - own) <= tolerance * max(1.0, abs(own)), (
                f"{metric}: the query's own vector scored {by_id['self'].score!r}, expected {own!r}"
            )

        _ordered(hits)
        ties = [h.id for h in hits if h.id in TIES]
        if len(ties) == len(TIES):
            assert ties == sorted(TIES), f"three identical vectors must come back ordered by id, got {ties}"
            positions = [i for i, h in enumerate(hits) if h.id in TIES]
            assert positions == list(range(positions[0], positions[0] + len(TIES))), (
                "tied records are adjacent"
            )

        # Brute force over what was written decides which records are the best five.
        written = np.array([item.vector for item in items], dtype=np.float64)
        truth = exact_scores(written, np.array(query, dtype=np.float64), metric)
        fifth = float(np.sort(truth)[::-1][4])
        best = await idx.store.query(idx.name, query, top_k=5)
        assert len(best) == 5
        score_of = {item.id: float(s) for item, s in zip(items, truth.tolist(), strict=True)}
        for hit in best:
            assert score_of[hit.id] >= fifth - tolerance, (
                f"{metric}: top_k=5 returned {hit.id} (exact {score_of[hit.id]!r}), "
                f"below the fifth best {fifth!r}"
            )
        assert [h.id for h in best] == [h.id for h in hits[:5]], "top_k=5 is the head of the full ranking"

        # A score threshold keeps the same records as brute force does (away from the threshold itself).
        threshold = float(np.median(truth))
        kept = {h.id for h in hits if h.score >= threshold}
        surely = {rid for rid, s in score_of.items() if s >= threshold + tolerance}
        maybe = {rid for rid, s in score_of.items() if s >= threshold - tolerance}
        assert surely <= kept <= maybe, (
            f"{metric}: threshold {threshold!r} keeps {sorted(kept)}; brute force keeps {sorted(surely)} "
            f"(up to {sorted(maybe - surely)} within tolerance)"
        )
