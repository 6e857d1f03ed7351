"""The payload layout: metadata verbatim, the original id, the vector norm, and the filter document."""

from __future__ import annotations

import numpy as np
import pytest
from mastra_memory.filters.numbers import integer_out_of_range

from mastra_memory_qdrant.layout import (
    build_payload,
    encode_key,
    filter_document,
    metadata_of,
    path_code,
    restore_vector,
    vector_norm,
)


def test_plain_keys_stay_and_others_are_hex_encoded() -> None:
    assert encode_key("thread_id") == "thread_id"
    assert encode_key("k1") == "k1"
    assert encode_key("_private") == "_5f70726976617465"
    assert encode_key("sp ace") == "_" + b"sp ace".hex()
    assert encode_key("") == "_"
    assert path_code(("a", "é")) == "a-_c3a9"


def test_values_are_what_mongo_path_resolution_reaches() -> None:
    doc = filter_document({"n": 1.0, "f": 2.5, "s": "x", "tags": ["a", "b"], "sub": {"k": 3}})
    assert doc["v-n"] == [1]  # an integral float is stored as an integer
    assert isinstance(doc["v-n"][0], int)
    assert doc["v-f"] == [2.5]
    assert doc["v-s"] == ["x"]
    assert doc["v-tags"] == ["a", "b"]
    assert doc["v-sub-k"] == [3]
    assert "v-sub" not in doc


def test_facts_tell_null_empty_list_and_missing_apart() -> None:
    facts = set(filter_document({"n": None, "tags": [], "ok": True, "no": False, "l": [None, 1]})["x"])
    assert {"p:n", "a:n", "s:n", "z:n"} <= facts
    assert {"p:tags", "a:tags", "n:tags:0"} <= facts
    assert "z:tags" not in facts
    assert {"t:ok", "f:no", "z:l", "n:l:2"} <= facts
    assert "c:n" not in facts  # null is no container: {"n.k": None} is missing through "s:n"


def test_arrays_of_objects_are_traversed_and_kept_as_elements() -> None:
    doc = filter_document({"items": [{"k": 1, "v": "x"}, {"k": 2}, 5, [1]]})
    assert doc["v-items-k"] == [1, 2]
    assert doc["v-items"] == [5]
    facts = set(doc["x"])
    assert {"p:items-k", "a:items-k", "c:items", "l:items", "n:items:4"} <= facts
    assert "p:items-v" in facts
    assert "a:items-v" not in facts  # the second element lacks "v": for {"items.v": None} it is missing
    first, second = doc["e-items"]
    assert first["v-k"] == [1]
    assert set(first["x"]) >= {"p:k", "p:v"}
    assert "p:v" not in second["x"]


def test_payload_keeps_metadata_verbatim_beside_the_reserved_keys() -> None:
    metadata = {"n": 1.0, 'qu"ote': {"x": [1, None]}}
    payload = build_payload("my-id", metadata, 5.0)
    assert payload["_mastra_id"] == "my-id"
    assert payload["_mastra_norm"] == 5.0
    assert "_mastra_f" in payload
    assert "_mastra_norm" not in build_payload("my-id", metadata, None)
    assert metadata_of(payload) == metadata
    assert isinstance(metadata_of(payload)["n"], float)
    assert metadata_of(None) == {}


def test_integers_beyond_int64_are_found_with_their_path() -> None:
    assert integer_out_of_range({"a": {"b": [1, 2**63]}}) == "a.b[1]"
    assert integer_out_of_range({"a": -(2**63) - 1}) == "a"
    assert integer_out_of_range({"a": 2**63 - 1, "b": True, "c": 1e300}) is None


def test_restore_vector_scales_the_unit_vector_back_to_the_recorded_norm() -> None:
    written = [3.0, 0.0, 4.0]
    payload = build_payload("id", {}, vector_norm(written))
    # what Qdrant returns on a cosine collection: the unit vector in float32 (0.6 and 0.8 are inexact)
    returned = [float(np.float32(x)) for x in (0.6, 0.0, 0.8)]
    restored = restore_vector(returned, payload)
    assert restored == pytest.approx(written, rel=1e-7, abs=1e-12)
    # the engine's normalisation factor cancels out: a slightly off unit vector still restores exactly
    assert restore_vector([x * (1 + 3e-7) for x in returned], payload) == pytest.approx(written, rel=1e-7)
    assert restore_vector(returned, build_payload("id", {}, None)) == returned  # written before norms
    assert restore_vector([0.0, 0.0, 0.0], build_payload("id", {}, 0.0)) == [0.0, 0.0, 0.0]
