"""The embedded SQLite storage against docs/spec.md §4: list_messages (§4.3), threads (§4.4), writes (§4.5),
clone."""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.errors import (
    FilterValidationError,
    StorageError,
    ThreadNotFoundError,
    ThreadOwnershipError,
    ValidationError,
)
from mastra_memory.messages import MastraDBMessage, ToolInvocationPart, UnknownPart
from mastra_memory.storage import IncludeItem, MessagePage, Thread
from mastra_memory.stores.sqlite.settings import SQLiteSettings
from mastra_memory.stores.sqlite.storage import SQLiteStorage

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def msg(
    id: str, thread_id: str, text: str = "", *, seconds: float = 0, role: str = "user", **content: Any
) -> dict[str, Any]:
    """A v2 message dict created ``seconds`` after 2024-01-01T00:00:00Z."""
    body = {"format": 2, "content": text or id, "parts": [{"type": "text", "text": text or id}], **content}
    return {"id": id, "thread_id": thread_id, "role": role, "created_at": at(seconds), "content": body}


def ids(page: MessagePage | list[MastraDBMessage]) -> list[str]:
    messages = page.messages if isinstance(page, MessagePage) else page
    return [m.id for m in messages]


async def updated_at(storage: SQLiteStorage, thread_id: str) -> datetime:
    thread = await storage.get_thread_by_id(thread_id)
    assert thread is not None, f"thread {thread_id} is missing"
    return thread.updated_at


async def snapshot(storage: SQLiteStorage) -> tuple[list[Any], list[Any]]:
    """Everything stored: all threads and all messages, as JSON-ready dicts."""
    threads = (await storage.list_threads(per_page=False)).threads
    messages = []
    for thread in threads:
        messages += (await storage.list_messages(thread.id, per_page=False)).messages
    return (
        [t.model_dump(mode="json") for t in threads],
        sorted((m.model_dump(mode="json") for m in messages), key=lambda m: m["id"]),
    )


@pytest.fixture
async def storage() -> AsyncIterator[SQLiteStorage]:
    store = SQLiteStorage(":memory:")
    await store.init()
    yield store
    await store.close()


async def seed_scenario(storage: SQLiteStorage) -> None:
    """The docs/spec.md §8.3 scenario: resource A owns A1 (a1, a2, a3) and A2 (a4); resource B owns B1 (b1).

    ``created_at`` is 2024-01-01T00:00:0nZ for n = 1…5 in the order a1, a2, a3, a4, b1.
    """
    for thread_id, resource_id in (("A1", "A"), ("A2", "A"), ("B1", "B")):
        await storage.save_thread(Thread(id=thread_id, resource_id=resource_id, created_at=T0))
    rows = [
        ("a1", "A1", "alpha apples"),
        ("a2", "A1", "alpha bananas"),
        ("a3", "A1", "alpha cherries"),
        ("a4", "A2", "alpha dates"),
        ("b1", "B1", "beta eggs"),
    ]
    await storage.save_messages(
        [msg(mid, thread, text, seconds=n) for n, (mid, thread, text) in enumerate(rows, start=1)]
    )


@pytest.fixture
async def scenario(storage: SQLiteStorage) -> SQLiteStorage:
    await seed_scenario(storage)
    return storage


def window(target: str, before: int, after: int, hint: str | None = None) -> dict[str, Any]:
    return {"id": target, "threadId": hint, "withPreviousMessages": before, "withNextMessages": after}


# --------------------------------------------------------------------------------- §8.3 S1–S8


@pytest.mark.parametrize(
    ("case", "kwargs", "expected", "total", "has_more"),
    [
        ("S1", {"thread_id": "B1", "resource_id": "B", "include": [window("a2", 2, 2)]}, ["b1"], 1, False),
        (
            "S2",
            {"thread_id": "A2", "resource_id": "A", "include": [window("a2", 1, 1)]},
            ["a1", "a2", "a3", "a4"],
            1,
            False,
        ),
        (
            "S3",
            {"thread_id": "B1", "resource_id": "B", "per_page": 0, "include": [window("a2", 2, 2)]},
            [],
            0,
            False,
        ),
        ("S4", {"thread_id": "B1", "include": [window("a2", 1, 1)]}, ["a1", "a2", "a3", "b1"], 1, False),
        (
            "S5",
            {"thread_id": "A2", "resource_id": "A", "include": [window("a2", 1, 1, hint="A2")]},
            ["a1", "a2", "a3", "a4"],
            1,
            False,
        ),
        (
            "S6",
            {"thread_id": "A1", "resource_id": "A", "per_page": 0, "include": [window("a2", 0, 0)]},
            ["a2"],
            0,
            False,
        ),
        (
            "S7",
            {"thread_id": "A1", "resource_id": "A", "per_page": False, "include": [window("a4", 0, 0)]},
            ["a1", "a2", "a3", "a4"],
            3,
            False,
        ),
        ("S8a", {"thread_id": "A1", "resource_id": "A", "per_page": 2}, ["a1", "a2"], 3, True),
        (
            "S8b",
            {"thread_id": "A1", "resource_id": "A", "per_page": 2, "include": [window("a3", 0, 0)]},
            ["a1", "a2", "a3"],
            3,
            False,
        ),
    ],
)
async def test_scenario(
    scenario: SQLiteStorage,
    case: str,
    kwargs: dict[str, Any],
    expected: list[str],
    total: int,
    has_more: bool,
) -> None:
    page = await scenario.list_messages(**kwargs)
    assert (ids(page), page.total, page.has_more) == (expected, total, has_more), case
    assert page.page == 0
    assert page.per_page == kwargs.get("per_page", 40)


