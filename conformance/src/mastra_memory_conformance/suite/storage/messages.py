"""``list_messages`` (docs/spec.md §4.3): the default order and the ``(created_at, id)`` tie-break in both
directions, pages and ``has_more``, include windows, the base-set filters (date range, the §4.6 metadata
filter) and argument validation.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

import pytest

from mastra_memory.errors import FilterValidationError, ValidationError
from mastra_memory.storage import MemoryStorage

from ...scenarios import at, message, window
from .base import ids_of, new_prefix, save_threads, seeded_scenario, strip

__all__ = ["MessageListingSuite"]


@pytest.mark.asyncio
class MessageListingSuite:
    """The exact algorithm of ``list_messages`` (a part of ``MemoryStorageSuite``)."""

    # --- list_messages: order and pages ---------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="order")
    async def test_default_order_and_tie_break_in_both_directions(self, storage: MemoryStorage) -> None:
        p = new_prefix()
        await save_threads(storage, p, ("t", "r"))
        await storage.save_messages(
            [message(p + i, p + "t", seconds=1) for i in ("c", "a", "d", "b")] + [message(p + "z", p + "t")]
        )
        asc = await storage.list_messages(p + "t")
        assert strip(p, ids_of(asc)) == ["z", "a", "b", "c", "d"], "default order is created_at ASC, then id"
        desc = await storage.list_messages(p + "t", order_by={"field": "createdAt", "direction": "desc"})
        assert strip(p, ids_of(desc)) == ["d", "c", "b", "a", "z"], "DESC breaks ties by id descending"
        pages = [strip(p, ids_of(await storage.list_messages(p + "t", per_page=2, page=n))) for n in range(3)]
        assert pages == [["z", "a"], ["b", "c"], ["d"]]
        pages = [
            strip(
                p,
                ids_of(
                    await storage.list_messages(p + "t", per_page=2, page=n, order_by={"direction": "DESC"})
                ),
            )
            for n in range(3)
        ]
        assert pages == [["d", "c"], ["b", "a"], ["z"]]

    @pytest.mark.conformance(domain="storage", item="pagination")
    async def test_pages_partition_the_base_set(self, storage: MemoryStorage) -> None:
        p = new_prefix()
        await save_threads(storage, p, ("t", "r"))
        await storage.save_messages([message(f"{p}m{i:02d}", p + "t", seconds=i // 3) for i in range(23)])
        seen: list[str] = []
        for number in range(5):
            page = await storage.list_messages(p + "t", per_page=5, page=number)
            seen += ids_of(page)
            assert (page.total, page.has_more, page.page, page.per_page) == (23, number < 4, number, 5)
        assert seen == [f"{p}m{i:02d}" for i in range(23)]
        beyond = await storage.list_messages(p + "t", per_page=5, page=9)
        assert (ids_of(beyond), beyond.total, beyond.has_more) == ([], 23, False)
        default = await storage.list_messages(p + "t")
        assert (len(default.messages), default.per_page, default.has_more) == (23, 40, False)

    @pytest.mark.conformance(domain="storage", item="pagination")
    async def test_per_page_false_and_zero(self, storage: MemoryStorage) -> None:
        scenario = await seeded_scenario(storage)
        a1 = scenario.id("A1")
        everything = await storage.list_messages(a1, per_page=False)
        assert everything.per_page is False, "per_page=False must be echoed as False"
        assert (strip(scenario.prefix, ids_of(everything)), everything.total, everything.has_more) == (
            ["a1", "a2", "a3"],
            3,
            False,
        )
        with pytest.raises(ValidationError, match=r"^page must be 0 when per_page is false"):
            await storage.list_messages(a1, per_page=False, page=1)
        nothing = await storage.list_messages(a1, per_page=0)
        assert (ids_of(nothing), nothing.total, nothing.has_more, nothing.per_page) == ([], 0, False, 0)

    @pytest.mark.conformance(domain="storage", item="pagination")
    async def test_include_total_false_decides_has_more_by_one_extra_row(
        self, storage: MemoryStorage
    ) -> None:
        scenario = await seeded_scenario(storage)
        a1, s = scenario.id("A1"), scenario.prefix
        page = await storage.list_messages(a1, per_page=2, include_total=False)
        assert (strip(s, ids_of(page)), page.total, page.has_more) == (["a1", "a2"], None, True)
        page = await storage.list_messages(a1, per_page=2, page=1, include_total=False)
        assert (strip(s, ids_of(page)), page.total, page.has_more) == (["a3"], None, False)
        page = await storage.list_messages(a1, per_page=3, include_total=False)
        assert (strip(s, ids_of(page)), page.total, page.has_more) == (["a1", "a2", "a3"], None, False)
        page = await storage.list_messages(
            a1, per_page=2, include_total=False, include=[scenario.window("a3")]
        )
        assert (strip(s, ids_of(page)), page.total, page.has_more) == (["a1", "a2", "a3"], None, False)

    @pytest.mark.conformance(domain="storage", item="order")
    async def test_several_thread_ids(self, storage: MemoryStorage) -> None:
        scenario = await seeded_scenario(storage)
        a2, b1, s = scenario.id("A2"), scenario.id("B1"), scenario.prefix
        page = await storage.list_messages([a2, b1], per_page=False)
        assert (strip(s, ids_of(page)), page.total) == (["a4", "b1"], 2)
        page = await storage.list_messages([a2, b1], resource_id=scenario.id("A"))
        assert (strip(s, ids_of(page)), page.total) == (["a4"], 1)

    # --- include windows ------------------------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="include")
    async def test_windows_clamp_union_and_skip_unknown_targets(self, storage: MemoryStorage) -> None:
        scenario = await seeded_scenario(storage)
        s = scenario.prefix
        page = await storage.list_messages(
            scenario.id("B1"),
            resource_id=scenario.id("A"),
            per_page=0,
            include=[scenario.window("a1", 5, 1), scenario.window("a3", 1, 9), scenario.window("a2")],
        )
        assert strip(s, ids_of(page)) == ["a1", "a2", "a3"], (
            "windows clamp at the thread's ends, no duplicates"
        )
        page = await storage.list_messages(scenario.id("A1"), include=[window(s + "nope", 3, 3)])
        assert strip(s, ids_of(page)) == ["a1", "a2", "a3"], "an include of an unknown id is skipped"

    @pytest.mark.conformance(domain="storage", item="include")
    async def test_include_only_path_sorts_by_order_and_ignores_filters(self, storage: MemoryStorage) -> None:
        scenario = await seeded_scenario(storage)
        page = await storage.list_messages(
            scenario.id("A1"),
            resource_id=scenario.id("A"),
            per_page=0,
            include=[scenario.window("a4"), scenario.window("a2", 1, 0)],
            order_by={"direction": "DESC"},
            filter={"date_range": {"start": at(100)}, "metadata": {"never": True}},
        )
        assert strip(scenario.prefix, ids_of(page)) == ["a4", "a2", "a1"], (
            "windows are not subject to date_range or metadata filters, and follow the requested order"
        )
        assert (page.total, page.has_more) == (0, False)

    @pytest.mark.conformance(domain="storage", item="include")
    async def test_windows_use_the_created_at_id_tuple(self, storage: MemoryStorage) -> None:
        p = new_prefix()
        await save_threads(storage, p, ("t", "r"))
        await storage.save_messages([message(p + i, p + "t", seconds=1) for i in ("a", "b", "c", "d", "e")])
        page = await storage.list_messages(p + "t", per_page=0, include=[window(p + "c", 1, 1)])
        assert strip(p, ids_of(page)) == ["b", "c", "d"], "equal timestamps: neighbours by (created_at, id)"
        page = await storage.list_messages(p + "t", per_page=0, include=[window(p + "a", 0, 2)])
        assert strip(p, ids_of(page)) == ["a", "b", "c"]
        page = await storage.list_messages(p + "t", per_page=0, include=[window(p + "e", 2, 0)])
        assert strip(p, ids_of(page)) == ["c", "d", "e"]

    @pytest.mark.conformance(domain="storage", item="include")
    async def test_has_more_counts_returned_messages_of_the_thread_set(self, storage: MemoryStorage) -> None:
        scenario = await seeded_scenario(storage)
        a1, a, s = scenario.id("A1"), scenario.id("A"), scenario.prefix
        page = await storage.list_messages(a1, per_page=1, include=[scenario.window("a3", 1, 0)])
        assert (strip(s, ids_of(page)), page.total, page.has_more) == (["a1", "a2", "a3"], 3, False)
        page = await storage.list_messages(a1, resource_id=a, per_page=1, include=[scenario.window("a4")])
        assert (strip(s, ids_of(page)), page.total, page.has_more) == (["a1", "a4"], 3, True), (
            "a window from another thread does not count towards the thread set"
        )
        page = await storage.list_messages(
            a1, resource_id=a, per_page=1, order_by={"direction": "DESC"}, include=[scenario.window("a4")]
        )
        assert (strip(s, ids_of(page)), page.has_more) == (["a4", "a3"], True)

    # --- base-set filters -----------------------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="date_range")
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
            ({"start": at(3), "end": at(3)}, ["m3"]),
            ({"start": at(3), "end": at(3), "end_exclusive": True}, []),
            ({"start": at(2.5), "end": at(3.5)}, ["m3"]),
        ],
    )
    async def test_date_range(
        self, storage: MemoryStorage, date_range: dict[str, Any], expected: list[str]
    ) -> None:
        p = new_prefix()
        await save_threads(storage, p, ("t", "r"))
        await storage.save_messages([message(f"{p}m{i}", p + "t", seconds=i) for i in range(1, 6)])
        page = await storage.list_messages(p + "t", filter={"dateRange": date_range})
        assert (strip(p, ids_of(page)), page.total) == (expected, len(expected)), f"date_range {date_range}"

    @pytest.mark.conformance(domain="storage", item="metadata filter")
    @pytest.mark.parametrize(
        ("metadata", "expected"),
        [
            pytest.param({"flag": True}, ["m0", "m5"], id="true-never-equals-1"),
            pytest.param({"flag": 1}, ["m1"], id="1-never-equals-true"),
            pytest.param({"flag": False}, ["m2"], id="false"),
            pytest.param({"n": 2}, ["m1", "m2"], id="2-equals-2.0"),
            pytest.param({"n": 2.0}, ["m1", "m2"], id="2.0-equals-2"),
            pytest.param({"n": "2"}, ["m3"], id="string-is-not-a-number"),
            pytest.param({"n": 1, "flag": True}, ["m0", "m5"], id="and"),
            pytest.param({"s": "x", "n": 2}, ["m1", "m2"], id="and-mixed"),
            pytest.param({"opt": None}, ["m1"], id="none-only-explicit-null"),
            pytest.param({"opt": 0}, ["m3"], id="zero"),
            pytest.param({"s": "1"}, ["m0"], id="string"),
            pytest.param({"absent": None}, [], id="missing-never-matches"),
            pytest.param({}, ["m0", "m1", "m2", "m3", "m4", "m5"], id="empty"),
        ],
    )
    async def test_metadata_filter_typing(
        self, storage: MemoryStorage, metadata: dict[str, Any], expected: list[str]
    ) -> None:
        """§4.6: every key present and equal with type; ``None`` matches only an explicit null."""
        p = new_prefix()
        await save_threads(storage, p, ("t", "r"))
        rows: list[dict[str, Any] | None] = [
            {"flag": True, "n": 1, "s": "1"},
            {"flag": 1, "n": 2.0, "s": "x", "opt": None},
            {"flag": False, "n": 2, "s": "x"},
            {"n": "2", "opt": 0},
            None,
            {"flag": True, "n": 1.0, "nested": {"a": 1}},
        ]
        await storage.save_messages(
            [message(f"{p}m{i}", p + "t", seconds=i, metadata=md) for i, md in enumerate(rows)]
        )
        page = await storage.list_messages(p + "t", filter={"metadata": metadata})
        assert (strip(p, ids_of(page)), page.total) == (expected, len(expected)), (
            f"metadata filter {metadata!r}"
        )
        paged = await storage.list_messages(p + "t", per_page=1, filter={"metadata": metadata})
        assert (paged.total, paged.has_more) == (len(expected), len(expected) > 1)

    @pytest.mark.conformance(domain="storage", item="metadata filter")
    async def test_invalid_filters_raise_before_any_result(self, storage: MemoryStorage) -> None:
        p = new_prefix()
        await save_threads(storage, p, ("t", "r"))
        bad_keys: list[dict[str, Any]] = [
            {"__proto__": 1},
            {"prototype": 1},
            {"constructor": 1},
            {"k" * 129: 1},
        ]
        bad_keys += [{"a-b": 1}, {"1a": 1}, {"": 1}]
        for bad in bad_keys:
            with pytest.raises(FilterValidationError, match=r"^invalid metadata filter key"):
                await storage.list_messages(p + "t", filter={"metadata": bad})
        for bad in ({"a": {"b": 1}}, {"a": [1]}, {"a": math.nan}, {"a": math.inf}):
            with pytest.raises(FilterValidationError, match=r"^invalid metadata filter value for key"):
                await storage.list_messages(p + "t", filter={"metadata": bad})
        with pytest.raises(FilterValidationError, match=r"^metadata filter must be a dict"):
            await storage.list_messages(p + "t", filter={"metadata": [("a", 1)]})
        page = await storage.list_messages(p + "t", filter={"metadata": {"k" * 128: 1, "_ok9": None}})
        assert ids_of(page) == []
        with pytest.raises(ValidationError):  # a vector-style filter is refused, never ignored
            await storage.list_messages(p + "t", filter={"thread_id": {"$eq": p + "t"}})

    @pytest.mark.conformance(domain="storage", item="validation")
    async def test_argument_validation(self, storage: MemoryStorage) -> None:
        """§4.3 step 1: bad arguments raise ValidationError with the spec's phrases."""
        p = new_prefix()
        await save_threads(storage, p, ("t", "r"))
        t = p + "t"
        thread_phrase = r"^thread_id must be a non-empty string or a list of non-empty strings"
        for bad_thread in ("", "  ", [], ["ok", ""]):
            with pytest.raises(ValidationError, match=thread_phrase):
                await storage.list_messages(bad_thread)
        with pytest.raises(ValidationError, match=r"^page must be >= 0"):
            await storage.list_messages(t, page=-1)
        with pytest.raises(ValidationError, match=r"^per_page must be >= 0"):
            await storage.list_messages(t, per_page=-1)
        with pytest.raises(ValidationError):
            await storage.list_messages(t, per_page=True)
        with pytest.raises(ValidationError, match=r"^page value too large"):
            await storage.list_messages(t, page=2**62, per_page=4)
        with pytest.raises(ValidationError):  # "" would silently remove resource isolation
            await storage.list_messages(t, resource_id="")
        with pytest.raises(ValidationError):
            await storage.list_messages(t, order_by={"field": "updated_at"})
        with pytest.raises(ValidationError):
            await storage.list_messages(t, order_by={"direction": "sideways"})
        with pytest.raises(ValidationError):
            await storage.list_messages(t, include=[{"id": ""}])
        with pytest.raises(ValidationError):
            await storage.list_messages(t, include=[{"id": "x", "withPreviousMessages": -1}])
        with pytest.raises(ValidationError):
            await storage.list_messages(t, filter={"date_range": {"start": datetime(2024, 1, 1)}})
        assert ids_of(await storage.list_messages(t, order_by={"direction": "asc"})) == []
