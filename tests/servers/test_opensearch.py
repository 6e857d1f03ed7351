"""Smoke test of the native OpenSearch target through opensearch-py: a ``knn_vector`` field on the k-NN
plugin's Lucene engine (cosine), the docs/spec.md §8.1 products bulk-indexed with their metadata, and k-NN
queries
with ``bool`` filters whose hits must equal what the reference evaluator says the equivalent filter means."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from mastra_memory_opensearch.testing.server import KNN_VERSION, OPENSEARCH_VERSION

from mastra_memory.filters.evaluate import evaluate
from mastra_memory_conformance.datasets import D9_IDS, products, query_vector
from mastra_memory_conformance.missing import missing

# The module fixture builds the server on a fresh machine (Maven / Go, minutes): a generous per-test bound.
pytestmark = pytest.mark.timeout(1200)

try:
    from opensearchpy import OpenSearch, helpers
except ImportError:  # pragma: no cover - depends on the environment
    missing("the client opensearch-py is not installed (pip install opensearch-py)")

DIMENSION = 8
INDEX = "products"


@pytest.fixture(scope="module")
def client(opensearch_url: str) -> Iterator[OpenSearch]:
    client = OpenSearch(hosts=[opensearch_url], timeout=60)
    yield client
    client.close()


@pytest.fixture(scope="module")
def products_index(client: OpenSearch) -> str:
    """The D9 products, indexed with a Lucene-engine cosine ``knn_vector`` and typed metadata fields."""
    client.indices.create(
        index=INDEX,
        body={
            "settings": {"index": {"knn": True, "number_of_shards": 1, "number_of_replicas": 0}},
            "mappings": {
                "dynamic": "strict",
                "properties": {
                    "embedding": {
                        "type": "knn_vector",
                        "dimension": DIMENSION,
                        "method": {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil"},
                    },
                    "metadata": {
                        "properties": {
                            "name": {"type": "keyword"},
                            "price": {"type": "double"},
                            "rating": {"type": "double"},
                            "category": {"type": "keyword"},
                            "tags": {"type": "keyword"},
                            "available": {"type": "boolean"},
                            "description": {"type": "keyword"},
                            "reviews": {
                                "properties": {"score": {"type": "long"}, "author": {"type": "keyword"}}
                            },
                        }
                    },
                },
            },
        },
    )
    actions = [
        {
            "_index": INDEX,
            "_id": record.id,
            "_source": {"embedding": record.vector(DIMENSION), "metadata": record.metadata},
        }
        for record in products("D9")
    ]
    indexed, errors = helpers.bulk(client, actions, refresh="wait_for")
    assert (indexed, errors) == (len(actions), [])
    return INDEX


def _knn(
    client: OpenSearch, index: str, k: int, filter: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    knn: dict[str, Any] = {"vector": query_vector(DIMENSION), "k": k}
    if filter is not None:
        knn["filter"] = filter
    reply = client.search(index=index, body={"size": k, "query": {"knn": {"embedding": knn}}})
    hits: list[dict[str, Any]] = reply["hits"]["hits"]
    return hits


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_the_node_is_the_pinned_version_with_the_knn_plugin(client: OpenSearch) -> None:
    assert client.info()["version"]["number"] == OPENSEARCH_VERSION
    components = {row["component"] for row in client.cat.plugins(format="json")}
    assert components == {
        "org.opensearch.knn.plugin.KNNPlugin",
        "org.opensearch.painless.PainlessPlugin",
        "org.opensearch.index.reindex.ReindexPlugin",
        "org.opensearch.transport.Netty4Plugin",
    }
    assert KNN_VERSION.startswith(OPENSEARCH_VERSION + ".")


def test_the_vector_field_uses_the_lucene_engine(client: OpenSearch, products_index: str) -> None:
    mapping = client.indices.get_mapping(index=products_index)[products_index]["mappings"]
    field = mapping["properties"]["embedding"]
    assert field["type"] == "knn_vector"
    assert field["dimension"] == DIMENSION
    assert field["method"]["engine"] == "lucene"
    assert field["method"]["space_type"] == "cosinesimil"
    assert client.count(index=products_index)["count"] == len(D9_IDS)


def test_knn_ranks_by_cosine_with_the_lucene_score(client: OpenSearch, products_index: str) -> None:
    hits = _knn(client, products_index, k=10)
    query = query_vector(DIMENSION)
    cosine = {r.id: _cosine(query, r.vector(DIMENSION)) for r in products("D9")}
    expected_order = sorted(cosine, key=lambda id: -cosine[id])
    assert [hit["_id"] for hit in hits] == expected_order
    for hit in hits:
        # The Lucene engine's cosinesimil score is (1 + cosine) / 2.
        assert hit["_score"] == pytest.approx((1 + cosine[hit["_id"]]) / 2, abs=1e-5)
    assert hits[0]["_source"]["metadata"] == next(
        r.metadata for r in products("D9") if r.id == hits[0]["_id"]
    )


@pytest.mark.parametrize(
    ("script", "score_of_cosine"),
    [
        (
            {
                "lang": "knn",
                "source": "knn_score",
                "params": {"field": "embedding", "space_type": "cosinesimil"},
            },
            lambda cos: (1 + cos) / 2,
        ),
        (
            {
                "lang": "painless",
                "source": "cosineSimilarity(params.query_value, doc['embedding'])",
                "params": {},
            },
            lambda cos: cos,
        ),
    ],
    ids=["knn_score script", "painless cosineSimilarity"],
)
def test_exact_scoring_scripts(
    client: OpenSearch, products_index: str, script: dict[str, Any], score_of_cosine: Callable[[float], float]
) -> None:
    """Exact (brute-force) scoring, with a filter as the script query: k-NN's own script engine, and its
    painless functions (which the launcher wires into painless)."""
    query = query_vector(DIMENSION)
    body = {
        "size": 10,
        "query": {
            "script_score": {
                "query": {"bool": {"filter": [{"term": {"metadata.category": "home"}}]}},
                "script": {**script, "params": {**script["params"], "query_value": query}},
            }
        },
    }
    hits = client.search(index=products_index, body=body)["hits"]["hits"]
    cosine = {
        r.id: _cosine(query, r.vector(DIMENSION)) for r in products("D9") if r.metadata["category"] == "home"
    }
    assert [hit["_id"] for hit in hits] == sorted(cosine, key=lambda id: -cosine[id])
    for hit in hits:
        assert hit["_score"] == pytest.approx(score_of_cosine(cosine[hit["_id"]]), abs=1e-5)


def test_knn_k_limits_the_hits(client: OpenSearch, products_index: str) -> None:
    everything = [hit["_id"] for hit in _knn(client, products_index, k=10)]
    assert [hit["_id"] for hit in _knn(client, products_index, k=3)] == everything[:3]


# Each pair: an OpenSearch bool filter and the filter of docs/spec.md §2 it stands for. The k-NN query with
# the bool
# filter must return exactly the records the reference evaluator matches with the §2 filter.
BOOL_FILTERS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("term keyword", {"term": {"metadata.category": "electronics"}}, {"category": "electronics"}),
    ("term in a list", {"term": {"metadata.tags": "sale"}}, {"tags": "sale"}),
    ("terms", {"terms": {"metadata.category": ["books", "home"]}}, {"category": {"$in": ["books", "home"]}}),
    (
        "range",
        {"range": {"metadata.price": {"gte": 20, "lte": 80}}},
        {"price": {"$gte": 20, "$lte": 80}},
    ),
    ("exists", {"exists": {"field": "metadata.description"}}, {"description": {"$exists": True}}),
    (
        "must_not exists: null or missing",
        {"bool": {"must_not": [{"exists": {"field": "metadata.price"}}]}},
        {"price": None},
    ),
    (
        "must_not term includes missing fields",
        {"bool": {"must_not": [{"term": {"metadata.available": True}}]}},
        {"available": {"$ne": True}},
    ),
    (
        "bool with term, range, exists and must_not",
        {
            "bool": {
                "filter": [
                    {"term": {"metadata.category": "home"}},
                    {"range": {"metadata.price": {"gte": 50}}},
                    {"exists": {"field": "metadata.rating"}},
                ],
                "must_not": [{"term": {"metadata.tags": "luxury"}}],
            }
        },
        {"category": "home", "price": {"$gte": 50}, "rating": {"$exists": True}, "tags": {"$ne": "luxury"}},
    ),
    (
        "should: or",
        {
            "bool": {
                "should": [
                    {"range": {"metadata.price": {"gt": 100}}},
                    {"term": {"metadata.category": "books"}},
                ],
                "minimum_should_match": 1,
            }
        },
        {"$or": [{"price": {"$gt": 100}}, {"category": "books"}]},
    ),
]


@pytest.mark.parametrize(
    ("bool_filter", "spec_filter"), [p[1:] for p in BOOL_FILTERS], ids=[p[0] for p in BOOL_FILTERS]
)
def test_filtered_knn_returns_what_the_reference_evaluator_matches(
    client: OpenSearch, products_index: str, bool_filter: dict[str, Any], spec_filter: dict[str, Any]
) -> None:
    expected = {r.id for r in products("D9") if evaluate(spec_filter, r.metadata)}
    assert expected, "each pair must select some records, or the comparison proves nothing"
    returned = [hit["_id"] for hit in _knn(client, products_index, k=10, filter=bool_filter)]
    assert len(returned) == len(set(returned))
    assert set(returned) == expected
    # Filtering keeps the similarity order of the unfiltered query.
    everything = [hit["_id"] for hit in _knn(client, products_index, k=10)]
    assert returned == [id for id in everything if id in expected]


def test_the_combined_bool_filter_selects_c_and_d(client: OpenSearch, products_index: str) -> None:
    """The issue's example, spelled out: home, price >= 50, rated, not luxury -> C and D (H is luxury)."""
    combined = next(p[1] for p in BOOL_FILTERS if p[0] == "bool with term, range, exists and must_not")
    assert {hit["_id"] for hit in _knn(client, products_index, k=10, filter=combined)} == {"C", "D"}