async def test_per_page_false_is_echoed_as_false(scenario: SQLiteStorage) -> None:
    page = await scenario.list_messages("A1", per_page=False)
    assert page.per_page is False
    assert (ids(page), page.total, page.has_more) == (["a1", "a2", "a3"], 3, False)


async def test_per_page_zero_without_include_returns_nothing(scenario: SQLiteStorage) -> None:
    page = await scenario.list_messages("A1", per_page=0)
    assert (ids(page), page.total, page.has_more, page.per_page) == ([], 0, False, 0)


async def test_include_only_path_sorts_windows_by_order_and_ignores_filters(scenario: SQLiteStorage) -> None:
    page = await scenario.list_messages(
        "A1",
        resource_id="A",
        per_page=0,
        include=[window("a4", 0, 0), window("a2", 1, 0)],
        order_by={"direction": "DESC"},
        filter={"date_range": {"start": at(100)}, "metadata": {"never": True}},
    )
    assert ids(page) == ["a4", "a2", "a1"]


async def test_windows_clamp_at_thread_ends_and_union_without_duplicates(scenario: SQLiteStorage) -> None:
    page = await scenario.list_messages(
        "B1",
        resource_id="A",
        per_page=0,
        include=[window("a1", 5, 1), window("a3", 1, 9), window("a2", 0, 0)],
    )
    assert ids(page) == ["a1", "a2", "a3"]


async def test_include_of_an_unknown_id_is_skipped(scenario: SQLiteStorage) -> None:
    page = await scenario.list_messages("A1", include=[window("nope", 3, 3)])
    assert ids(page) == ["a1", "a2", "a3"]


async def test_descending_order_applies_to_page_and_merged_windows(scenario: SQLiteStorage) -> None:
    page = await scenario.list_messages(
        "A1", per_page=2, order_by={"field": "createdAt", "direction": "desc"}
    )
    assert (ids(page), page.total, page.has_more) == (["a3", "a2"], 3, True)
    page = await scenario.list_messages(
        "A1", resource_id="A", per_page=1, order_by={"direction": "DESC"}, include=[window("a4", 0, 0)]
    )
    assert (ids(page), page.has_more) == (["a4", "a3"], True)


async def test_several_thread_ids(scenario: SQLiteStorage) -> None:
    page = await scenario.list_messages(["A2", "B1"], per_page=False)
    assert (ids(page), page.total) == (["a4", "b1"], 2)
    page = await scenario.list_messages(["A2", "B1"], resource_id="A")
    assert (ids(page), page.total) == (["a4"], 1)


async def test_has_more_counts_window_messages_of_the_thread_set(scenario: SQLiteStorage) -> None:
    # Page 0 of A1 holds a1; the window of a3 supplies the rest of the thread, so nothing more remains.
    page = await scenario.list_messages("A1", per_page=1, include=[window("a3", 1, 0)])
    assert (ids(page), page.total, page.has_more) == (["a1", "a2", "a3"], 3, False)
    # A window from another thread does not count towards the thread set.
    page = await scenario.list_messages("A1", resource_id="A", per_page=1, include=[window("a4", 0, 0)])
    assert (ids(page), page.total, page.has_more) == (["a1", "a4"], 3, True)


async def test_include_total_false(scenario: SQLiteStorage) -> None:
    page = await scenario.list_messages("A1", per_page=2, include_total=False)
    assert (ids(page), page.total, page.has_more) == (["a1", "a2"], None, True)
    page = await scenario.list_messages("A1", per_page=2, page=1, include_total=False)
    assert (ids(page), page.total, page.has_more) == (["a3"], None, False)
    page = await scenario.list_messages("A1", per_page=3, include_total=False)
    assert (ids(page), page.total, page.has_more) == (["a1", "a2", "a3"], None, False)
    page = await scenario.list_messages("A1", per_page=2, include_total=False, include=[window("a3", 0, 0)])
    assert (ids(page), page.total, page.has_more) == (["a1", "a2", "a3"], None, False)
    page = await scenario.list_messages(
        "A1", per_page=2, include_total=False, filter={"metadata": {"missing": None}}
    )
    assert (ids(page), page.total, page.has_more) == ([], None, False)


