"""Memory storage (docs/spec.md §4): threads, messages, include windows, resource isolation, writes and bumps.

``MemoryStorageSuite`` runs against the target's ``MemoryStorage`` (targets without one are skipped with
"<adapter> provides no MemoryStorage"). It checks the exact algorithm of ``list_messages`` (§4.3) —
default order, the ``(created_at, id)`` tie-break in both directions, pages and ``has_more``, the
``per_page=0`` and ``per_page=False`` paths, include windows and the resource isolation scenario S1–S8 of
§8.3 — then ``list_threads`` (§4.4), the write rules of §4.5 (atomic saves, moves, merges, strictly
increasing ``updated_at``), the thread operations (moving a thread to another resource, archiving),
the §4.6 metadata filter and resources. The optional features
``clone_thread`` and ``list_messages_by_resource_id`` are checked when the storage declares them, and
must raise ``CapabilityError`` when it does not.

A target's backend lives for the whole session, so every test writes under its own random prefix
(thread, resource and message ids), and listings that span resources are narrowed by a metadata marker.

Why one module of this size: a module under ``suite`` is one conformance domain, and the report names a
test's domain after its module, so splitting it would split the domain's row in the conformance matrix.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mastra_memory.capabilities import AdapterCapabilities, StorageCapabilities
from mastra_memory.errors import (
    CapabilityError,
    FilterValidationError,
    ThreadNotFoundError,
    ThreadOwnershipError,
    ValidationError,
    error_id,
)
from mastra_memory.storage import MastraDBMessage, MemoryStorage, MessagePage, storage_capabilities

from ..report import Outcome
from ..scenarios import STORAGE_CASES, Scenario, StorageCase, at, message, window

__all__ = ["MemoryStorageSuite"]

_CASES = [
    pytest.param(case, id=case.name, marks=pytest.mark.conformance(domain="storage", item=case.name))
    for case in STORAGE_CASES
]
_ONE_MS = timedelta(milliseconds=1)


def _prefix() -> str:
    return f"st{uuid.uuid4().hex[:8]}-"


def _ids(page: MessagePage | Sequence[MastraDBMessage]) -> list[str]:
    messages = page.messages if isinstance(page, MessagePage) else page
    return [m.id for m in messages]


def _strip(prefix: str, ids: Sequence[str]) -> list[str]:
    """Ids without the test's prefix, for readable assertion messages."""
    return [i.removeprefix(prefix) for i in ids]


async def _updated_at(storage: MemoryStorage, thread_id: str) -> datetime:
    thread = await storage.get_thread_by_id(thread_id)
    assert thread is not None, f"thread {thread_id} is missing"
    return thread.updated_at


async def _snapshot(storage: MemoryStorage, thread_ids: Sequence[str]) -> list[Any]:
    """Everything stored for these threads: each thread and all its messages, as JSON data."""
    state: list[Any] = []
    for thread_id in thread_ids:
        thread = await storage.get_thread_by_id(thread_id)
        page = await storage.list_messages(thread_id, per_page=False)
        state.append(
            (
                None if thread is None else thread.model_dump(mode="json"),
                [m.model_dump(mode="json") for m in page.messages],
            )
        )
    return state


def _declared(storage: MemoryStorage, capabilities: AdapterCapabilities) -> StorageCapabilities:
    """What the storage declares: its own ``capabilities``, else the adapter manifest's ``storage``."""
    if getattr(storage, "capabilities", None) is not None:
        return storage_capabilities(storage)
    return capabilities.storage or StorageCapabilities()


async def _threads(storage: MemoryStorage, prefix: str, *rows: tuple[str, str]) -> None:
    for thread_id, resource_id in rows:
        await storage.save_thread({"id": prefix + thread_id, "resource_id": prefix + resource_id})


def _as(resource_id: str, message_dict: dict[str, Any]) -> dict[str, Any]:
    """``message_dict`` naming ``resource_id`` as its resource."""
    return {**message_dict, "resource_id": resource_id}


async def _alice_and_bob(storage: MemoryStorage) -> str:
    """Resource alice (threads ta, ta2; messages a1, a2 in ta) and bob (thread tb; b1); returns the prefix."""
    p = _prefix()
    await _threads(storage, p, ("ta", "alice"), ("ta2", "alice"), ("tb", "bob"))
    await storage.save_messages(
        [
            message(p + "a1", p + "ta", "alice's secret", seconds=1),
            message(p + "a2", p + "ta", "alice's plan", seconds=2),
            message(p + "b1", p + "tb", "bob's hello", seconds=3),
        ]
    )
    return p


def _assert_refused(error: ThreadOwnershipError, storage: MemoryStorage, operation: str, prefix: str) -> None:
    """A refused write of bob's names its store and operation, and never names alice, the owner."""
    assert error.id == error_id("STORAGE", storage.store_name, operation, "RESOURCE_MISMATCH"), error.id
    assert prefix + "alice" not in str(error), f"the error names the owning resource: {error}"


