"""The atlas mode's requests, stage by stage (Atlas cannot run here): the search index definition, the
``$vectorSearch`` pipeline with its pre-filter, and the conversion of Atlas scores to portable ones."""

from __future__ import annotations

import math

import pytest
from mastra_memory.vector import IndexConfig

from mastra_memory_mongodb import MongoDBSettings
from mastra_memory_mongodb.store import SEARCH_INDEX, MongoDBVector, portable_score, vector_search_pipeline


def test_pipeline_with_prefilter_and_candidates() -> None:
    pipeline = vector_search_pipeline(
        [1.0, 0.5],
        10,
        prefilter={"metadata.thread_id": {"$eq": "t1"}},
        num_candidates=200,
        exact=False,
        include_vector=False,
    )
    assert pipeline == [
        {
            "$vectorSearch": {
                "index": SEARCH_INDEX,
                "path": "embedding",
                "queryVector": [1.0, 0.5],
                "limit": 10,
                "numCandidates": 200,
                "filter": {"metadata.thread_id": {"$eq": "t1"}},
            }
        },
        {"$project": {"metadata": 1, "score": {"$meta": "vectorSearchScore"}}},
    ]


def test_exact_pipeline_has_no_candidates() -> None:
    stage = vector_search_pipeline(
        [1.0], 3, prefilter=None, num_candidates=None, exact=True, include_vector=True
    )
    assert stage[0]["$vectorSearch"] == {
        "index": SEARCH_INDEX,
        "path": "embedding",
        "queryVector": [1.0],
        "limit": 3,
        "exact": True,
    }
    assert stage[1]["$project"]["embedding"] == 1


@pytest.mark.parametrize(
    ("metric", "cos_or_distance", "atlas"),
    [("cosine", 0.6, (1 + 0.6) / 2), ("cosine", -1.0, 0.0), ("dotproduct", 2.5, (1 + 2.5) / 2)],
)
def test_scores_are_converted_back(metric: str, cos_or_distance: float, atlas: float) -> None:
    assert math.isclose(portable_score(metric, atlas), cos_or_distance)  # type: ignore[arg-type]


def test_euclidean_scores_are_already_portable() -> None:
    assert portable_score("euclidean", 1 / (1 + 2.0)) == 1 / 3


def test_search_index_definition_declares_filter_fields() -> None:
    store = MongoDBVector(
        MongoDBSettings(url="mongodb://127.0.0.1:1", search_mode="atlas", filter_fields=("year", "thread_id"))
    )
    definition = store._search_definition(384, "dotproduct", IndexConfig(m=32, ef_construction=200))
    assert definition == {
        "fields": [
            {
                "type": "vector",
                "path": "embedding",
                "numDimensions": 384,
                "similarity": "dotProduct",
                "indexingMethod": "hnsw",
                "hnswOptions": {"maxEdges": 32, "numEdgeCandidates": 200},
            },
            {"type": "filter", "path": "metadata.thread_id"},
            {"type": "filter", "path": "metadata.resource_id"},
            {"type": "filter", "path": "metadata.year"},
        ]
    }


def test_candidates_scale_with_top_k_within_atlas_bounds() -> None:
    store = MongoDBVector(MongoDBSettings(url="mongodb://127.0.0.1:1", num_candidates_factor=20))
    assert store._num_candidates(3, {}) == 100
    assert store._num_candidates(50, {}) == 1000
    assert store._num_candidates(2000, {}) == 10_000
    assert store._num_candidates(10, {"num_candidates": 30}) == 30
    assert store._num_candidates(10, {"num_candidates": 5}) == 10