async def test_pages_partition_the_base_set(storage: SQLiteStorage) -> None:
    await storage.save_thread({"id": "t", "resourceId": "r"})
    await storage.save_messages([msg(f"m{i:02d}", "t", seconds=i // 3) for i in range(23)])
    seen: list[str] = []
    for number in range(5):
        page = await storage.list_messages("t", per_page=5, page=number)
        seen += ids(page)
        assert page.total == 23
        assert page.has_more is (number < 4)
    assert seen == [f"m{i:02d}" for i in range(23)]
    beyond = await storage.list_messages("t", per_page=5, page=9)
    assert (ids(beyond), beyond.total, beyond.has_more) == ([], 23, False)


async def test_equal_timestamps_break_ties_by_id_in_the_same_direction(storage: SQLiteStorage) -> None:
    await storage.save_thread({"id": "t", "resource_id": "r"})
    await storage.save_messages(
        [msg(i, "t", seconds=1) for i in ("c", "a", "d", "b")] + [msg("z", "t", seconds=0)]
    )
    asc = await storage.list_messages("t")
    assert ids(asc) == ["z", "a", "b", "c", "d"]
    desc = await storage.list_messages("t", order_by={"direction": "DESC"})
    assert ids(desc) == ["d", "c", "b", "a", "z"]
    paged = [ids(await storage.list_messages("t", per_page=2, page=p)) for p in range(3)]
    assert paged == [["z", "a"], ["b", "c"], ["d"]]
    assert ids(await storage.list_messages_by_id(["d", "b", "z", "nope"])) == ["z", "b", "d"]


async def test_windows_use_the_created_at_id_tuple_on_equal_timestamps(storage: SQLiteStorage) -> None:
    await storage.save_thread({"id": "t", "resource_id": "r"})
    await storage.save_messages([msg(i, "t", seconds=1) for i in ("a", "b", "c", "d", "e")])
    page = await storage.list_messages("t", per_page=0, include=[window("c", 1, 1)])
    assert ids(page) == ["b", "c", "d"]
    page = await storage.list_messages("t", per_page=0, include=[window("a", 0, 2)])
    assert ids(page) == ["a", "b", "c"]


# ------------------------------------------------------------------------------- base-set filters


@pytest.fixture
async def dated(storage: SQLiteStorage) -> SQLiteStorage:
    await storage.save_thread({"id": "t", "resource_id": "r"})
    await storage.save_messages([msg(f"m{i}", "t", seconds=i) for i in range(1, 6)])
    return storage


@pytest.mark.parametrize(
    ("date_range", "expected"),
    [
        ({"start": at(2), "end": at(4)}, ["m2", "m3", "m4"]),
        ({"start": at(2), "end": at(4), "start_exclusive": True}, ["m3", "m4"]),
        ({"start": at(2), "end": at(4), "endExclusive": True}, ["m2", "m3"]),
        ({"start": at(2), "end": at(4), "start_exclusive": True, "end_exclusive": True}, ["m3"]),
        ({"start": "2024-01-01T00:00:04.000Z"}, ["m4", "m5"]),
        ({"end": "2024-01-01T01:00:02+01:00"}, ["m1", "m2"]),
        ({"start": at(4), "end": at(2)}, []),
        ({"start": at(3), "end": at(3), "end_exclusive": True}, []),
        ({"start": at(2.5), "end": at(3.5)}, ["m3"]),
    ],
)
async def test_date_range(dated: SQLiteStorage, date_range: dict[str, Any], expected: list[str]) -> None:
    page = await dated.list_messages("t", filter={"dateRange": date_range})
    assert (ids(page), page.total) == (expected, len(expected))


@pytest.fixture
async def tagged(storage: SQLiteStorage) -> SQLiteStorage:
    await storage.save_thread({"id": "t", "resource_id": "r"})
    metadata: list[dict[str, Any] | None] = [
        {"flag": True, "n": 1, "s": "1"},
        {"flag": 1, "n": 2.0, "s": "x", "opt": None},
        {"flag": False, "n": 2, "s": "x"},
        {"n": "2", "opt": 0},
        None,
        {"flag": True, "n": 1.0, "nested": {"a": 1}},
    ]
    await storage.save_messages([msg(f"m{i}", "t", seconds=i, metadata=md) for i, md in enumerate(metadata)])
    return storage


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"flag": True}, ["m0", "m5"]),  # True never equals 1
        ({"flag": 1}, ["m1"]),
        ({"flag": False}, ["m2"]),
        ({"n": 2}, ["m1", "m2"]),  # 2 == 2.0, but not "2"
        ({"n": 2.0}, ["m1", "m2"]),
        ({"n": "2"}, ["m3"]),
        ({"n": 1, "flag": True}, ["m0", "m5"]),
        ({"s": "x", "n": 2}, ["m1", "m2"]),
        ({"opt": None}, ["m1"]),  # None matches only an explicit null, never a missing key
        ({"opt": 0}, ["m3"]),
        ({"s": "1"}, ["m0"]),
        ({"absent": None}, []),
        ({}, ["m0", "m1", "m2", "m3", "m4", "m5"]),
    ],
)
async def test_metadata_filter_typing(
    tagged: SQLiteStorage, metadata: dict[str, Any], expected: list[str]
) -> None:
    page = await tagged.list_messages("t", filter={"metadata": metadata})
    assert (ids(page), page.total) == (expected, len(expected))


async def test_metadata_filter_pages_and_combines_with_date_range(tagged: SQLiteStorage) -> None:
    page = await tagged.list_messages("t", per_page=1, filter={"metadata": {"n": 2}})
    assert (ids(page), page.total, page.has_more) == (["m1"], 2, True)
    page = await tagged.list_messages("t", per_page=1, page=1, filter={"metadata": {"n": 2}})
    assert (ids(page), page.total, page.has_more) == (["m2"], 2, False)
    page = await tagged.list_messages(
        "t", order_by={"direction": "DESC"}, filter={"metadata": {"flag": True}, "date_range": {"end": at(4)}}
    )
    assert ids(page) == ["m0"]


async def test_invalid_metadata_filters_raise_filter_validation_error(tagged: SQLiteStorage) -> None:
    for bad in ({"__proto__": 1}, {"k" * 129: 1}, {"a": {"b": 1}}, {"a": [1]}, {"a": math.nan}):
        with pytest.raises(FilterValidationError):
            await tagged.list_messages("t", filter={"metadata": bad})


