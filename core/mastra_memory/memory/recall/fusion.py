"""Fusing the vector and the lexical ranking of a hybrid recall (``semanticRecall.mode`` ``"hybrid"``, or
``"auto"`` on a store with a lexical index).

Each side is a list of ``(message id, score)``, best first. The fusions here are the ones measured on
LoCoMo (docs/memory.md "Which embedder and mode to pick", ``nox -s quality -- --fusions``). Recall uses
the one measured best for its embedder (:data:`MEASURED_FUSIONS`, by model id: how much an embedder's
vectors add to BM25 depends on the embedder) and :data:`DEFAULT_FUSION` for an embedder not measured. The
others stay for the benchmark, which re-measures them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

Ranking = Sequence[tuple[str, float]]
Fused = list[tuple[str, float]]


def rrf(vector: Ranking, lexical: Ranking, *, k: float = 60.0, lexical_weight: float = 1.0) -> Fused:
    """Reciprocal-rank fusion: ``1/(k + rank)`` summed over the sides (the lexical side weighted)."""
    scores: dict[str, float] = {}
    for weight, ranking in ((1.0, vector), (lexical_weight, lexical)):
        for rank, (mid, _) in enumerate(ranking, start=1):
            scores[mid] = scores.get(mid, 0.0) + weight / (k + rank)
    return _ordered(scores)


def weighted_scores(vector: Ranking, lexical: Ranking, *, lexical_weight: float = 0.5) -> Fused:
    """Score fusion: each side's scores min-max scaled to [0, 1] over its candidates (0 where a message is
    not among them), then ``(1 - w) * vector + w * lexical``."""
    v, lex = _scaled(vector), _scaled(lexical)
    scores = {
        mid: (1 - lexical_weight) * v.get(mid, 0.0) + lexical_weight * lex.get(mid, 0.0) for mid in {*v, *lex}
    }
    return _ordered(scores)


def lexical_rerank(vector: Ranking, lexical: Ranking, *, lexical_weight: float = 0.5) -> Fused:
    """The vector candidates only, re-ranked by :func:`weighted_scores` (lexical scores of the others are
    ignored): BM25 re-ranking of what the embedder found."""
    candidates = {mid for mid, _ in vector}
    fused = weighted_scores(
        vector, [(m, s) for m, s in lexical if m in candidates], lexical_weight=lexical_weight
    )
    return fused


def z_scores(vector: Ranking, lexical: Ranking, *, lexical_weight: float = 0.5) -> Fused:
    """Score fusion over z-scores: each side's scores standardised over its candidates (a message not
    among them gets that side's lowest), then ``(1 - w) * vector + w * lexical``."""
    v, lex = _standardised(vector), _standardised(lexical)
    v_low, lex_low = min(v.values(), default=0.0), min(lex.values(), default=0.0)
    scores = {
        mid: (1 - lexical_weight) * v.get(mid, v_low) + lexical_weight * lex.get(mid, lex_low)
        for mid in {*v, *lex}
    }
    return _ordered(scores)


def _standardised(ranking: Ranking) -> dict[str, float]:
    if not ranking:
        return {}
    values = [s for _, s in ranking]
    mean = sum(values) / len(values)
    spread = (sum((s - mean) ** 2 for s in values) / len(values)) ** 0.5
    return {mid: (s - mean) / spread if spread > 0 else 0.0 for mid, s in ranking}


def _scaled(ranking: Ranking) -> dict[str, float]:
    if not ranking:
        return {}
    values = [s for _, s in ranking]
    low, high = min(values), max(values)
    span = high - low
    return {mid: (s - low) / span if span > 0 else 1.0 for mid, s in ranking}


def _ordered(scores: dict[str, float]) -> Fused:
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


FUSIONS: dict[str, Callable[[Ranking, Ranking], Fused]] = {
    "rrf-60": lambda v, lex: rrf(v, lex, k=60),
    "rrf-10": lambda v, lex: rrf(v, lex, k=10),
    "rrf-60-lex2": lambda v, lex: rrf(v, lex, k=60, lexical_weight=2.0),
    "rrf-60-lex0.5": lambda v, lex: rrf(v, lex, k=60, lexical_weight=0.5),
    "scores-0.3": lambda v, lex: weighted_scores(v, lex, lexical_weight=0.3),
    "scores-0.5": lambda v, lex: weighted_scores(v, lex, lexical_weight=0.5),
    "scores-0.7": lambda v, lex: weighted_scores(v, lex, lexical_weight=0.7),
    "scores-0.6": lambda v, lex: weighted_scores(v, lex, lexical_weight=0.6),
    "scores-0.75": lambda v, lex: weighted_scores(v, lex, lexical_weight=0.75),
    "scores-0.8": lambda v, lex: weighted_scores(v, lex, lexical_weight=0.8),
    "scores-0.85": lambda v, lex: weighted_scores(v, lex, lexical_weight=0.85),
    "scores-0.9": lambda v, lex: weighted_scores(v, lex, lexical_weight=0.9),
    "rrf-10-lex2": lambda v, lex: rrf(v, lex, k=10, lexical_weight=2.0),
    "rrf-5-lex1.5": lambda v, lex: rrf(v, lex, k=5, lexical_weight=1.5),
    "rerank-0.5": lambda v, lex: lexical_rerank(v, lex, lexical_weight=0.5),
    "scores-0.65": lambda v, lex: weighted_scores(v, lex, lexical_weight=0.65),
    "z-0.6": lambda v, lex: z_scores(v, lex, lexical_weight=0.6),
    "z-0.8": lambda v, lex: z_scores(v, lex, lexical_weight=0.8),
    "rrf-2-lex4": lambda v, lex: rrf(v, lex, k=2, lexical_weight=4.0),
    "rrf-3-lex4": lambda v, lex: rrf(v, lex, k=3, lexical_weight=4.0),
    "rrf-5-lex3": lambda v, lex: rrf(v, lex, k=5, lexical_weight=3.0),
    "rrf-5-lex6": lambda v, lex: rrf(v, lex, k=5, lexical_weight=6.0),
}
#: The fusion of an embedder not measured on LoCoMo: min-max scaled scores, lexical weight 0.7.
DEFAULT_FUSION = "scores-0.7"
#: The fusion measured best on LoCoMo's turn recall@5 per offline embedder, chosen from a plateau of
#: neighbours that measure about the same (docs/memory.md). local/wordllama's vectors add little to BM25:
#: reciprocal ranks with the lexical side weighted 4 (k 3) is the only family at or above BM25 alone;
#: MiniLM's add more: scaled scores, lexical weight 0.65.
MEASURED_FUSIONS: dict[str, str] = {
    "local/wordllama": "rrf-3-lex4",
    "local/all-minilm-l6-v2": "scores-0.65",
}
#: Candidates each side contributes before fusion (the fused list is then cut to ``topK``).
CANDIDATES = 50


def fusion_for(model_id: object) -> str:
    """The fusion hybrid recall uses with the embedder of ``model_id``: its measured one, else
    :data:`DEFAULT_FUSION`."""
    return MEASURED_FUSIONS.get(model_id, DEFAULT_FUSION) if isinstance(model_id, str) else DEFAULT_FUSION


def fuse(vector: Ranking, lexical: Ranking, method: str = DEFAULT_FUSION) -> Fused:
    """The fused ranking, best first, by ``method`` (a key of :data:`FUSIONS`)."""
    return FUSIONS[method](vector, lexical)