@pytest.mark.asyncio
class MemoryStorageSuite:
    """docs/spec.md §4 against the target's ``MemoryStorage``."""

    # --- §8.3 S1–S8 -----------------------------------------------------------------------------

    @pytest.mark.parametrize("case", _CASES)
    async def test_resource_isolation_scenario(
        self,
        storage: MemoryStorage,
        case: StorageCase,
        capabilities: AdapterCapabilities,
        outcome: Outcome,
    ) -> None:
        """§8.3 S1–S8: include windows, their resource predicate, the per_page=0 and per_page=False paths."""
        if case.isolates_resources and not _declared(storage, capabilities).resource_scope:
            outcome.unsupported("resource_scope", f"{case.name}: the storage declares resource_scope=False")
            return
        scenario = Scenario(_prefix())
        await scenario.seed_storage(storage)
        page = await storage.list_messages(**case.kwargs(scenario))
        got = (_strip(scenario.prefix, _ids(page)), page.total, page.has_more)
        assert got == (list(case.expected), case.total, case.has_more), (
            f"{case.name} ({case.description}): expected (ids, total, has_more) = "
            f"{(list(case.expected), case.total, case.has_more)}, got {got}"
        )
        assert page.page == 0
        echoed = (page.per_page, type(page.per_page))
        assert echoed == (case.echoed_per_page, type(case.echoed_per_page)), (
            f"{case.name}: per_page must be echoed as {case.echoed_per_page!r}, got {page.per_page!r}"
        )

    # --- threads --------------------------------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="threads")
    async def test_get_thread_checks_the_resource(self, storage: MemoryStorage) -> None:
        scenario = Scenario(_prefix())
        await scenario.seed_storage(storage)
        a1, a, b = scenario.id("A1"), scenario.id("A"), scenario.id("B")
        thread = await storage.get_thread_by_id(a1)
        assert thread is not None
        assert (thread.id, thread.resource_id) == (a1, a)
        assert await storage.get_thread_by_id(a1, resource_id=a) == thread
        assert await storage.get_thread_by_id(a1, resource_id=b) is None, "another resource's thread leaked"
        assert await storage.get_thread_by_id(scenario.id("missing")) is None
        with pytest.raises(ValidationError):
            await storage.get_thread_by_id(a1, resource_id="")

    @pytest.mark.conformance(domain="storage", item="threads")
    async def test_save_thread_inserts_or_replaces(self, storage: MemoryStorage) -> None:
        p = _prefix()
        saved = await storage.save_thread(
            {"id": p + "t", "resourceId": p + "r", "title": "one", "metadata": {"a": 1, "nested": {"x": [1]}}}
        )
        assert (saved.title, saved.metadata) == ("one", {"a": 1, "nested": {"x": [1]}})
        assert await storage.get_thread_by_id(p + "t") == saved
        replaced = await storage.save_thread(saved.model_copy(update={"title": "two", "metadata": None}))
        assert (replaced.title, replaced.metadata) == ("two", None)
        assert await storage.get_thread_by_id(p + "t") == replaced
        with pytest.raises(ValidationError):
            await storage.save_thread({"id": p + "orphan"})  # resource_id is required

    @pytest.mark.conformance(domain="storage", item="threads")
    async def test_update_thread_replaces_title_and_merges_metadata(self, storage: MemoryStorage) -> None:
        p = _prefix()
        original = await storage.save_thread(
            {"id": p + "t", "resource_id": p + "r", "title": "old", "metadata": {"a": 1, "b": {"x": 1}}}
        )
        updated = await storage.update_thread(p + "t", metadata={"b": {"y": 2}, "c": None})
        assert (updated.title, updated.metadata) == ("old", {"a": 1, "b": {"y": 2}, "c": None}), (
            "metadata must be merged one level deep (shallow): given keys replace stored keys"
        )
        assert updated.updated_at > original.updated_at
        assert updated.created_at == original.created_at
        renamed = await storage.update_thread(p + "t", title="new")
        assert (renamed.title, renamed.metadata) == ("new", {"a": 1, "b": {"y": 2}, "c": None})
        assert renamed.updated_at > updated.updated_at
        assert await storage.get_thread_by_id(p + "t") == renamed
        with pytest.raises(ThreadNotFoundError):
            await storage.update_thread(p + "missing", title="x")
        assert await storage.get_thread_by_id(p + "missing") is None

    @pytest.mark.conformance(domain="storage", item="updated_at")
    async def test_bumps_are_strictly_increasing_within_one_millisecond(self, storage: MemoryStorage) -> None:
        """``updated_at = max(now, previous + 1 ms)``: a stamp ahead of the clock still moves forward."""
        p = _prefix()
        ahead = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=1)
        await storage.save_thread(
            {"id": p + "t", "resource_id": p + "r", "created_at": at(0), "updated_at": ahead}
        )
        first = await storage.update_thread(p + "t", title="one")
        second = await storage.update_thread(p + "t", title="two")
        assert (first.updated_at, second.updated_at) == (ahead + _ONE_MS, ahead + 2 * _ONE_MS), (
            "two bumps of a thread whose updated_at is ahead of the clock must each add exactly 1 ms"
        )
        await storage.save_thread({"id": p + "u", "resource_id": p + "r"})
        stamps = [(await storage.update_thread(p + "u", metadata={"n": n})).updated_at for n in range(10)]
        assert all(a < b for a, b in itertools.pairwise(stamps)), f"bumps not strictly increasing: {stamps}"
        results = await asyncio.gather(
            *(storage.update_thread(p + "u", metadata={str(i): i}) for i in range(10))
        )
        concurrent = sorted(r.updated_at for r in results)
        assert len(set(concurrent)) == 10, "concurrent bumps of one thread produced equal updated_at values"
        assert concurrent[0] > stamps[-1]
        final = await storage.get_thread_by_id(p + "u")
        assert final is not None
        assert final.metadata == {"n": 9, **{str(i): i for i in range(10)}}

    @pytest.mark.conformance(domain="storage", item="updated_at")
    async def test_reads_never_bump(self, storage: MemoryStorage) -> None:
        scenario = Scenario(_prefix())
        await scenario.seed_storage(storage)
        a1 = scenario.id("A1")
        before = await _updated_at(storage, a1)
        await storage.list_messages(a1, include=[scenario.window("a2", 1, 1)])
        await storage.list_messages_by_id(scenario.ids(["a1", "a2"]))
        await storage.list_threads(filter={"resource_id": scenario.id("A")})
        await storage.get_thread_by_id(a1, resource_id=scenario.id("A"))
        assert await _updated_at(storage, a1) == before

    @pytest.mark.conformance(domain="storage", item="threads")
    async def test_delete_thread_cascades_to_its_messages_only(self, storage: MemoryStorage) -> None:
        scenario = Scenario(_prefix())
        await scenario.seed_storage(storage)
        await storage.delete_thread(scenario.id("A1"))
        await storage.delete_thread(scenario.id("never-existed"))  # a no-op
        assert await storage.get_thread_by_id(scenario.id("A1")) is None
        left = await storage.list_messages_by_id(scenario.ids(["a1", "a2", "a3", "a4", "b1"]))
        assert _strip(scenario.prefix, _ids(left)) == ["a4", "b1"]
        assert _ids(await storage.list_messages(scenario.id("A1"))) == []
        assert await storage.get_thread_by_id(scenario.id("A2")) is not None

    # --- list_messages: order and pages ---------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="order")
    async def test_default_order_and_tie_break_in_both_directions(self, storage: MemoryStorage) -> None:
        p = _prefix()
        await _threads(storage, p, ("t", "r"))
        await storage.save_messages(
            [message(p + i, p + "t", seconds=1) for i in ("c", "a", "d", "b")] + [message(p + "z", p + "t")]
        )
        asc = await storage.list_messages(p + "t")
        assert _strip(p, _ids(asc)) == ["z", "a", "b", "c", "d"], "default order is created_at ASC, then id"
        desc = await storage.list_messages(p + "t", order_by={"field": "createdAt", "direction": "desc"})
        assert _strip(p, _ids(desc)) == ["d", "c", "b", "a", "z"], "DESC breaks ties by id descending"
        pages = [_strip(p, _ids(await storage.list_messages(p + "t", per_page=2, page=n))) for n in range(3)]
        assert pages == [["z", "a"], ["b", "c"], ["d"]]
        pages = [
            _strip(
                p,
                _ids(
                    await storage.list_messages(p + "t", per_page=2, page=n, order_by={"direction": "DESC"})
                ),
            )
            for n in range(3)
        ]
        assert pages == [["d", "c"], ["b", "a"], ["z"]]

    @pytest.mark.conformance(domain="storage", item="pagination")
    async def test_pages_partition_the_base_set(self, storage: MemoryStorage) -> None:
        p = _prefix()
        await _threads(storage, p, ("t", "r"))
        await storage.save_messages([message(f"{p}m{i:02d}", p + "t", seconds=i // 3) for i in range(23)])
        seen: list[str] = []
        for number in range(5):
            page = await storage.list_messages(p + "t", per_page=5, page=number)
            seen += _ids(page)
            assert (page.total, page.has_more, page.page, page.per_page) == (23, number < 4, number, 5)
        assert seen == [f"{p}m{i:02d}" for i in range(23)]
        beyond = await storage.list_messages(p + "t", per_page=5, page=9)
        assert (_ids(beyond), beyond.total, beyond.has_more) == ([], 23, False)
        default = await storage.list_messages(p + "t")
        assert (len(default.messages), default.per_page, default.has_more) == (23, 40, False)

    @pytest.mark.conformance(domain="storage", item="pagination")
    async def test_per_page_false_and_zero(self, storage: MemoryStorage) -> None:
        scenario = Scenario(_prefix())
        await scenario.seed_storage(storage)
        a1 = scenario.id("A1")
        everything = await storage.list_messages(a1, per_page=False)
        assert everything.per_page is False, "per_page=False must be echoed as False"
        assert (_strip(scenario.prefix, _ids(everything)), everything.total, everything.has_more) == (
            ["a1", "a2", "a3"],
            3,
            False,
        )
        with pytest.raises(ValidationError, match=r"^page must be 0 when per_page is false"):
            await storage.list_messages(a1, per_page=False, page=1)
        nothing = await storage.list_messages(a1, per_page=0)
        assert (_ids(nothing), nothing.total, nothing.has_more, nothing.per_page) == ([], 0, False, 0)

    @pytest.mark.conformance(domain="storage", item="pagination")
    async def test_include_total_false_decides_has_more_by_one_extra_row(
        self, storage: MemoryStorage
    ) -> None:
        scenario = Scenario(_prefix())
        await scenario.seed_storage(storage)
        a1, s = scenario.id("A1"), scenario.prefix
        page = await storage.list_messages(a1, per_page=2, include_total=False)
        assert (_strip(s, _ids(page)), page.total, page.has_more) == (["a1", "a2"], None, True)
        page = await storage.list_messages(a1, per_page=2, page=1, include_total=False)
        assert (_strip(s, _ids(page)), page.total, page.has_more) == (["a3"], None, False)
        page = await storage.list_messages(a1, per_page=3, include_total=False)
        assert (_strip(s, _ids(page)), page.total, page.has_more) == (["a1", "a2", "a3"], None, False)
        page = await storage.list_messages(
            a1, per_page=2, include_total=False, include=[scenario.window("a3")]
        )
        assert (_strip(s, _ids(page)), page.total, page.has_more) == (["a1", "a2", "a3"], None, False)

    @pytest.mark.conformance(domain="storage", item="order")
    async def test_several_thread_ids(self, storage: MemoryStorage) -> None:
        scenario = Scenario(_prefix())
        await scenario.seed_storage(storage)
        a2, b1, s = scenario.id("A2"), scenario.id("B1"), scenario.prefix
        page = await storage.list_messages([a2, b1], per_page=False)
        assert (_strip(s, _ids(page)), page.total) == (["a4", "b1"], 2)
        page = await storage.list_messages([a2, b1], resource_id=scenario.id("A"))
        assert (_strip(s, _ids(page)), page.total) == (["a4"], 1)

    # --- include windows ------------------------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="include")
    async def test_windows_clamp_union_and_skip_unknown_targets(self, storage: MemoryStorage) -> None:
        scenario = Scenario(_prefix())
        await scenario.seed_storage(storage)
        s = scenario.prefix
        page = await storage.list_messages(
            scenario.id("B1"),
            resource_id=scenario.id("A"),
            per_page=0,
            include=[scenario.window("a1", 5, 1), scenario.window("a3", 1, 9), scenario.window("a2")],
        )
        assert _strip(s, _ids(page)) == ["a1", "a2", "a3"], (
            "windows clamp at the thread's ends, no duplicates"
        )
        page = await storage.list_messages(scenario.id("A1"), include=[window(s + "nope", 3, 3)])
        assert _strip(s, _ids(page)) == ["a1", "a2", "a3"], "an include of an unknown id is skipped"

    @pytest.mark.conformance(domain="storage", item="include")
    async def test_include_only_path_sorts_by_order_and_ignores_filters(self, storage: MemoryStorage) -> None:
        scenario = Scenario(_prefix())
        await scenario.seed_storage(storage)
        page = await storage.list_messages(
            scenario.id("A1"),
            resource_id=scenario.id("A"),
            per_page=0,
            include=[scenario.window("a4"), scenario.window("a2", 1, 0)],
            order_by={"direction": "DESC"},
            filter={"date_range": {"start": at(100)}, "metadata": {"never": True}},
        )
        assert _strip(scenario.prefix, _ids(page)) == ["a4", "a2", "a1"], (
            "windows are not subject to date_range or metadata filters, and follow the requested order"
        )
        assert (page.total, page.has_more) == (0, False)

    @pytest.mark.conformance(domain="storage", item="include")
    async def test_windows_use_the_created_at_id_tuple(self, storage: MemoryStorage) -> None:
        p = _prefix()
        await _threads(storage, p, ("t", "r"))
        await storage.save_messages([message(p + i, p + "t", seconds=1) for i in ("a", "b", "c", "d", "e")])
        page = await storage.list_messages(p + "t", per_page=0, include=[window(p + "c", 1, 1)])
        assert _strip(p, _ids(page)) == ["b", "c", "d"], "equal timestamps: neighbours by (created_at, id)"
        page = await storage.list_messages(p + "t", per_page=0, include=[window(p + "a", 0, 2)])
        assert _strip(p, _ids(page)) == ["a", "b", "c"]
        page = await storage.list_messages(p + "t", per_page=0, include=[window(p + "e", 2, 0)])
        assert _strip(p, _ids(page)) == ["c", "d", "e"]

    @pytest.mark.conformance(domain="storage", item="include")
    async def test_has_more_counts_returned_messages_of_the_thread_set(self, storage: MemoryStorage) -> None:
        scenario = Scenario(_prefix())
        await scenario.seed_storage(storage)
        a1, a, s = scenario.id("A1"), scenario.id("A"), scenario.prefix
        page = await storage.list_messages(a1, per_page=1, include=[scenario.window("a3", 1, 0)])
        assert (_strip(s, _ids(page)), page.total, page.has_more) == (["a1", "a2", "a3"], 3, False)
        page = await storage.list_messages(a1, resource_id=a, per_page=1, include=[scenario.window("a4")])
        assert (_strip(s, _ids(page)), page.total, page.has_more) == (["a1", "a4"], 3, True), (
            "a window from another thread does not count towards the thread set"
        )
        page = await storage.list_messages(
            a1, resource_id=a, per_page=1, order_by={"direction": "DESC"}, include=[scenario.window("a4")]
        )
        assert (_strip(s, _ids(page)), page.has_more) == (["a4", "a3"], True)

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
        p = _prefix()
        await _threads(storage, p, ("t", "r"))
        await storage.save_messages([message(f"{p}m{i}", p + "t", seconds=i) for i in range(1, 6)])
        page = await storage.list_messages(p + "t", filter={"dateRange": date_range})
        assert (_strip(p, _ids(page)), page.total) == (expected, len(expected)), f"date_range {date_range}"

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
        p = _prefix()
        await _threads(storage, p, ("t", "r"))
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
        assert (_strip(p, _ids(page)), page.total) == (expected, len(expected)), (
            f"metadata filter {metadata!r}"
        )
        paged = await storage.list_messages(p + "t", per_page=1, filter={"metadata": metadata})
        assert (paged.total, paged.has_more) == (len(expected), len(expected) > 1)

    @pytest.mark.conformance(domain="storage", item="metadata filter")
    async def test_invalid_filters_raise_before_any_result(self, storage: MemoryStorage) -> None:
        p = _prefix()
        await _threads(storage, p, ("t", "r"))
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
        assert _ids(page) == []
        with pytest.raises(ValidationError):  # a vector-style filter is refused, never ignored
            await storage.list_messages(p + "t", filter={"thread_id": {"$eq": p + "t"}})

    @pytest.mark.conformance(domain="storage", item="validation")
    async def test_argument_validation(self, storage: MemoryStorage) -> None:
        """§4.3 step 1: bad arguments raise ValidationError with the spec's phrases."""
        p = _prefix()
        await _threads(storage, p, ("t", "r"))
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
        assert _ids(await storage.list_messages(t, order_by={"direction": "asc"})) == []

    # --- list_threads ---------------------------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="list_threads")
    async def test_list_threads(self, storage: MemoryStorage) -> None:
        p = _prefix()
        rows = [
            ("t1", "r1", 1, {"project": "a", "n": 1}),
            ("t2", "r1", 2, {"project": "b", "n": True}),
            ("t3", "r2", 3, {"project": "a", "n": 1.0}),
            ("t4", "r1", 3, {}),
        ]
        for tid, rid, second, metadata in rows:
            await storage.save_thread(
                {
                    "id": p + tid,
                    "resource_id": p + rid,
                    "metadata": {"run": p, **metadata},
                    "created_at": at(second),
                    "updated_at": at(10 - second),
                }
            )
        run = {"run": p}

        async def listed(**kwargs: Any) -> tuple[list[str], int, bool]:
            page = await storage.list_threads(**kwargs)
            return [t.id.removeprefix(p) for t in page.threads], page.total, page.has_more

        # No resource_id: across resources (narrowed to this test by the metadata marker).
        page = await storage.list_threads(filter={"metadata": run})
        assert [t.id.removeprefix(p) for t in page.threads] == ["t4", "t3", "t2", "t1"], (
            "default order is created_at DESC with ties by id DESC"
        )
        assert (page.total, page.has_more, page.per_page, page.page) == (4, False, 100, 0)
        assert await listed(filter={"resourceId": p + "r1"}, per_page=2) == (["t4", "t2"], 3, True)
        assert await listed(filter={"resource_id": p + "r1"}, per_page=2, page=1) == (["t1"], 3, False)
        assert (await listed(filter={"metadata": run}, order_by={"field": "updated_at", "direction": "ASC"}))[
            0
        ] == [
            "t3",
            "t4",
            "t2",
            "t1",
        ]
        assert (await listed(filter={"metadata": run}, order_by={"field": "updated_at"}))[0] == [
            "t1",
            "t2",
            "t4",
            "t3",
        ], "a field without a direction means DESC"
        assert (await listed(filter={"metadata": run}, order_by={"direction": "ASC"}))[0] == [
            "t1",
            "t2",
            "t3",
            "t4",
        ]
        assert await listed(filter={"metadata": {**run, "n": 1}}) == (["t3", "t1"], 2, False), (
            "1 == 1.0, not True"
        )
        assert await listed(filter={"metadata": {**run, "n": True}}) == (["t2"], 1, False)
        assert await listed(filter={"metadata": {**run, "n": None}}) == ([], 0, False), (
            "missing never matches"
        )
        everything = await storage.list_threads(
            filter={"metadata": {**run, "project": "a"}, "resource_id": p + "r1"}, per_page=False
        )
        assert ([t.id for t in everything.threads], everything.total, everything.has_more) == (
            [p + "t1"],
            1,
            False,
        )
        assert everything.per_page is False
        assert await listed(filter={"metadata": {**run, "project": "a"}}, per_page=1) == (["t3"], 2, True)

    @pytest.mark.conformance(domain="storage", item="list_threads")
    async def test_list_threads_validation(self, storage: MemoryStorage) -> None:
        with pytest.raises(ValidationError, match=r"^page must be 0 when per_page is false"):
            await storage.list_threads(per_page=False, page=1)
        with pytest.raises(ValidationError, match=r"^page must be >= 0"):
            await storage.list_threads(page=-1)
        with pytest.raises(ValidationError, match=r"^per_page must be >= 0"):
            await storage.list_threads(per_page=-1)
        with pytest.raises(ValidationError, match=r"^page value too large"):
            await storage.list_threads(page=2**62, per_page=4)
        for bad_order in ({"field": "title"}, {"direction": "up"}):
            with pytest.raises(ValidationError):
                await storage.list_threads(order_by=bad_order)
        with pytest.raises(ValidationError):
            await storage.list_threads(filter={"owner": "x"})
        with pytest.raises(FilterValidationError):
            await storage.list_threads(filter={"metadata": {"a": {"b": 1}}})

    # --- save_messages --------------------------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="save_messages")
    async def test_save_messages_fills_resource_and_bumps_the_thread(self, storage: MemoryStorage) -> None:
        p = _prefix()
        await _threads(storage, p, ("t", "r"))
        before = await _updated_at(storage, p + "t")
        saved = await storage.save_messages([{"role": "user", "content": "hi", "threadId": p + "t"}])
        assert saved[0].resource_id == p + "r", "resource_id=None is filled from the thread"
        assert saved[0].content.content == "hi"
        assert saved[0].id, "a missing id is generated"
        assert _ids(await storage.list_messages(p + "t")) == [saved[0].id]
        assert await _updated_at(storage, p + "t") > before
        assert await storage.save_messages([]) == []

    @pytest.mark.conformance(domain="storage", item="save_messages")
    async def test_save_without_timestamps_keeps_list_order(self, storage: MemoryStorage) -> None:
        p = _prefix()
        await _threads(storage, p, ("t", "r"))
        batch = [
            {"id": f"{p}z{9 - i}", "role": "user", "content": str(i), "thread_id": p + "t"} for i in range(10)
        ]
        await storage.save_messages(batch)
        await storage.save_messages(
            [{"id": p + "a-last", "role": "assistant", "content": "x", "thread_id": p + "t"}]
        )
        expected = [f"z{9 - i}" for i in range(10)] + ["a-last"]
        assert _strip(p, _ids(await storage.list_messages(p + "t"))) == expected

    @pytest.mark.conformance(domain="storage", item="atomic save")
    async def test_a_batch_with_one_invalid_message_saves_nothing(self, storage: MemoryStorage) -> None:
        p = _prefix()
        await _threads(storage, p, ("t", "r"), ("u", "r2"))
        await storage.save_messages([message(p + "m1", p + "t", "one", seconds=1)])
        before = await _snapshot(storage, [p + "t", p + "u"])
        good = message(p + "m2", p + "t", "two", seconds=2)
        changed = message(p + "m1", p + "t", "changed", seconds=1)
        moved = message(p + "m1", p + "u", "moved", seconds=1)
        bad_batches: list[tuple[str, list[dict[str, Any]], type[Exception]]] = [
            ("missing thread", [good, message(p + "x", p + "nope")], ThreadNotFoundError),
            ("blank thread", [changed, {**message(p + "x", p + "t"), "thread_id": ""}], ValidationError),
            (
                "resource mismatch",
                [moved, {**message(p + "x", p + "t"), "resource_id": p + "other"}],
                ValidationError,
            ),
            ("bad role", [good, {**message(p + "x", p + "t"), "role": "robot"}], ValidationError),
            (
                "naive datetime",
                [changed, {**message(p + "x", p + "t"), "created_at": datetime(2024, 1, 1)}],
                ValidationError,
            ),
            ("no content", [good, {"id": p + "x", "role": "user", "thread_id": p + "t"}], ValidationError),
        ]
        for label, batch, error in bad_batches:
            with pytest.raises(error):
                await storage.save_messages(batch)
            assert await _snapshot(storage, [p + "t", p + "u"]) == before, (
                f"a failed save ({label}) changed stored state: saves must be atomic and must not "
                "bump updated_at"
            )

    @pytest.mark.conformance(domain="storage", item="moves")
    async def test_saving_an_existing_id_under_another_thread_moves_it(self, storage: MemoryStorage) -> None:
        p = _prefix()
        await _threads(storage, p, ("t1", "r1"), ("t2", "r1"))
        await storage.save_messages(
            [message(p + "m", p + "t1", "first"), message(p + "k", p + "t1", seconds=1)]
        )
        t1, t2 = await _updated_at(storage, p + "t1"), await _updated_at(storage, p + "t2")
        [stored] = await storage.save_messages([message(p + "m", p + "t2", "second", seconds=2)])
        assert (stored.thread_id, stored.resource_id, stored.content.content) == (
            p + "t2",
            p + "r1",
            "second",
        )
        assert _strip(p, _ids(await storage.list_messages(p + "t1"))) == ["k"]
        assert _strip(p, _ids(await storage.list_messages(p + "t2", resource_id=p + "r1"))) == ["m"]
        found = await storage.list_messages_by_id([p + "m"])
        assert [(m.id, m.thread_id) for m in found] == [(p + "m", p + "t2")], (
            "the id must never be duplicated"
        )
        assert await _updated_at(storage, p + "t1") > t1, "the thread a message moved away from is bumped"
        assert await _updated_at(storage, p + "t2") > t2, "the thread that received the message is bumped"

    # --- update_messages / delete_messages ------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="update_messages")
    async def test_update_merges_content_and_changes_only_given_fields(self, storage: MemoryStorage) -> None:
        p = _prefix()
        await _threads(storage, p, ("t", "r"))
        await storage.save_messages(
            [
                {
                    **message(p + "m", p + "t", "old", seconds=1, metadata={"a": 1, "b": 2}),
                    "content": {
                        "format": 2,
                        "content": "old",
                        "parts": [{"type": "text", "text": "old"}],
                        "metadata": {"a": 1, "b": 2},
                        "providerMetadata": {"x": 1},
                    },
                }
            ]
        )
        before = await _updated_at(storage, p + "t")
        updated = await storage.update_messages(
            [
                {"id": p + "m", "content": {"content": "new", "metadata": {"b": 3, "c": None}}},
                {"id": p + "ghost", "role": "user"},
            ]
        )
        assert _ids(updated) == [p + "m"], "unknown ids are ignored"
        [stored] = (await storage.list_messages(p + "t")).messages
        assert stored.content.content == "new"
        assert stored.content.metadata == {"a": 1, "b": 3, "c": None}, (
            "content.metadata merges one level deeper"
        )
        assert stored.content.provider_metadata == {"x": 1}, "content keys not given are kept"
        assert [part.model_dump() for part in stored.content.parts] == [{"type": "text", "text": "old"}]
        assert stored == updated[0]
        assert await _updated_at(storage, p + "t") > before
        [changed] = await storage.update_messages(
            [{"id": p + "m", "role": "assistant", "createdAt": "2024-01-01T00:00:09Z", "type": "v2"}]
        )
        assert (changed.role, changed.created_at, changed.content.content) == ("assistant", at(9), "new")
        assert await storage.update_messages([]) == []

    @pytest.mark.conformance(domain="storage", item="moves")
    async def test_update_moves_between_threads_and_bumps_both(self, storage: MemoryStorage) -> None:
        p = _prefix()
        await _threads(storage, p, ("t1", "r1"), ("t2", "r1"))
        await storage.save_messages([message(p + "m", p + "t1")])
        t1, t2 = await _updated_at(storage, p + "t1"), await _updated_at(storage, p + "t2")
        [moved] = await storage.update_messages([{"id": p + "m", "threadId": p + "t2"}])
        assert (moved.thread_id, moved.resource_id) == (p + "t2", p + "r1")
        assert _ids(await storage.list_messages(p + "t1")) == []
        assert _ids(await storage.list_messages(p + "t2", resource_id=p + "r1")) == [p + "m"]
        assert await _updated_at(storage, p + "t1") > t1
        assert await _updated_at(storage, p + "t2") > t2

    @pytest.mark.conformance(domain="storage", item="atomic save")
    async def test_update_is_atomic(self, storage: MemoryStorage) -> None:
        p = _prefix()
        await _threads(storage, p, ("t", "r"))
        await storage.save_messages(
            [message(p + "m1", p + "t", "one"), message(p + "m2", p + "t", "two", seconds=1)]
        )
        before = await _snapshot(storage, [p + "t"])
        change = {"id": p + "m1", "content": {"content": "changed"}}
        for label, second, error in [
            ("move to a missing thread", {"id": p + "m2", "thread_id": p + "nope"}, ThreadNotFoundError),
            ("bad role", {"id": p + "m2", "role": "tool"}, ValidationError),
            ("unknown field", {"id": p + "m2", "colour": "red"}, ValidationError),
        ]:
            with pytest.raises(error):
                await storage.update_messages([change, second])
            assert await _snapshot(storage, [p + "t"]) == before, (
                f"a failed update ({label}) changed stored state"
            )

    @pytest.mark.conformance(domain="storage", item="delete_messages")
    async def test_delete_messages_bumps_only_threads_that_lost_a_message(
        self, storage: MemoryStorage
    ) -> None:
        scenario = Scenario(_prefix())
        await scenario.seed_storage(storage)
        a1, b1 = scenario.id("A1"), scenario.id("B1")
        before_a1 = await _updated_at(storage, a1)
        b1_thread = await storage.get_thread_by_id(b1)
        await storage.delete_messages([scenario.id("a2"), scenario.id("nope")])
        await storage.delete_messages([])
        assert _strip(scenario.prefix, _ids(await storage.list_messages(a1))) == ["a1", "a3"]
        assert await _updated_at(storage, a1) > before_a1
        assert await storage.get_thread_by_id(b1) == b1_thread, "a thread that lost nothing is not bumped"
        with pytest.raises(ValidationError):
            await storage.delete_messages([" "])

    @pytest.mark.conformance(domain="storage", item="list_messages_by_id")
    async def test_list_messages_by_id(self, storage: MemoryStorage) -> None:
        scenario = Scenario(_prefix())
        await scenario.seed_storage(storage)
        found = await storage.list_messages_by_id(scenario.ids(["b1", "a3", "a1", "zz"]))
        assert _strip(scenario.prefix, _ids(found)) == ["a1", "a3", "b1"], "ascending (created_at, id)"
        assert found[0].content.content == "alpha apples"
        assert await storage.list_messages_by_id([]) == []
        with pytest.raises(ValidationError):
            await storage.list_messages_by_id([""])

    # --- write ownership (§4.5) -----------------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="write ownership")
    async def test_save_messages_never_takes_another_resources_message(self, storage: MemoryStorage) -> None:
        """§4.5: a saved message belongs to a resource (its resource_id, else its thread's); an existing id
        of another resource, or a thread of another resource, is refused and nothing of the batch is saved."""
        p = await _alice_and_bob(storage)
        before = await _snapshot(storage, [p + "ta", p + "tb"])
        own = message(p + "b2", p + "tb", "bob's own", seconds=5)
        attacks: list[tuple[str, dict[str, Any]]] = [
            ("her id into his thread, naming him", _as(p + "bob", message(p + "a1", p + "tb", "stolen"))),
            ("her id into his thread, naming no one", message(p + "a1", p + "tb", "stolen")),
            ("her id in her thread, naming him", _as(p + "bob", message(p + "a1", p + "ta", "stolen"))),
            ("a new id into her thread, naming him", _as(p + "bob", message(p + "b3", p + "ta", "spam"))),
        ]
        for label, attack in attacks:
            with pytest.raises(ThreadOwnershipError) as info:
                await storage.save_messages([own, attack])
            _assert_refused(info.value, storage, "SAVE_MESSAGES", p)
            assert await _snapshot(storage, [p + "ta", p + "tb"]) == before, (
                f"a refused save ({label}) changed stored state: nothing of the batch may be written"
            )
        # Her own re-save and a move between her own threads still work (Mastra's upsert, §4.5).
        [resaved] = await storage.save_messages([message(p + "a1", p + "ta2", "moved by alice", seconds=1)])
        assert (resaved.thread_id, resaved.resource_id) == (p + "ta2", p + "alice")

    @pytest.mark.conformance(domain="storage", item="write ownership")
    async def test_update_messages_never_moves_a_message_to_another_resource(
        self, storage: MemoryStorage
    ) -> None:
        """§4.5: a move into a thread of another resource is refused whether or not a resource is named;
        with ``resource_id``, every message updated must belong to it. Nothing of the batch is written."""
        p = await _alice_and_bob(storage)
        before = await _snapshot(storage, [p + "ta", p + "ta2", p + "tb"])
        own = {"id": p + "b1", "content": {"content": "bob edits his own"}}
        attacks: list[tuple[str, list[dict[str, Any]], str | None]] = [
            ("her message into his thread", [own, {"id": p + "a1", "threadId": p + "tb"}], None),
            (
                "her message into his thread, naming him",
                [own, {"id": p + "a1", "thread_id": p + "tb"}],
                p + "bob",
            ),
            ("his message into her thread", [own, {"id": p + "b1", "thread_id": p + "ta"}], None),
            ("her content, naming him", [own, {"id": p + "a1", "content": {"content": "stolen"}}], p + "bob"),
            (
                "her message within her threads, naming him",
                [{"id": p + "a1", "thread_id": p + "ta2"}],
                p + "bob",
            ),
        ]
        for label, batch, resource in attacks:
            with pytest.raises(ThreadOwnershipError) as info:
                await storage.update_messages(batch, resource_id=resource)
            _assert_refused(info.value, storage, "UPDATE_MESSAGES", p)
            assert await _snapshot(storage, [p + "ta", p + "ta2", p + "tb"]) == before, (
                f"a refused update ({label}) changed stored state: nothing of the batch may be written"
            )
        with pytest.raises(ValidationError):
            await storage.update_messages([own], resource_id="")
        # Named and owned, or unnamed and within one resource: allowed (unknown ids are still ignored).
        [edited] = await storage.update_messages(
            [own, {"id": p + "ghost", "role": "user"}], resource_id=p + "bob"
        )
        assert (edited.id, edited.content.content) == (p + "b1", "bob edits his own")
        [moved] = await storage.update_messages(
            [{"id": p + "a1", "thread_id": p + "ta2"}], resource_id=p + "alice"
        )
        assert (moved.thread_id, moved.resource_id) == (p + "ta2", p + "alice")
        [unnamed] = await storage.update_messages([{"id": p + "a1", "content": {"content": "edited"}}])
        assert unnamed.content.content == "edited", (
            "an update that names no resource and moves nothing is allowed"
        )

    @pytest.mark.conformance(domain="storage", item="write ownership")
    async def test_save_thread_never_takes_another_resources_thread(self, storage: MemoryStorage) -> None:
        """§4.5: ``save_thread`` over an existing id of another resource is refused; its owner replaces it."""
        p = await _alice_and_bob(storage)
        before = await _snapshot(storage, [p + "ta"])
        with pytest.raises(ThreadOwnershipError) as info:
            await storage.save_thread({"id": p + "ta", "resource_id": p + "bob", "title": "mine now"})
        _assert_refused(info.value, storage, "SAVE_THREAD", p)
        assert await _snapshot(storage, [p + "ta"]) == before, "a refused save_thread changed the thread"
        assert await storage.get_thread_by_id(p + "ta", resource_id=p + "bob") is None
        replaced = await storage.save_thread({"id": p + "ta", "resource_id": p + "alice", "title": "renamed"})
        assert await storage.get_thread_by_id(p + "ta", resource_id=p + "alice") == replaced

    @pytest.mark.conformance(domain="storage", item="write ownership")
    async def test_clone_thread_copies_only_the_named_resources_thread(
        self, storage: MemoryStorage, capabilities: AdapterCapabilities, outcome: Outcome
    ) -> None:
        """§4.5: with ``resource_id`` the source must belong to it, and the clone does too; without one the
        clone stays in the source's resource. Nothing is created when refused."""
        if not _declared(storage, capabilities).clone_thread:
            outcome.unsupported("clone_thread", "declared clone_thread=False")
            return
        p = await _alice_and_bob(storage)
        with pytest.raises(ThreadOwnershipError) as info:
            await storage.clone_thread(p + "ta", new_thread_id=p + "stolen", resource_id=p + "bob")
        _assert_refused(info.value, storage, "CLONE_THREAD", p)
        assert await storage.get_thread_by_id(p + "stolen") is None, "a refused clone created a thread"
        bobs = await storage.list_threads(filter={"resource_id": p + "bob"}, per_page=False)
        assert [t.id for t in bobs.threads] == [p + "tb"]
        named = await storage.clone_thread(p + "ta", new_thread_id=p + "copy", resource_id=p + "alice")
        unnamed = await storage.clone_thread(p + "ta", new_thread_id=p + "copy2")
        for clone in (named, unnamed):
            assert clone.thread.resource_id == p + "alice"
            assert {m.resource_id for m in clone.messages} == {p + "alice"}

    # --- thread operations: move, archive, clone into a resource (docs/spec.md §4.2, §4.4) ---------

    @pytest.mark.conformance(domain="storage", item="thread operations")
    async def test_update_thread_resource_id_moves_the_thread_and_its_messages(
        self, storage: MemoryStorage
    ) -> None:
        """§4.5: one transaction moves the thread and every message; the old resource sees none of it."""
        p = await _alice_and_bob(storage)
        before = await _updated_at(storage, p + "ta")
        moved = await storage.update_thread_resource_id(
            p + "ta", p + "carol", expected_resource_id=p + "alice"
        )
        assert (moved.id, moved.resource_id) == (p + "ta", p + "carol")
        assert moved.updated_at > before, "a move bumps updated_at"
        assert await storage.get_thread_by_id(p + "ta") == moved
        assert await storage.get_thread_by_id(p + "ta", resource_id=p + "alice") is None
        page = await storage.list_messages(p + "ta", per_page=False)
        assert (_strip(p, _ids(page)), {m.resource_id for m in page.messages}) == (
            ["a1", "a2"],
            {p + "carol"},
        )
        old = await storage.list_messages(p + "ta", resource_id=p + "alice", per_page=False)
        assert old.messages == [], "the old resource reads none of the moved messages"
        window = await storage.list_messages(
            p + "ta2", resource_id=p + "alice", include=[{"id": p + "a1", "with_next_messages": 1}]
        )
        assert window.messages == [], "include windows of the old resource skip the moved messages"
        alices = await storage.list_threads(filter={"resource_id": p + "alice"}, per_page=False)
        carols = await storage.list_threads(filter={"resource_id": p + "carol"}, per_page=False)
        assert ([t.id for t in alices.threads], [t.id for t in carols.threads]) == ([p + "ta2"], [p + "ta"])
        same = await storage.update_thread_resource_id(p + "ta", p + "carol")
        assert same == moved, "moving to the owner changes nothing"

    @pytest.mark.conformance(domain="storage", item="write ownership")
    async def test_update_thread_resource_id_moves_only_the_named_resources_thread(
        self, storage: MemoryStorage
    ) -> None:
        """§4.5: with ``expected_resource_id`` the thread must belong to it; refused, nothing changes."""
        p = await _alice_and_bob(storage)
        snapshot = await _snapshot(storage, [p + "ta"])
        with pytest.raises(ThreadOwnershipError) as info:
            await storage.update_thread_resource_id(p + "ta", p + "bob", expected_resource_id=p + "bob")
        _assert_refused(info.value, storage, "UPDATE_THREAD_RESOURCE_ID", p)
        assert await _snapshot(storage, [p + "ta"]) == snapshot, "a refused move changed the thread"
        with pytest.raises(ThreadNotFoundError):
            await storage.update_thread_resource_id(p + "missing", p + "bob")
        with pytest.raises(ValidationError):
            await storage.update_thread_resource_id(p + "ta", "")

    @pytest.mark.conformance(domain="storage", item="thread operations")
    async def test_archived_threads_are_listed_only_when_asked(self, storage: MemoryStorage) -> None:
        """§4.4: metadata ``archived=True`` hides a thread from ``list_threads`` (totals and pages
        included) unless ``include_archived=True``; unarchiving lists it again."""
        p = _prefix()
        names = [f"t{n}" for n in range(5)]
        await _threads(storage, p, *((name, "alice") for name in names))
        flt = {"resource_id": p + "alice"}
        order = {"field": "created_at", "direction": "ASC"}
        archived = await storage.archive_thread(p + "t1", resource_id=p + "alice")
        assert archived.metadata is not None
        assert (archived.metadata["archived"], "archived_at" in archived.metadata) == (True, True)
        await storage.archive_thread(p + "t3")
        assert await storage.archive_thread(p + "t3") == await storage.get_thread_by_id(p + "t3")
        everything = await storage.list_threads(
            filter=flt, per_page=False, order_by=order, include_archived=True
        )
        assert len(everything.threads) == 5
        visible = [t.id for t in everything.threads if t.id not in (p + "t1", p + "t3")]
        listed = await storage.list_threads(filter=flt, per_page=False, order_by=order)
        assert ([t.id for t in listed.threads], listed.total) == (visible, 3)
        pages = [await storage.list_threads(filter=flt, per_page=2, page=n, order_by=order) for n in (0, 1)]
        assert [t.id for page in pages for t in page.threads] == visible
        assert [(page.total, page.has_more) for page in pages] == [(3, True), (3, False)]
        marked = {"resource_id": p + "alice", "metadata": {"archived": True}}
        assert (await storage.list_threads(filter=marked)).threads == []
        assert {t.id for t in (await storage.list_threads(filter=marked, include_archived=True)).threads} == {
            p + "t1",
            p + "t3",
        }
        restored = await storage.unarchive_thread(p + "t1")
        assert "archived" not in (restored.metadata or {})
        assert (await storage.list_threads(filter=flt)).total == 4
        with pytest.raises(ThreadOwnershipError):
            await storage.archive_thread(p + "t0", resource_id=p + "bob")
        with pytest.raises(ThreadNotFoundError):
            await storage.unarchive_thread(p + "missing")

    @pytest.mark.conformance(domain="storage", item="clone_thread")
    async def test_clone_thread_into_another_resource(
        self, storage: MemoryStorage, capabilities: AdapterCapabilities, outcome: Outcome
    ) -> None:
        """§4.2: ``new_resource_id`` gives the clone and its messages another resource (Mastra's
        ``resourceId``); ``metadata`` is merged over the source's, under the clone keys."""
        if not _declared(storage, capabilities).clone_thread:
            outcome.unsupported("clone_thread", "declared clone_thread=False")
            return
        p = await _alice_and_bob(storage)
        clone = await storage.clone_thread(
            p + "ta", new_thread_id=p + "copy", new_resource_id=p + "carol", metadata={"branch": "x"}
        )
        assert clone.thread.resource_id == p + "carol"
        assert clone.thread.metadata is not None
        assert (clone.thread.metadata["branch"], clone.thread.metadata["source_thread_id"]) == ("x", p + "ta")
        page = await storage.list_messages(p + "copy", resource_id=p + "carol", per_page=False)
        assert [m.id for m in page.messages] == list(clone.message_id_map.values())
        assert {m.resource_id for m in page.messages} == {p + "carol"}
        source = await storage.list_messages(p + "ta", resource_id=p + "alice", per_page=False)
        assert _strip(p, _ids(source)) == ["a1", "a2"], "the source stays alice's"

    # --- resources ------------------------------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="resources")
    async def test_resources(self, storage: MemoryStorage) -> None:
        r = _prefix() + "r"
        assert await storage.get_resource_by_id(r) is None
        created = await storage.update_resource(r, working_memory="# Notes", metadata={"a": 1, "b": {"x": 1}})
        assert (created.id, created.working_memory, created.metadata) == (
            r,
            "# Notes",
            {"a": 1, "b": {"x": 1}},
        )
        assert await storage.get_resource_by_id(r) == created, "update_resource creates a missing resource"
        merged = await storage.update_resource(r, metadata={"b": {"y": 2}, "c": 3})
        assert (merged.working_memory, merged.metadata) == ("# Notes", {"a": 1, "b": {"y": 2}, "c": 3})
        assert merged.updated_at > created.updated_at
        replaced = await storage.update_resource(r, working_memory="new")
        assert (replaced.working_memory, replaced.metadata) == ("new", {"a": 1, "b": {"y": 2}, "c": 3})
        assert replaced.updated_at > merged.updated_at
        assert await storage.get_resource_by_id(r) == replaced
        saved = await storage.save_resource({"id": r, "workingMemory": None, "createdAt": at(0)})
        assert (saved.working_memory, saved.metadata, saved.created_at) == (None, None, at(0))
        assert await storage.get_resource_by_id(r) == saved, "save_resource replaces the whole resource"

    # --- optional capabilities ------------------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="list_messages_by_resource_id")
    async def test_list_messages_by_resource_id(
        self, storage: MemoryStorage, capabilities: AdapterCapabilities, outcome: Outcome
    ) -> None:
        scenario = Scenario(_prefix())
        await scenario.seed_storage(storage)
        a, b, s = scenario.id("A"), scenario.id("B"), scenario.prefix
        if not _declared(storage, capabilities).list_by_resource:
            with pytest.raises(CapabilityError):
                await storage.list_messages_by_resource_id(a)
            outcome.unsupported("list_messages_by_resource_id", "declared list_by_resource=False")
            return
        page = await storage.list_messages_by_resource_id(a, per_page=3)
        assert (_strip(s, _ids(page)), page.total, page.has_more) == (["a1", "a2", "a3"], 4, True)
        page = await storage.list_messages_by_resource_id(a, per_page=2, include=[scenario.window("a4")])
        assert (_strip(s, _ids(page)), page.has_more) == (["a1", "a2", "a4"], True)
        page = await storage.list_messages_by_resource_id(b, include=[scenario.window("a2", 1, 1)])
        assert _strip(s, _ids(page)) == ["b1"], "include windows never cross resources"
        with pytest.raises(ValidationError, match="resource_id must be a non-empty string"):
            await storage.list_messages_by_resource_id(" ")

    @pytest.mark.conformance(domain="storage", item="clone_thread")
    async def test_clone_thread(
        self, storage: MemoryStorage, capabilities: AdapterCapabilities, outcome: Outcome
    ) -> None:
        scenario = Scenario(_prefix())
        await scenario.seed_storage(storage)
        a1, s = scenario.id("A1"), scenario.prefix
        if not _declared(storage, capabilities).clone_thread:
            with pytest.raises(CapabilityError):
                await storage.clone_thread(a1)
            outcome.unsupported("clone_thread", "declared clone_thread=False")
            return
        await storage.update_thread(a1, title="Fruit", metadata={"project": "p"})
        result = await storage.clone_thread(a1, new_thread_id=s + "copy")
        thread = result.thread
        assert (thread.id, thread.resource_id) == (s + "copy", scenario.id("A"))
        assert thread.metadata is not None
        assert (thread.metadata["source_thread_id"], thread.metadata["last_message_id"]) == (
            a1,
            scenario.id("a3"),
        )
        assert thread.metadata["project"] == "p"
        assert "cloned_at" in thread.metadata
        originals = scenario.ids(["a1", "a2", "a3"])
        assert list(result.message_id_map) == originals
        assert set(result.message_id_map.values()).isdisjoint(originals), "clones get new ids"
        stored = (await storage.list_messages(s + "copy")).messages
        assert stored == result.messages
        assert [m.content.content for m in stored] == ["alpha apples", "alpha bananas", "alpha cherries"]
        assert [m.id for m in stored] == [result.message_id_map[i] for i in originals]
        assert all(m.thread_id == s + "copy" and m.resource_id == scenario.id("A") for m in stored)
        assert _ids(await storage.list_messages(a1)) == originals, "the source thread is unchanged"
        newest = await storage.clone_thread(a1, message_limit=2, resource_id=scenario.id("A"), title="mine")
        assert list(newest.message_id_map) == scenario.ids(["a2", "a3"]), "message_limit keeps the newest"
        assert (newest.thread.resource_id, newest.thread.title) == (scenario.id("A"), "mine")
        assert all(m.resource_id == scenario.id("A") for m in newest.messages)
        picked = await storage.clone_thread(
            a1, message_filter={"message_ids": scenario.ids(["a3", "a1", "b1"])}
        )
        assert list(picked.message_id_map) == scenario.ids(["a1", "a3"])
        ranged = await storage.clone_thread(a1, message_filter={"startDate": at(2), "endDate": at(2)})
        assert list(ranged.message_id_map) == [scenario.id("a2")]
        with pytest.raises(ThreadNotFoundError):
            await storage.clone_thread(s + "missing")
