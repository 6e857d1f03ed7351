"""Unit tests of the derived filter fields (no server)."""

from __future__ import annotations

from mastra_memory_opensearch.layout import (
    SHORT_STRING_BYTES,
    fact,
    filter_fields,
    index_mapping,
    metadata_fields,
    metadata_of,
    path_code,
)


def test_null_empty_list_and_missing_are_told_apart() -> None:
    fields = filter_fields({"a": None, "b": [], "c": {"d": 1}})
    facts = set(fields["facts"])
    assert {fact("p", ("a",)), fact("z", ("a",)), fact("p", ("b",)), fact("n", ("b",), 0)} <= facts
    assert fact("p", ("x",)) not in facts
    assert fact("c", ("c",)) in facts


def test_keys_never_become_field_names() -> None:
    weird = {"a.b": "dotted", "'; --": 1, "x" * 200: True, "é": [1, "1"]}
    fields = filter_fields(weird)
    assert set(fields) <= {"str", "lstr", "lhash", "int", "dbl", "facts", "elems"}
    assert f"{path_code(('a.b',))}:dotted" in fields["str"]


def test_long_strings_are_indexed_by_prefix_and_hash() -> None:
    text = "é" * SHORT_STRING_BYTES
    fields = filter_fields({"t": text})
    assert "str" not in fields
    (prefix,) = fields["lstr"]
    assert len(prefix.encode()) <= SHORT_STRING_BYTES + 33


def test_metadata_round_trips_verbatim() -> None:
    metadata = {"n": 1.0, "big": 2**63 - 1, "nested": {"l": [None, {"k": []}]}, "u": "日本"}
    assert metadata_of(metadata_fields(metadata)) == metadata
    assert type(metadata_of(metadata_fields(metadata))["n"]) is float


def test_the_mapping_is_strict_and_lucene() -> None:
    mapping = index_mapping(8, "l2", 16, 64, {})
    assert mapping["dynamic"] == "strict"
    assert mapping["properties"]["vector"]["method"]["engine"] == "lucene"
