"""Shared pieces of the storage contract (docs/spec.md §4): metadata filter rules, argument checks, query
models."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mastra_memory.errors import FilterValidationError, ValidationError
from mastra_memory.storage import (
    IncludeItem,
    MemoryStorage,
    MessageFilter,
    OrderBy,
    Thread,
    ThreadOrderBy,
    metadata_matches,
    validate_list_messages_args,
    validate_list_messages_by_resource_args,
    validate_list_threads_args,
    validate_metadata_filter,
)
from mastra_memory.stores.sqlite.storage import SQLiteStorage

# ----------------------------------------------------------------------------- §4.6 validation


@pytest.mark.parametrize(
    "key",
    ["__proto__", "prototype", "constructor", "a" * 129, "", "1abc", "a-b", "a.b", "a b", "é", "$eq"],
)
def test_invalid_metadata_filter_keys_are_rejected(key: str) -> None:
    with pytest.raises(FilterValidationError) as info:
        validate_metadata_filter({key: 1})
    assert str(info.value) == f'invalid metadata filter key "{key}"'


@pytest.mark.parametrize("key", ["a" * 128, "_", "_private", "camelCase", "snake_case_2", "A"])
def test_valid_metadata_filter_keys_are_accepted(key: str) -> None:
    assert validate_metadata_filter({key: "v"}) == {key: "v"}


@pytest.mark.parametrize(
    "value", [{"a": 1}, [1], (1,), math.nan, math.inf, -math.inf, b"x", datetime(2024, 1, 1)]
)
def test_invalid_metadata_filter_values_are_rejected(value: Any) -> None:
    with pytest.raises(FilterValidationError) as info:
        validate_metadata_filter({"k": value})
    assert (
        str(info.value)
        == 'invalid metadata filter value for key "k": expected str, finite number, bool or None'
    )


@pytest.mark.parametrize("value", ["s", "", 0, -3, 2**70, 1.5, True, False, None])
def test_valid_metadata_filter_values_are_accepted(value: Any) -> None:
    assert validate_metadata_filter({"k": value}) == {"k": value}


@pytest.mark.parametrize("value", [[("k", 1)], "k=1", 3, None])
def test_metadata_filter_must_be_a_dict(value: Any) -> None:
    with pytest.raises(FilterValidationError) as info:
        validate_metadata_filter(value)
    assert str(info.value) == "metadata filter must be a dict"


def test_filter_validation_error_is_both_validation_and_type_error() -> None:
    with pytest.raises(FilterValidationError) as info:
        validate_metadata_filter({"__proto__": 1})
    assert isinstance(info.value, ValidationError)
    assert isinstance(info.value, TypeError)
    assert isinstance(info.value, ValueError)


# -------------------------------------------------------------------------------- §4.6 matching


@pytest.mark.parametrize(
    ("flt", "metadata", "expected"),
    [
        ({"k": True}, {"k": 1}, False),  # bool never equals a number
        ({"k": 1}, {"k": True}, False),
        ({"k": False}, {"k": 0}, False),
        ({"k": 0}, {"k": False}, False),
        ({"k": True}, {"k": True}, True),
        ({"k": 2}, {"k": 2.0}, True),  # numbers equal numbers
        ({"k": 2.0}, {"k": 2}, True),
        ({"k": 2}, {"k": "2"}, False),  # strings only strings
        ({"k": "2"}, {"k": 2}, False),
        ({"k": None}, {}, False),  # a missing key never matches
        ({"k": None}, {"k": None}, True),  # None matches only an explicit null
        ({"k": None}, {"k": 0}, False),
        ({"k": None}, {"k": ""}, False),
        ({"k": ""}, {"k": None}, False),
        ({"k": "a"}, {"k": ["a"]}, False),  # no list membership
        ({"k": 1}, {"k": {"k": 1}}, False),
        ({"a": 1, "b": "x"}, {"a": 1, "b": "x", "c": 3}, True),  # entries are ANDed
        ({"a": 1, "b": "x"}, {"a": 1, "b": "y"}, False),
        ({"a": 1}, None, False),
        ({}, None, True),
        (None, {"a": 1}, True),
    ],
)
def test_metadata_matches_uses_typed_equality(flt: Any, metadata: Any, expected: bool) -> None:
    assert metadata_matches(flt, metadata) is expected


scalars = (
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-5, 5, allow_nan=False) | st.text(max_size=2)
)


@given(
    key=st.sampled_from(["a", "b"]),
    value=scalars,
    metadata=st.dictionaries(st.sampled_from(["a", "b"]), scalars),
)
def test_metadata_matches_agrees_with_the_definition(key: str, value: Any, metadata: dict[str, Any]) -> None:
    actual = metadata.get(key, object())

    def kind(v: Any) -> str:
        if v is None:
            return "null"
        if isinstance(v, bool):
            return "bool"
        if isinstance(v, int | float):
            return "number"
        return type(v).__name__

    expected = key in metadata and kind(value) == kind(actual) and value == actual
    assert metadata_matches({key: value}, metadata) is expected


# ------------------------------------------------------------------- §4.3 step 1 validation

STORE = "TEST"


def list_args(**kwargs: Any) -> Any:
    kwargs.setdefault("thread_id", "t1")
    return validate_list_messages_args(store=STORE, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"thread_id": ""}, "thread_id must be a non-empty string or a list of non-empty strings"),
        ({"thread_id": "   "}, "thread_id must be a non-empty string or a list of non-empty strings"),
        ({"thread_id": []}, "thread_id must be a non-empty string or a list of non-empty strings"),
        ({"thread_id": ["t1", ""]}, "thread_id must be a non-empty string or a list of non-empty strings"),
        ({"thread_id": None}, "thread_id must be a non-empty string or a list of non-empty strings"),
        ({"thread_id": [1]}, "thread_id must be a non-empty string or a list of non-empty strings"),
        ({"page": -1}, "page must be >= 0"),
        ({"per_page": -1}, "per_page must be >= 0"),
        ({"per_page": False, "page": 1}, "page must be 0 when per_page is false"),
        ({"per_page": 2**40, "page": 2**40}, "page value too large"),
        ({"per_page": 1, "page": 2**63}, "page value too large"),
        ({"resource_id": ""}, "resource_id must be a non-empty string"),
        ({"resource_id": "  "}, "resource_id must be a non-empty string"),
    ],
)
def test_list_messages_argument_errors_have_exact_messages(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as info:
        list_args(**kwargs)
    assert str(info.value) == message
    assert info.value.id.startswith("MASTRA_STORAGE_TEST_LIST_MESSAGES_")


@pytest.mark.parametrize("per_page", [True, "10", 1.5])
def test_per_page_rejects_bools_other_than_false_and_non_ints(per_page: Any) -> None:
    with pytest.raises(ValidationError, match=r"^per_page must be >= 0"):
        list_args(per_page=per_page)


@pytest.mark.parametrize("page", [True, None, "1", 1.0])
def test_page_must_be_an_int(page: Any) -> None:
    with pytest.raises(ValidationError, match=r"^page must be >= 0"):
        list_args(page=page)


def test_defaults_and_normalisation() -> None:
    q = list_args(thread_id=["t1", "t2", "t1"])
    assert q.thread_ids == ("t1", "t2")
    assert q.per_page == 40
    assert q.page == 0
    assert q.order == OrderBy(field="created_at", direction="ASC")
    assert q.filter is None
    assert q.include == ()
    assert q.include_total is True
    assert list_args(per_page=False).per_page is False
    assert list_args(per_page=0).per_page == 0
    assert list_args(filter={}).filter is None
    assert list_args(filter={"metadata": {}}).filter is None


@pytest.mark.parametrize(
    "flt",
    [
        {"thread_id": "t1"},
        {"metadata": {"a": 1}, "$and": []},
        {"date_range": {"start": "2024-01-01T00:00:00Z"}, "tags": "x"},
        {"dateRange": {"from": "2024-01-01T00:00:00Z"}},
    ],
)
def test_message_filter_unknown_keys_are_validation_errors(flt: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="unknown keys"):
        list_args(filter=flt)


def test_message_filter_model_forbids_unknown_keys() -> None:
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        MessageFilter.model_validate({"thread_id": "t1"})


def test_message_filter_metadata_errors_are_filter_validation_errors() -> None:
    with pytest.raises(FilterValidationError, match='invalid metadata filter key "__proto__"'):
        list_args(filter={"metadata": {"__proto__": 1}})
    with pytest.raises(FilterValidationError, match='invalid metadata filter value for key "k"'):
        list_args(filter={"metadata": {"k": {"nested": 1}}})
    with pytest.raises(FilterValidationError, match="metadata filter must be a dict"):
        list_args(filter={"metadata": ["k"]})


def test_date_range_accepts_aware_datetimes_and_iso_strings_in_camel_case() -> None:
    q = list_args(
        filter={
            "dateRange": {
                "start": "2024-01-01T01:00:00+01:00",
                "end": datetime(2024, 1, 2, tzinfo=UTC),
                "startExclusive": True,
            }
        }
    )
    assert q.filter is not None
    assert q.filter.date_range is not None
    assert q.filter.date_range.start == datetime(2024, 1, 1, tzinfo=UTC)
    assert q.filter.date_range.end == datetime(2024, 1, 2, tzinfo=UTC)
    assert (q.filter.date_range.start_exclusive, q.filter.date_range.end_exclusive) == (True, False)


def test_date_range_rejects_naive_datetimes() -> None:
    with pytest.raises(ValidationError, match="timezone-aware"):
        list_args(filter={"date_range": {"start": datetime(2024, 1, 1)}})
    with pytest.raises(ValidationError, match="timezone-aware"):
        list_args(filter={"date_range": {"end": "2024-01-01T00:00:00"}})


def test_start_after_end_is_not_an_error() -> None:
    q = list_args(filter={"date_range": {"start": "2024-02-01T00:00:00Z", "end": "2024-01-01T00:00:00Z"}})
    assert q.filter is not None


@pytest.mark.parametrize(
    ("include", "message"),
    [
        ([{"id": ""}], "include[0].id must be a non-empty string"),
        ([{"withPreviousMessages": 1}], "include[0].id must be a non-empty string"),
        (
            [{"id": "a"}, {"id": "b", "with_previous_messages": -1}],
            "include[1].with_previous_messages must be",
        ),
        ([{"id": "a", "withNextMessages": True}], "include[0].with_next_messages must be an integer >= 0"),
        ([{"id": "a", "with_next_messages": 1.5}], "include[0].with_next_messages must be an integer >= 0"),
        ([{"id": "a", "before": 1}], "include[0] has unknown keys: before"),
        ("a", "include must be a list"),
        ([3], "include[0] must be a dict"),
    ],
)
def test_include_item_errors(include: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        list_args(include=include)


def test_include_items_accept_camel_case_and_models() -> None:
    q = list_args(
        include=[
            {"id": "a", "threadId": "t9", "withPreviousMessages": 2, "withNextMessages": 3},
            IncludeItem(id="b"),
        ]
    )
    assert q.include == (
        IncludeItem(id="a", thread_id="t9", with_previous_messages=2, with_next_messages=3),
        IncludeItem(id="b", thread_id=None, with_previous_messages=0, with_next_messages=0),
    )


@pytest.mark.parametrize(
    ("order_by", "expected"),
    [
        ({"field": "created_at", "direction": "desc"}, OrderBy(direction="DESC")),
        ({"field": "createdAt", "direction": "Asc"}, OrderBy(direction="ASC")),
        ({"direction": "DESC"}, OrderBy(direction="DESC")),
        ({"field": "created_at"}, OrderBy(direction="ASC")),
        (None, OrderBy()),
    ],
)
def test_message_order_by_is_case_insensitive_and_camel_tolerant(order_by: Any, expected: OrderBy) -> None:
    assert list_args(order_by=order_by).order == expected


@pytest.mark.parametrize(
    "order_by",
    [
        {"field": "updated_at"},
        {"field": "id"},
        {"direction": "UP"},
        {"field": "created_at", "nulls": "last"},
        "ASC",
    ],
)
def test_message_order_by_rejects_unknown_values(order_by: Any) -> None:
    with pytest.raises(ValidationError, match="order_by"):
        list_args(order_by=order_by)


def test_include_total_must_be_bool() -> None:
    with pytest.raises(ValidationError, match="include_total"):
        list_args(include_total=None)


@pytest.mark.parametrize("resource_id", ["", " ", None, 5])
def test_list_by_resource_requires_a_non_blank_resource_id(resource_id: Any) -> None:
    with pytest.raises(ValidationError) as info:
        validate_list_messages_by_resource_args(resource_id, store=STORE)
    assert str(info.value) == "resource_id must be a non-empty string"


# ------------------------------------------------------------------------------- §4.4 validation


def thread_args(**kwargs: Any) -> Any:
    return validate_list_threads_args(store=STORE, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"page": -1}, "page must be >= 0"),
        ({"per_page": -5}, "per_page must be >= 0"),
        ({"per_page": False, "page": 2}, "page must be 0 when per_page is false"),
        ({"per_page": 2**33, "page": 2**33}, "page value too large"),
        ({"filter": {"resource_id": ""}}, "resource_id must be a non-empty string"),
    ],
)
def test_list_threads_argument_errors_have_exact_messages(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as info:
        thread_args(**kwargs)
    assert str(info.value) == message


def test_list_threads_defaults_and_order_rules() -> None:
    q = thread_args()
    assert (q.per_page, q.page, q.order, q.resource_id, q.metadata) == (100, 0, ThreadOrderBy(), None, {})
    assert q.order == ThreadOrderBy(field="created_at", direction="DESC")
    assert thread_args(order_by={"field": "updatedAt"}).order == ThreadOrderBy(
        field="updated_at", direction="DESC"
    )
    assert thread_args(order_by={"direction": "asc"}).order == ThreadOrderBy(
        field="created_at", direction="ASC"
    )
    assert thread_args(filter={"resourceId": "r1", "metadata": {"k": 1}}).resource_id == "r1"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"order_by": {"field": "title"}},
        {"order_by": {"direction": "sideways"}},
        {"filter": {"thread_id": "t1"}},
    ],
)
def test_list_threads_rejects_unknown_values(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        thread_args(**kwargs)


def test_list_threads_metadata_filter_follows_section_4_6() -> None:
    with pytest.raises(FilterValidationError, match='invalid metadata filter key "constructor"'):
        thread_args(filter={"metadata": {"constructor": "x"}})
    with pytest.raises(FilterValidationError, match='invalid metadata filter value for key "k"'):
        thread_args(filter={"metadata": {"k": [1]}})


def test_has_more_rule_for_threads() -> None:
    assert thread_args(per_page=2).has_more(3) is True
    assert thread_args(per_page=2, page=1).has_more(3) is False
    assert thread_args(per_page=False).has_more(1000) is False


# ---------------------------------------------------------------------------------------- records


def test_thread_requires_a_resource_and_accepts_camel_case() -> None:
    with pytest.raises(ValueError, match="resourceId"):
        Thread.model_validate({"id": "t"})
    thread = Thread.model_validate(
        {
            "id": "t",
            "resourceId": "r",
            "title": None,
            "createdAt": "2024-01-01T00:00:00Z",
            "metadata": {"a": 1},
        }
    )
    assert thread.title == ""
    assert thread.updated_at == thread.created_at == datetime(2024, 1, 1, tzinfo=UTC)
    assert thread.model_dump(mode="json", by_alias=True) == {
        "id": "t",
        "resourceId": "r",
        "title": "",
        "metadata": {"a": 1},
        "createdAt": "2024-01-01T00:00:00.000Z",
        "updatedAt": "2024-01-01T00:00:00.000Z",
    }


def test_thread_rejects_naive_timestamps() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        Thread(id="t", resource_id="r", created_at=datetime(2024, 1, 1))


def test_sqlite_storage_satisfies_the_protocol() -> None:
    assert isinstance(SQLiteStorage(":memory:"), MemoryStorage)
    assert not isinstance(object(), MemoryStorage)