async def test_vector_style_filter_is_refused_not_ignored(tagged: SQLiteStorage) -> None:
    with pytest.raises(ValidationError, match="unknown keys: thread_id"):
        await tagged.list_messages("t", filter={"thread_id": {"$eq": "t"}})


async def test_validation_happens_before_any_io(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    broken = SQLiteStorage(str(blocker / "memory.db"))
    with pytest.raises(ValidationError, match=r"^per_page must be >= 0$"):
        await broken.list_messages("t", per_page=-1)
    with pytest.raises(ValidationError, match=r"^resource_id must be a non-empty string$"):
        await broken.list_messages("t", resource_id="")
    with pytest.raises(ValidationError, match=r"^page must be 0 when per_page is false$"):
        await broken.list_threads(per_page=False, page=1)
    with pytest.raises(StorageError) as info:
        await broken.list_messages("t")
    assert info.value.id == "MASTRA_STORAGE_SQLITE_LIST_MESSAGES_FAILED"
    assert info.value.__cause__ is not None
    await broken.close()


# --------------------------------------------------------------------------- by resource / by id


async def test_list_messages_by_resource_id(scenario: SQLiteStorage) -> None:
    page = await scenario.list_messages_by_resource_id("A", per_page=3)
    assert (ids(page), page.total, page.has_more) == (["a1", "a2", "a3"], 4, True)
    page = await scenario.list_messages_by_resource_id("A", per_page=2, include=[window("a4", 0, 0)])
    assert (ids(page), page.has_more) == (["a1", "a2", "a4"], True)
    page = await scenario.list_messages_by_resource_id("B", include=[window("a2", 1, 1)])
    assert ids(page) == ["b1"]
    with pytest.raises(ValidationError, match="resource_id must be a non-empty string"):
        await scenario.list_messages_by_resource_id(" ")


async def test_list_messages_by_id(scenario: SQLiteStorage) -> None:
    assert ids(await scenario.list_messages_by_id(["b1", "a3", "a1", "zz"])) == ["a1", "a3", "b1"]
    assert await scenario.list_messages_by_id([]) == []
    with pytest.raises(ValidationError):
        await scenario.list_messages_by_id([""])


# ------------------------------------------------------------------------------------ save_messages


async def test_save_fills_resource_from_thread_and_returns_stored(storage: SQLiteStorage) -> None:
    await storage.save_thread({"id": "t", "resource_id": "r"})
    saved = await storage.save_messages([{"role": "user", "content": "hi", "threadId": "t"}])
    assert saved[0].resource_id == "r"
    assert saved[0].content.content == "hi"
    assert ids(await storage.list_messages("t")) == [saved[0].id]
    assert await storage.save_messages([]) == []


async def test_save_without_timestamps_orders_by_list_position(storage: SQLiteStorage) -> None:
    await storage.save_thread({"id": "t", "resource_id": "r"})
    batch = [{"id": f"z{9 - i}", "role": "user", "content": str(i), "thread_id": "t"} for i in range(10)]
    await storage.save_messages(batch)
    await storage.save_messages([{"id": "a-last", "role": "assistant", "content": "x", "thread_id": "t"}])
    assert ids(await storage.list_messages("t")) == [f"z{9 - i}" for i in range(10)] + ["a-last"]


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ({"id": "x", "role": "user", "content": "x", "thread_id": "missing"}, ThreadNotFoundError),
        ({"id": "x", "role": "user", "content": "x", "thread_id": ""}, ThreadNotFoundError),
        (
            {"id": "x", "role": "user", "content": "x", "thread_id": "t2", "resource_id": "other"},
            ValidationError,
        ),
        (
            {
                "id": "x",
                "role": "user",
                "content": "x",
                "thread_id": "t2",
                "created_at": datetime(2024, 1, 1),
            },
            ValidationError,
        ),
        ({"id": "x", "role": "robot", "content": "x", "thread_id": "t2"}, ValidationError),
        (msg("x", "t2", metadata={"bad": math.nan}), ValidationError),
        ({"id": "x", "role": "user", "thread_id": "t2"}, ValidationError),
    ],
)
async def test_a_batch_with_one_invalid_message_saves_nothing(
    storage: SQLiteStorage, bad: dict[str, Any], error: type[Exception]
) -> None:
    await storage.save_thread({"id": "t1", "resource_id": "r"})
    await storage.save_thread({"id": "t2", "resource_id": "r"})
    await storage.save_messages([msg("keep", "t1", "original", seconds=1)])
    before = await snapshot(storage)
    batch = [
        msg("keep", "t2", "moved and rewritten", seconds=2),  # would move and replace an existing message
        msg("new1", "t1", seconds=3),
        bad,
        msg("new2", "t2", seconds=4),
    ]
    with pytest.raises(error):
        await storage.save_messages(batch)
    assert await snapshot(storage) == before


async def test_saving_an_existing_id_in_another_thread_moves_it(storage: SQLiteStorage) -> None:
    await storage.save_thread({"id": "t1", "resource_id": "r"})
    await storage.save_thread({"id": "t2", "resource_id": "r"})
    await storage.save_messages([msg("m", "t1", "first", seconds=1), msg("other", "t1", seconds=2)])
    t1_before, t2_before = await updated_at(storage, "t1"), await updated_at(storage, "t2")
    await storage.save_messages([msg("m", "t2", "second", seconds=5)])
    assert ids(await storage.list_messages("t1")) == ["other"]
    page = await storage.list_messages("t2")
    assert ids(page) == ["m"]
    assert page.messages[0].content.content == "second"
    assert ids(await storage.list_messages_by_id(["m"])) == ["m"]
    assert await updated_at(storage, "t1") > t1_before
    assert await updated_at(storage, "t2") > t2_before


