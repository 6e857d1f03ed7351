"""default_ef: the HNSW search list every ANN adapter uses when neither the query nor the index sets one
(docs/spec.md §3.9)."""

from __future__ import annotations

from mastra_memory.vector import default_ef


def test_a_memory_recall_searches_at_least_300_candidates() -> None:
    # top 3 with m 16 was 48 before issue 19: 55-93 % of the exact top 3 on pgvector and OpenSearch.
    assert default_ef(3, 16) == 300


def test_large_requests_search_m_times_top_k_up_to_1000() -> None:
    assert default_ef(40, 16) == 640
    assert default_ef(100, 16) == 1000
    assert default_ef(1000, 1) == 1000


def test_the_list_is_never_shorter_than_top_k_below_the_cap() -> None:
    for top_k in (1, 10, 299, 300, 301, 999):
        assert top_k <= default_ef(top_k, 1) <= 1000
