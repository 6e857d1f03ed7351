"""The resource-isolation scenario S1–S8 of docs/spec.md §8.3: include windows and their resource
predicate, and the ``per_page=0`` and ``per_page=False`` paths of ``list_messages``.
"""

from __future__ import annotations

import pytest

from mastra_memory.capabilities import AdapterCapabilities
from mastra_memory.storage import MemoryStorage

from ...report import Outcome
from ...scenarios import STORAGE_CASES, StorageCase
from .base import declared, ids_of, seeded_scenario, strip

__all__ = ["ResourceIsolationSuite"]

_CASES = [
    pytest.param(case, id=case.name, marks=pytest.mark.conformance(domain="storage", item=case.name))
    for case in STORAGE_CASES
]


@pytest.mark.asyncio
class ResourceIsolationSuite:
    """§8.3 S1–S8 (a part of ``MemoryStorageSuite``)."""

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
        if case.isolates_resources and not declared(storage, capabilities).resource_scope:
            outcome.unsupported("resource_scope", f"{case.name}: the storage declares resource_scope=False")
            return
        scenario = await seeded_scenario(storage)
        page = await storage.list_messages(**case.kwargs(scenario))
        got = (strip(scenario.prefix, ids_of(page)), page.total, page.has_more)
        assert got == (list(case.expected), case.total, case.has_more), (
            f"{case.name} ({case.description}): expected (ids, total, has_more) = "
            f"{(list(case.expected), case.total, case.has_more)}, got {got}"
        )
        assert page.page == 0
        echoed = (page.per_page, type(page.per_page))
        assert echoed == (case.echoed_per_page, type(case.echoed_per_page)), (
            f"{case.name}: per_page must be echoed as {case.echoed_per_page!r}, got {page.per_page!r}"
        )