async def test_moving_to_a_thread_of_another_resource_is_refused(storage: SQLiteStorage) -> None:
    await storage.save_thread({"id": "t1", "resource_id": "r1"})
    await storage.save_thread({"id": "t2", "resource_id": "r2"})
    await storage.save_messages([msg("m", "t1")])
    with pytest.raises(ThreadOwnershipError):  # docs/spec.md §4.5, ownership
        await storage.save_messages([msg("m", "t2")])
    assert ids(await storage.list_messages_by_resource_id("r1")) == ["m"]
    assert ids(await storage.list_messages_by_resource_id("r2")) == []


async def test_duplicate_ids_in_one_batch_keep_the_last(storage: SQLiteStorage) -> None:
    await storage.save_thread({"id": "t", "resource_id": "r"})
    saved = await storage.save_messages([msg("m", "t", "one"), msg("m", "t", "two")])
    assert [m.content.content for m in saved] == ["two"]
    page = await storage.list_messages("t")
    assert [m.content.content for m in page.messages] == ["two"]


async def test_updated_at_bumps_are_strictly_increasing(storage: SQLiteStorage) -> None:
    # Many writes land in the same millisecond; each must still move updated_at forward.
    thread = await storage.save_thread(
        {"id": "t", "resource_id": "r", "updated_at": T0 + timedelta(days=36500)}
    )
    stamps = [thread.updated_at]
    for i in range(30):
        await storage.save_messages([msg(f"m{i}", "t")])
        stamps.append(await updated_at(storage, "t"))
        stamps.append((await storage.update_thread("t", title=str(i))).updated_at)
    assert all(b > a for a, b in itertools.pairwise(stamps))
    assert stamps[1] - stamps[0] == timedelta(milliseconds=1)


async def test_reads_never_bump(scenario: SQLiteStorage) -> None:
    before = await scenario.get_thread_by_id("A1")
    await scenario.list_messages("A1", include=[window("a2", 1, 1)])
    await scenario.list_threads()
    await scenario.list_messages_by_id(["a1"])
    assert await scenario.get_thread_by_id("A1") == before


async def test_v1_messages_with_tool_results_are_stored_as_v2(storage: SQLiteStorage) -> None:
    await storage.save_thread({"id": "t", "resource_id": "r"})
    saved = await storage.save_messages(
        [
            {"id": "q", "role": "user", "content": "weather?", "threadId": "t"},
            {
                "id": "call",
                "role": "assistant",
                "threadId": "t",
                "content": [
                    {"type": "tool-call", "toolCallId": "c1", "toolName": "weather", "args": {"c": "Oslo"}}
                ],
            },
            {
                "id": "res",
                "role": "tool",
                "threadId": "t",
                "content": [
                    {"type": "tool-result", "toolCallId": "c1", "toolName": "weather", "result": "cold"}
                ],
            },
        ]
    )
    assert ids(saved) == ["q", "call"]
    stored = (await storage.list_messages("t")).messages
    assert ids(stored) == ["q", "call"]
    part = stored[1].content.parts[0]
    assert isinstance(part, ToolInvocationPart)
    assert (part.tool_invocation.state, part.tool_invocation.result) == ("result", "cold")
    assert stored[0].content.model_dump() == {
        "format": 2,
        "content": "weather?",
        "parts": [{"type": "text", "text": "weather?"}],
    }


async def test_unknown_parts_and_camel_case_round_trip_through_storage(storage: SQLiteStorage) -> None:
    await storage.save_thread({"id": "t", "resource_id": "r"})
    content = {
        "format": 2,
        "parts": [
            {"type": "shiny-new-part", "payload": {"deep": [1, {"x": None}]}, "providerMetadata": {"p": 1}},
            {"type": "data-chart", "data": {"points": [1, 2]}},
            {"type": "text", "text": "ünïcødé ✓", "createdAt": 1704067200000},
        ],
        "metadata": {"k": None, "n": 2**53 - 1},
        "experimentalAttachments": [{"name": "a.txt"}],
        "futureField": {"kept": True},
    }
    raw = {
        "id": "m",
        "role": "assistant",
        "threadId": "t",
        "resourceId": "r",
        "createdAt": "2024-01-01T00:00:00.000Z",
        "type": "v2",
        "content": content,
    }
    await storage.save_messages([raw])
    stored = (await storage.list_messages("t")).messages[0]
    assert isinstance(stored.content.parts[0], UnknownPart)
    assert stored.model_dump(mode="json", by_alias=True) == raw


# ---------------------------------------------------------------------------------- update_messages


