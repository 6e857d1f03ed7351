"""What the storage tests share: a fresh prefix per test (the backend lives for the whole session), the
ids of a page, a snapshot of what is stored for some threads, what the storage declares, and the threads
and messages of alice and bob that the ownership tests write over.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mastra_memory.capabilities import AdapterCapabilities, StorageCapabilities
from mastra_memory.errors import ThreadOwnershipError, error_id
from mastra_memory.storage import MastraDBMessage, MemoryStorage, MessagePage, storage_capabilities

from ...scenarios import Scenario, message

__all__ = [
    "alice_and_bob",
    "as_resource",
    "assert_refused",
    "declared",
    "ids_of",
    "new_prefix",
    "save_threads",
    "seeded_scenario",
    "strip",
    "thread_snapshot",
    "updated_at_of",
]


def new_prefix() -> str:
    return f"st{uuid.uuid4().hex[:8]}-"


async def seeded_scenario(storage: MemoryStorage) -> Scenario:
    """A fresh copy of the §8.3 scenario, written into ``storage``."""
    scenario = Scenario(new_prefix())
    await scenario.seed_storage(storage)
    return scenario


def ids_of(page: MessagePage | Sequence[MastraDBMessage]) -> list[str]:
    messages = page.messages if isinstance(page, MessagePage) else page
    return [m.id for m in messages]


def strip(prefix: str, ids: Sequence[str]) -> list[str]:
    """Ids without the test's prefix, for readable assertion messages."""
    return [i.removeprefix(prefix) for i in ids]


async def updated_at_of(storage: MemoryStorage, thread_id: str) -> datetime:
    thread = await storage.get_thread_by_id(thread_id)
    assert thread is not None, f"thread {thread_id} is missing"
    return thread.updated_at


async def thread_snapshot(storage: MemoryStorage, thread_ids: Sequence[str]) -> list[Any]:
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


def declared(storage: MemoryStorage, capabilities: AdapterCapabilities) -> StorageCapabilities:
    """What the storage declares: its own ``capabilities``, else the adapter manifest's ``storage``."""
    if getattr(storage, "capabilities", None) is not None:
        return storage_capabilities(storage)
    return capabilities.storage or StorageCapabilities()


async def save_threads(storage: MemoryStorage, prefix: str, *rows: tuple[str, str]) -> None:
    for thread_id, resource_id in rows:
        await storage.save_thread({"id": prefix + thread_id, "resource_id": prefix + resource_id})


def as_resource(resource_id: str, message_dict: dict[str, Any]) -> dict[str, Any]:
    """``message_dict`` naming ``resource_id`` as its resource."""
    return {**message_dict, "resource_id": resource_id}


async def alice_and_bob(storage: MemoryStorage) -> str:
    """Resource alice (threads ta, ta2; messages a1, a2 in ta) and bob (thread tb; b1); returns the prefix."""
    p = new_prefix()
    await save_threads(storage, p, ("ta", "alice"), ("ta2", "alice"), ("tb", "bob"))
    await storage.save_messages(
        [
            message(p + "a1", p + "ta", "alice's secret", seconds=1),
            message(p + "a2", p + "ta", "alice's plan", seconds=2),
            message(p + "b1", p + "tb", "bob's hello", seconds=3),
        ]
    )
    return p


def assert_refused(error: ThreadOwnershipError, storage: MemoryStorage, operation: str, prefix: str) -> None:
    """A refused write of bob's names its store and operation, and never names alice, the owner."""
    assert error.id == error_id("STORAGE", storage.store_name, operation, "RESOURCE_MISMATCH"), error.id
    assert prefix + "alice" not in str(error), f"the error names the owning resource: {error}"