def test_update_and_delete_by_query_then_knn(client: OpenSearch) -> None:
    """What an adapter's update/delete by filter needs: the reindex module, and painless for the update."""
    index = "scratch"
    client.indices.create(
        index=index,
        body={
            "settings": {"index": {"knn": True}},
            "mappings": {
                "properties": {
                    "embedding": {
                        "type": "knn_vector",
                        "dimension": DIMENSION,
                        "method": {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil"},
                    },
                    "metadata": {"properties": {"category": {"type": "keyword"}}},
                }
            },
        },
    )
    helpers.bulk(
        client,
        [
            {
                "_index": index,
                "_id": r.id,
                "_source": {"embedding": r.vector(DIMENSION), "metadata": r.metadata},
            }
            for r in products("D9")
        ],
        refresh="wait_for",
    )
    updated = client.update_by_query(
        index=index,
        body={
            "query": {"term": {"metadata.category": "books"}},
            "script": {
                "lang": "painless",
                "source": "ctx._source.metadata.category = params.to",
                "params": {"to": "novels"},
            },
        },
        refresh=True,
    )
    assert updated["updated"] == 2
    novels = client.search(index=index, body={"query": {"term": {"metadata.category": "novels"}}})
    assert {hit["_id"] for hit in novels["hits"]["hits"]} == {"E", "G"}
    deleted = client.delete_by_query(
        index=index, body={"query": {"term": {"metadata.category": "electronics"}}}, refresh=True
    )
    assert deleted["deleted"] == 3
    assert {hit["_id"] for hit in _knn(client, index, k=10)} == set(D9_IDS) - {"A", "B", "F"}
    client.indices.delete(index=index)
    assert not client.indices.exists(index=index)