async def test_update_merges_content_one_level_and_metadata_one_deeper(storage: SQLiteStorage) -> None:
    await storage.save_thread({"id": "t", "resource_id": "r"})
    await storage.save_messages([msg("m", "t", "old", metadata={"a": 1, "b": 2}, providerMetadata={"x": 1})])
    before = await updated_at(storage, "t")
    updated = await storage.update_messages(
        [
            {"id": "m", "content": {"content": "new", "metadata": {"b": 3, "c": None}}},
            {"id": "ghost", "role": "user"},
        ]
    )
    assert ids(updated) == ["m"]
    stored = (await storage.list_messages("t")).messages[0]
    assert stored.content.content == "new"
    assert stored.content.metadata == {"a": 1, "b": 3, "c": None}
    assert stored.content.provider_metadata == {"x": 1}
    assert [p.model_dump() for p in stored.content.parts] == [{"type": "text", "text": "old"}]
    assert stored == updated[0]
    assert await updated_at(storage, "t") > before


async def test_update_changes_only_given_fields(storage: SQLiteStorage) -> None:
    await storage.save_thread({"id": "t", "resource_id": "r"})
    await storage.save_messages([msg("m", "t", "text", seconds=1)])
    [updated] = await storage.update_messages(
        [{"id": "m", "role": "assistant", "createdAt": "2024-01-01T00:00:09Z", "type": "v2"}]
    )
    assert (updated.role, updated.created_at, updated.content.content) == ("assistant", at(9), "text")
    [replaced] = await storage.update_messages(
        [{"id": "m", "content": {"parts": [{"type": "text", "text": "p"}]}}]
    )
    assert [p.model_dump() for p in replaced.content.parts] == [{"type": "text", "text": "p"}]
    assert replaced.content.content == "text"


async def test_update_moves_between_threads_and_bumps_both(storage: SQLiteStorage) -> None:
    await storage.save_thread({"id": "t1", "resource_id": "r1"})
    await storage.save_thread({"id": "t2", "resource_id": "r1"})
    await storage.save_messages([msg("m", "t1")])
    t1, t2 = await updated_at(storage, "t1"), await updated_at(storage, "t2")
    [moved] = await storage.update_messages([{"id": "m", "threadId": "t2"}])
    assert (moved.thread_id, moved.resource_id) == ("t2", "r1")
    assert ids(await storage.list_messages("t1")) == []
    assert ids(await storage.list_messages("t2", resource_id="r1")) == ["m"]
    assert await updated_at(storage, "t1") > t1
    assert await updated_at(storage, "t2") > t2


async def test_update_is_atomic(storage: SQLiteStorage) -> None:
    await storage.save_thread({"id": "t", "resource_id": "r"})
    await storage.save_messages([msg("m1", "t", "one"), msg("m2", "t", "two")])
    before = await snapshot(storage)
    with pytest.raises(ThreadNotFoundError):
        await storage.update_messages(
            [{"id": "m1", "content": {"content": "changed"}}, {"id": "m2", "thread_id": "x"}]
        )
    with pytest.raises(ValidationError):
        await storage.update_messages(
            [{"id": "m1", "content": {"content": "changed"}}, {"id": "m2", "role": "tool"}]
        )
    with pytest.raises(ValidationError):
        await storage.update_messages(
            [{"id": "m1", "content": {"content": "changed"}}, {"id": "m2", "colour": "x"}]
        )
    assert await snapshot(storage) == before


async def test_update_with_no_updates_is_a_no_op(storage: SQLiteStorage) -> None:
    assert await storage.update_messages([]) == []


# ---------------------------------------------------------------------------------- delete_messages


async def test_delete_messages(scenario: SQLiteStorage) -> None:
    a1 = await updated_at(scenario, "A1")
    b1 = await scenario.get_thread_by_id("B1")
    await scenario.delete_messages(["a2", "nope"])
    await scenario.delete_messages([])
    assert ids(await scenario.list_messages("A1")) == ["a1", "a3"]
    assert await updated_at(scenario, "A1") > a1
    assert await scenario.get_thread_by_id("B1") == b1
    with pytest.raises(ValidationError):
        await scenario.delete_messages([" "])


# ------------------------------------------------------------------------------------------ threads


async def test_get_thread_checks_the_resource(scenario: SQLiteStorage) -> None:
    thread = await scenario.get_thread_by_id("A1")
    assert thread is not None
    assert thread.resource_id == "A"
    assert await scenario.get_thread_by_id("A1", resource_id="A") == thread
    assert await scenario.get_thread_by_id("A1", resource_id="B") is None
    assert await scenario.get_thread_by_id("missing") is None
    with pytest.raises(ValidationError):
        await scenario.get_thread_by_id("A1", resource_id="")


async def test_save_thread_inserts_or_replaces(storage: SQLiteStorage) -> None:
    saved = await storage.save_thread({"id": "t", "resourceId": "r", "title": "one", "metadata": {"a": 1}})
    assert await storage.get_thread_by_id("t") == saved
    replaced = await storage.save_thread(saved.model_copy(update={"title": "two", "metadata": None}))
    assert await storage.get_thread_by_id("t") == replaced
    assert (replaced.title, replaced.metadata) == ("two", None)
    with pytest.raises(ValidationError):
        await storage.save_thread({"id": "t"})


async def test_update_thread(storage: SQLiteStorage) -> None:
    await storage.save_thread({"id": "t", "resource_id": "r", "title": "old", "metadata": {"a": 1, "b": 2}})
    updated = await storage.update_thread("t", metadata={"b": 3, "c": 4})
    assert (updated.title, updated.metadata) == ("old", {"a": 1, "b": 3, "c": 4})
    updated = await storage.update_thread("t", title="new")
    assert (updated.title, updated.metadata) == ("new", {"a": 1, "b": 3, "c": 4})
    assert await storage.get_thread_by_id("t") == updated
    with pytest.raises(ThreadNotFoundError):
        await storage.update_thread("missing", title="x")


