"""``list_threads`` (docs/spec.md §4.4): filters, order, pages and validation."""

from __future__ import annotations

from typing import Any

import pytest

from mastra_memory.errors import FilterValidationError, ValidationError
from mastra_memory.storage import MemoryStorage

from ...scenarios import at
from .base import new_prefix

__all__ = ["ThreadListingSuite"]


@pytest.mark.asyncio
class ThreadListingSuite:
    """``list_threads`` (a part of ``MemoryStorageSuite``)."""

    # --- list_threads ---------------------------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="list_threads")
    async def test_list_threads(self, storage: MemoryStorage) -> None:
        p = new_prefix()
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
