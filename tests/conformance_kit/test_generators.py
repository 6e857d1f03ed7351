"""The differential domain's strategies reach into lists of documents (issue 23, item 3).

Before, random hostile records rarely held a list of documents sharing a key, and random dotted paths
rarely named one, so a store deciding ``$ne`` per element of such a list passed thousands of examples.
"""

from __future__ import annotations

from typing import Any

from hypothesis import Phase, given, settings

from mastra_memory.filters import Comparison, parse, walk
from mastra_memory.stores.sqlite.capabilities import SQLITE_CAPABILITIES
from mastra_memory_conformance.suite._generators import (
    HOSTILE,
    Features,
    filters,
    metadata,
    paths_in,
    values_in,
)

FEATURES = Features.of(SQLITE_CAPABILITIES)
RECORDS: list[dict[str, Any]] = [
    {"a": [{"b": 1}, {"b": 2, "c": {"d": True}}, 7], "e": None},
    {"a": {"b": 1.0}, "f": [[{"g": "x"}]]},
]


def test_paths_and_values_of_records() -> None:
    # Lists of documents are crossed (a.b, a.c.d); lists inside lists are not, as in docs/spec.md §2.4.
    assert paths_in(RECORDS) == ("a", "a.b", "a.c", "a.c.d", "e", "f")
    # 1, 1.0 and True are different filter values (§2.4: bool is its own type).
    assert values_in(RECORDS) == (1, 2, True, 7, None, 1.0, "x")


def _shared_key_rows(record: dict[str, Any]) -> bool:
    return any(
        isinstance(value, list)
        and len(rows := [e for e in value if isinstance(e, dict)]) >= 2
        and set.intersection(*(set(r) for r in rows))
        for value in record.values()
    )


def test_records_hold_lists_of_documents_sharing_keys() -> None:
    seen: list[bool] = []

    @settings(max_examples=200, database=None, phases=[Phase.generate])
    @given(metadata(FEATURES))
    def draw(record: dict[str, Any]) -> None:
        seen.append(_shared_key_rows(record))

    draw()
    # About a third of the records have one (a few in two hundred before).
    assert sum(seen) >= len(seen) // 5, f"{sum(seen)} of {len(seen)}"


def test_filters_meet_the_records_inside_their_lists() -> None:
    vocabulary = HOSTILE.meeting(RECORDS)
    inside = {("a", "b"), ("a", "c"), ("a", "c", "d")}  # through the list `a` of documents to its keys
    seen: list[bool] = []

    @settings(max_examples=200, database=None, phases=[Phase.generate])
    @given(filters(FEATURES, vocabulary))
    def draw(flt: dict[str, Any]) -> None:
        seen.append(any(isinstance(n, Comparison) and n.path in inside for n in walk(parse(flt))))

    draw()
    # About one in eight (random paths alone: one or two in two hundred).
    assert sum(seen) >= 10, f"{sum(seen)} of {len(seen)}"