async def test_delete_thread_cascades_to_its_messages_only(scenario: SQLiteStorage) -> None:
    await scenario.delete_thread("A1")
    await scenario.delete_thread("never-existed")
    assert await scenario.get_thread_by_id("A1") is None
    assert await scenario.list_messages_by_id(["a1", "a2", "a3", "a4", "b1"]) == (
        await scenario.list_messages_by_id(["a4", "b1"])
    )
    assert ids(await scenario.list_messages_by_resource_id("A")) == ["a4"]


async def test_list_threads(storage: SQLiteStorage) -> None:
    rows = [
        ("t1", "r1", 1, {"project": "a", "n": 1}),
        ("t2", "r1", 2, {"project": "b", "n": True}),
        ("t3", "r2", 3, {"project": "a", "n": 1.0}),
        ("t4", "r1", 3, None),
    ]
    for tid, rid, second, metadata in rows:
        await storage.save_thread(
            {
                "id": tid,
                "resource_id": rid,
                "metadata": metadata,
                "created_at": at(second),
                "updated_at": at(10 - second),
            }
        )
    page = await storage.list_threads()
    assert [t.id for t in page.threads] == ["t4", "t3", "t2", "t1"]
    assert (page.total, page.has_more, page.per_page) == (4, False, 100)
    page = await storage.list_threads(filter={"resourceId": "r1"}, per_page=2)
    assert ([t.id for t in page.threads], page.total, page.has_more) == (["t4", "t2"], 3, True)
    page = await storage.list_threads(filter={"resource_id": "r1"}, per_page=2, page=1)
    assert ([t.id for t in page.threads], page.has_more) == (["t1"], False)
    page = await storage.list_threads(order_by={"field": "updated_at", "direction": "ASC"})
    assert [t.id for t in page.threads] == ["t3", "t4", "t2", "t1"]
    page = await storage.list_threads(order_by={"direction": "ASC"})
    assert [t.id for t in page.threads] == ["t1", "t2", "t3", "t4"]
    page = await storage.list_threads(filter={"metadata": {"n": 1}})
    assert [t.id for t in page.threads] == ["t3", "t1"]
    page = await storage.list_threads(filter={"metadata": {"n": True}})
    assert [t.id for t in page.threads] == ["t2"]
    page = await storage.list_threads(
        filter={"metadata": {"project": "a"}, "resource_id": "r1"}, per_page=False
    )
    assert ([t.id for t in page.threads], page.total, page.has_more, page.per_page) == (
        ["t1"],
        1,
        False,
        False,
    )
    page = await storage.list_threads(filter={"metadata": {"project": "a"}}, per_page=1)
    assert ([t.id for t in page.threads], page.total, page.has_more) == (["t3"], 2, True)


# ---------------------------------------------------------------------------------------- resources


async def test_resources(storage: SQLiteStorage) -> None:
    assert await storage.get_resource_by_id("r") is None
    created = await storage.update_resource("r", working_memory="# Notes", metadata={"a": 1})
    assert (created.working_memory, created.metadata) == ("# Notes", {"a": 1})
    assert created.created_at == created.updated_at
    updated = await storage.update_resource("r", metadata={"b": 2})
    assert (updated.working_memory, updated.metadata) == ("# Notes", {"a": 1, "b": 2})
    assert updated.updated_at > created.updated_at
    updated = await storage.update_resource("r", working_memory="new")
    assert (updated.working_memory, updated.metadata) == ("new", {"a": 1, "b": 2})
    assert await storage.get_resource_by_id("r") == updated
    saved = await storage.save_resource({"id": "r", "workingMemory": None, "createdAt": T0})
    assert await storage.get_resource_by_id("r") == saved
    assert (saved.working_memory, saved.metadata, saved.updated_at) == (None, None, T0)


# ------------------------------------------------------------------------------------- clone_thread


async def test_clone_thread_copies_messages_under_new_ids(scenario: SQLiteStorage) -> None:
    await scenario.update_thread("A1", title="Fruit", metadata={"project": "p"})
    result = await scenario.clone_thread("A1", new_thread_id="copy")
    thread = result.thread
    assert (thread.id, thread.resource_id, thread.title) == ("copy", "A", "Clone of Fruit")
    assert thread.metadata is not None
    assert thread.metadata["project"] == "p"
    assert thread.metadata["source_thread_id"] == "A1"
    assert thread.metadata["last_message_id"] == "a3"
    assert datetime.fromisoformat(thread.metadata["cloned_at"].replace("Z", "+00:00")).tzinfo is not None
    assert set(result.message_id_map) == {"a1", "a2", "a3"}
    assert set(result.message_id_map.values()).isdisjoint({"a1", "a2", "a3"})
    stored = (await scenario.list_messages("copy")).messages
    assert stored == result.messages
    assert [m.content.content for m in stored] == ["alpha apples", "alpha bananas", "alpha cherries"]
    assert [m.id for m in stored] == [result.message_id_map[i] for i in ("a1", "a2", "a3")]
    assert all(m.thread_id == "copy" and m.resource_id == "A" for m in stored)
    assert await scenario.get_thread_by_id("copy") == thread
    assert ids(await scenario.list_messages("A1")) == ["a1", "a2", "a3"]


