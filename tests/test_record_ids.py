"""docs/spec.md §3.5: how adapters that restrict ids store them — two distinct ids are two records.

``native_record_id`` keeps an id as is only when the backend takes it and it does not look like a mapped id
(``prefix`` + a canonical version-5 UUID); a literal uuid5 string kept as is once shared the record of the
id it is the uuid5 of (issue 23: Qdrant, OpenSearch, Pinecone). ``escape_nul`` stores U+0000 where text
cannot hold it (pgvector, MongoDB) without merging ids or changing their order. The adapters' own id
functions are checked here too: they are pure, and each is the one place its adapter maps ids.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mastra_memory.vector import (
    MASTRA_ID_NAMESPACE,
    escape_nul,
    has_mapped_form,
    mastra_uuid,
    native_record_id,
    unescape_nul,
)

VICTIM = "victim-id"
#: The uuid5 of VICTIM, as issue 23 reported it.
VICTIM_UUID = "aecb373e-8e49-509e-89be-06952703ab3d"
V4 = "00000000-0000-4000-8000-00000000000a"


def test_the_namespace_and_the_reported_twin() -> None:
    assert mastra_uuid(VICTIM) == VICTIM_UUID == str(uuid.uuid5(MASTRA_ID_NAMESPACE, VICTIM))


@pytest.mark.parametrize(
    ("value", "prefix", "mapped"),
    [
        (VICTIM_UUID, "", True),
        (VICTIM_UUID.upper(), "", False),  # not canonical: no mapped id is upper case
        (V4, "", False),  # version 4
        ("aecb373e-8e49-509e-09be-06952703ab3d", "", False),  # version nibble 5, but not the RFC variant
        ("aecb373e8e49509e89be06952703ab3d", "", False),  # no hyphens
        ("{aecb373e-8e49-509e-89be-06952703ab3d}", "", False),
        ("mastra-" + VICTIM_UUID, "mastra-", True),
        (VICTIM_UUID, "mastra-", False),
        ("mastra-" + V4, "mastra-", False),
        ("", "", False),
        ("x" * 36, "", False),
    ],
)
def test_mapped_form(value: str, prefix: str, mapped: bool) -> None:
    assert has_mapped_form(value, prefix) is mapped


def _uuids_only(record_id: str) -> bool:
    try:
        return str(uuid.UUID(record_id)) == record_id
    except ValueError:
        return False


def _short(record_id: str) -> bool:
    return len(record_id.encode("utf-8")) <= 512


def _ascii(record_id: str) -> bool:
    return record_id.isascii() and "\x00" not in record_id


RULES: dict[str, tuple[Callable[[str], bool], str]] = {
    "uuids-only": (_uuids_only, ""),
    "512-bytes": (_short, ""),
    "ascii": (_ascii, "mastra-"),
}
#: Each id beside the forms some rule maps another id to.
CONFUSABLE = [
    VICTIM,
    VICTIM_UUID,
    V4,
    V4.upper(),
    "é" * 300,
    mastra_uuid("é" * 300),
    "ünïcødé",
    "mastra-" + mastra_uuid("ünïcødé"),
    "mastra-" + mastra_uuid(VICTIM),
    "mastra-" + mastra_uuid("mastra-" + mastra_uuid(VICTIM)),
    mastra_uuid(VICTIM_UUID),
    "a\x00b",
    "mastra-" + mastra_uuid("a\x00b"),
    "42",
]


@pytest.mark.parametrize("rule", list(RULES))
def test_distinct_ids_stay_distinct(rule: str) -> None:
    accepts, prefix = RULES[rule]
    stored = [native_record_id(rid, accepts, prefix) for rid in CONFUSABLE]
    assert len(set(stored)) == len(CONFUSABLE), dict(zip(CONFUSABLE, stored, strict=True))
    for rid, native in zip(CONFUSABLE, stored, strict=True):
        assert accepts(native)  # what is stored, the backend takes
        kept = accepts(rid) and not has_mapped_form(rid, prefix)
        assert (native == rid) is kept, rid


def test_what_each_rule_keeps() -> None:
    assert native_record_id(V4, _uuids_only) == V4  # Mastra's random ids keep their points
    assert native_record_id(VICTIM_UUID, _uuids_only) == mastra_uuid(VICTIM_UUID)
    assert native_record_id(VICTIM, _uuids_only) == VICTIM_UUID
    assert native_record_id(VICTIM, _short) == VICTIM
    assert native_record_id("é" * 300, _short) == mastra_uuid("é" * 300)
    assert native_record_id("ünïcødé", _ascii, "mastra-") == "mastra-" + mastra_uuid("ünïcødé")
    assert native_record_id(VICTIM_UUID, _ascii, "mastra-") == VICTIM_UUID


def test_the_adapters_use_the_rule() -> None:
    """Qdrant, OpenSearch and Pinecone each map ids through ``native_record_id``."""
    qdrant = pytest.importorskip("mastra_memory_qdrant.store")
    opensearch = pytest.importorskip("mastra_memory_opensearch.store")
    pinecone = pytest.importorskip("mastra_memory_pinecone.layout")
    for rid in CONFUSABLE:
        assert qdrant.point_id(rid) == native_record_id(rid, _uuids_only)
        assert opensearch.document_id(rid) == native_record_id(rid, _short)
        assert pinecone.native_id(rid) == native_record_id(rid, _ascii, "mastra-")


NUL_IDS = [
    "a\x00b",
    "a\x01\x01b",
    "a\x01b",
    "a\x01\x02b",
    "a",
    "a\x00",
    "a\x02",
    "a\x00\x00",
    "\x01",
    "\x00\x01",
]


def test_escape_examples() -> None:
    assert escape_nul("plain id") == "plain id"
    assert escape_nul("a\x00b") == "a\x01\x01b"
    assert escape_nul("a\x01b") == "a\x01\x02b"
    assert escape_nul("\x00\x01\x02") == "\x01\x01\x01\x02\x02"
    assert unescape_nul("\x01\x01\x02") == "\x00\x02"  # read left to right: not "\x01\x01" -> ...


def test_escaped_ids_hold_no_nul_and_keep_identity_and_order() -> None:
    escaped = [escape_nul(i) for i in NUL_IDS]
    assert not any("\x00" in e for e in escaped)
    assert len(set(escaped)) == len(NUL_IDS)
    assert [unescape_nul(e) for e in escaped] == NUL_IDS
    assert sorted(escaped) == [escape_nul(i) for i in sorted(NUL_IDS)]
    as_bytes = sorted(e.encode("utf-8") for e in escaped)  # PostgreSQL's COLLATE "C", MongoDB
    assert as_bytes == [escape_nul(i).encode("utf-8") for i in sorted(NUL_IDS)]


@given(
    st.text(alphabet=st.sampled_from("\x00\x01\x02ab"), max_size=10),
    st.text(alphabet=st.sampled_from("\x00\x01\x02ab"), max_size=10),
)
def test_escape_is_an_order_embedding(first: str, second: str) -> None:
    a, b = escape_nul(first), escape_nul(second)
    assert "\x00" not in a
    assert unescape_nul(a) == first
    assert (a == b) is (first == second)
    assert (a < b) is (first < second)