async def test_clone_thread_options(scenario: SQLiteStorage) -> None:
    newest = await scenario.clone_thread("A1", message_limit=2, resource_id="A", title="mine")
    assert list(newest.message_id_map) == ["a2", "a3"]
    assert (newest.thread.resource_id, newest.thread.title) == ("A", "mine")
    assert all(m.resource_id == "A" for m in newest.messages)
    ranged = await scenario.clone_thread("A1", message_filter={"startDate": at(2), "endDate": at(2)})
    assert list(ranged.message_id_map) == ["a2"]
    picked = await scenario.clone_thread(
        "A1", message_filter={"message_ids": ["a3", "a1", "b1"]}, message_limit=1
    )
    assert list(picked.message_id_map) == ["a3"]
    empty = await scenario.clone_thread("A1", message_limit=0)
    assert (empty.messages, empty.message_id_map) == ([], {})
    assert empty.thread.metadata is not None
    assert empty.thread.metadata["last_message_id"] is None
    assert empty.thread.title == ""


async def test_clone_thread_errors(scenario: SQLiteStorage) -> None:
    with pytest.raises(ThreadNotFoundError):
        await scenario.clone_thread("missing")
    with pytest.raises(ValidationError, match="already exists"):
        await scenario.clone_thread("A1", new_thread_id="A2")
    with pytest.raises(ValidationError, match="message_limit"):
        await scenario.clone_thread("A1", message_limit=-1)
    with pytest.raises(ValidationError, match="message_filter"):
        await scenario.clone_thread("A1", message_filter={"start": at(1)})
    assert [t.id for t in (await scenario.list_threads(per_page=False)).threads] == ["B1", "A2", "A1"]


# ---------------------------------------------------------------------------- files and concurrency


async def test_a_file_database_persists_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "memory.db"
    first = SQLiteStorage(SQLiteSettings(url=f"sqlite:///{path}"))
    await seed_scenario(first)
    await first.update_resource("A", working_memory="wm")
    expected = await snapshot(first)
    await first.close()
    second = SQLiteStorage(str(path))
    assert await snapshot(second) == expected
    assert (await second.get_resource_by_id("A")).working_memory == "wm"  # type: ignore[union-attr]
    page = await second.list_messages("A2", resource_id="A", include=[window("a2", 1, 1)])
    assert ids(page) == ["a1", "a2", "a3", "a4"]
    await second.close()


async def test_concurrent_saves_from_many_tasks(tmp_path: Path) -> None:
    stores = [SQLiteStorage(str(tmp_path / "memory.db")) for _ in range(2)]
    await stores[0].save_thread({"id": "t", "resource_id": "r"})

    async def writer(n: int) -> None:
        store = stores[n % 2]
        await store.save_messages([msg(f"m{n:03d}-{k}", "t", seconds=n) for k in range(3)])

    await asyncio.gather(*(writer(n) for n in range(40)))
    page = await stores[1].list_messages("t", per_page=False)
    assert page.total == 120
    assert ids(page) == [f"m{n:03d}-{k}" for n in range(40) for k in range(3)]
    for store in stores:
        await store.close()


async def test_concurrent_bumps_stay_strictly_increasing(storage: SQLiteStorage) -> None:
    await storage.save_thread({"id": "t", "resource_id": "r"})
    results = await asyncio.gather(*(storage.update_thread("t", metadata={str(i): i}) for i in range(25)))
    stamps = sorted(r.updated_at for r in results)
    assert len(set(stamps)) == 25
    final = await storage.get_thread_by_id("t")
    assert final is not None
    assert final.metadata == {str(i): i for i in range(25)}


async def test_include_items_accept_models(scenario: SQLiteStorage) -> None:
    page = await scenario.list_messages(
        "B1", resource_id="A", per_page=0, include=[IncludeItem(id="a2", with_next_messages=1)]
    )
    assert ids(page) == ["a2", "a3"]


async def test_error_ids_name_the_store_and_operation(storage: SQLiteStorage) -> None:
    await storage.save_thread({"id": "t", "resource_id": "r"})
    with pytest.raises(ThreadNotFoundError) as missing:
        await storage.save_messages([msg("m", "nope")])
    assert missing.value.id == "MASTRA_STORAGE_SQLITE_SAVE_MESSAGES_THREAD_NOT_FOUND"
    with pytest.raises(ValidationError) as invalid:
        await storage.save_messages([{"role": "robot", "content": "x", "thread_id": "t"}])
    assert invalid.value.id == "MASTRA_STORAGE_SQLITE_SAVE_MESSAGES_INVALID_MESSAGE"
    with pytest.raises(ValidationError) as mismatch:
        await storage.save_messages([{**msg("m", "t"), "resource_id": "other"}])
    assert mismatch.value.id == "MASTRA_STORAGE_SQLITE_SAVE_MESSAGES_RESOURCE_MISMATCH"
    with pytest.raises(FilterValidationError) as bad_filter:
        await storage.list_messages("t", filter={"metadata": {"prototype": 1}})
    assert bad_filter.value.id == "MASTRA_STORAGE_SQLITE_LIST_MESSAGES_INVALID_FILTER"
    with pytest.raises(ThreadNotFoundError) as no_thread:
        await storage.update_thread("nope", title="x")
    assert no_thread.value.id == "MASTRA_STORAGE_SQLITE_UPDATE_THREAD_THREAD_NOT_FOUND"
