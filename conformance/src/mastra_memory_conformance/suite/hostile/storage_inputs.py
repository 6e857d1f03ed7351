"""Bad input to the target's ``MemoryStorage`` (issue 12; docs/spec.md §4.1, §4.2): thread, resource and
message writes with bad metadata, text or timestamps, each a ``ValidationError`` with what was stored
exactly as it was; reads by ids no store can hold find nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

import pytest

from mastra_memory.metadata_limits import (
    MAX_METADATA_BYTES,
    MAX_METADATA_DEPTH,
    MAX_METADATA_KEYS,
)
from mastra_memory.storage import MemoryStorage

from ...plugin import set_item
from .. import by_label, ill_typed
from .base import (
    BEYOND_UTC,
    BadInput,
    HostileSuiteBase,
    check_typed,
    cyclic,
    many_keys,
    nested,
    raised_by,
    verdict,
)

__all__ = ["STORAGE_CASES", "HostileStorageInputSuite"]

# --- storage inputs -----------------------------------------------------------------------------------


@dataclass
class Seeded:
    """What a storage test stored: one thread with three messages, and one resource (ids under a prefix)."""

    prefix: str

    @property
    def thread(self) -> str:
        return f"{self.prefix}t"

    @property
    def resource(self) -> str:
        return f"{self.prefix}r"

    def message(self, n: int) -> str:
        return f"{self.prefix}m{n}"


StorageCall = Callable[[MemoryStorage, Seeded], Awaitable[Any]]


#: One bad storage input; its call takes (storage, the seeded ids).
StorageCase = BadInput[StorageCall]


def _message(seeded: Seeded, **fields: Any) -> dict[str, Any]:
    """A replacement of message 1 (``fields`` override its content, role, timestamps or id)."""
    return {"id": seeded.message(1), "thread_id": seeded.thread, "role": "user", "content": "x", **fields}


def _content(metadata: Any = None, **extra: Any) -> dict[str, Any]:
    return {"format": 2, "parts": [{"type": "text", "text": "replaced", **extra}], "metadata": metadata}


def _thread(seeded: Seeded, **fields: Any) -> dict[str, Any]:
    """A replacement of the seeded thread (``fields`` override its metadata, title or timestamps)."""
    return {"id": seeded.thread, "resource_id": seeded.resource, "title": "replaced", **fields}


def _save_thread(**fields: Any) -> StorageCall:
    return lambda s, x: s.save_thread(_thread(x, **fields))


def _save_message(**fields: Any) -> StorageCall:
    return lambda s, x: s.save_messages([_message(x, **fields)])


def _s(label: str, operation: str, status: str, call: StorageCall) -> StorageCase:
    return BadInput(label, operation, status, call)


#: Every bad storage input the suite replays (each would replace or change a seeded record).
STORAGE_CASES: Final[list[StorageCase]] = [
    _s(
        "thread metadata 33 deep",
        "SAVE_THREAD",
        "INVALID_METADATA",
        _save_thread(metadata=nested(MAX_METADATA_DEPTH + 1)),
    ),
    _s("thread metadata 126 deep", "SAVE_THREAD", "INVALID_METADATA", _save_thread(metadata=nested(126))),
    _s(
        "thread metadata 10,000 deep",
        "SAVE_THREAD",
        "INVALID_METADATA",
        _save_thread(metadata=nested(10_000)),
    ),
    _s("cyclic thread metadata", "SAVE_THREAD", "INVALID_METADATA", _save_thread(metadata=cyclic())),
    _s(
        "thread metadata with too many keys",
        "SAVE_THREAD",
        "INVALID_METADATA",
        _save_thread(metadata=many_keys(MAX_METADATA_KEYS + 1)),
    ),
    _s(
        "thread metadata too large",
        "SAVE_THREAD",
        "INVALID_METADATA",
        _save_thread(metadata={"text": "x" * MAX_METADATA_BYTES}),
    ),
    _s(
        "thread metadata surrogate value",
        "SAVE_THREAD",
        "INVALID_METADATA",
        _save_thread(metadata={"a": "\ud800"}),
    ),
    _s(
        "thread metadata surrogate key",
        "SAVE_THREAD",
        "INVALID_METADATA",
        _save_thread(metadata={"\ud800": 1}),
    ),
    _s("thread metadata a string", "SAVE_THREAD", "INVALID_ARGS", _save_thread(metadata="x")),
    _s("thread title surrogate", "SAVE_THREAD", "INVALID_ARGS", _save_thread(title="t\ud800")),
    _s("thread created_at 10**20", "SAVE_THREAD", "INVALID_ARGS", _save_thread(created_at=10**20)),
    _s("thread created_at beyond UTC", "SAVE_THREAD", "INVALID_ARGS", _save_thread(created_at=BEYOND_UTC)),
    _s(
        "update thread metadata 10,000 deep",
        "UPDATE_THREAD",
        "INVALID_METADATA",
        lambda s, x: s.update_thread(x.thread, metadata=nested(10_000)),
    ),
    _s(
        "update thread metadata too many keys",
        "UPDATE_THREAD",
        "INVALID_METADATA",
        lambda s, x: s.update_thread(x.thread, metadata=many_keys(MAX_METADATA_KEYS + 1)),
    ),
    _s(
        "update thread title surrogate",
        "UPDATE_THREAD",
        "INVALID_ARGS",
        lambda s, x: s.update_thread(x.thread, title="\udc00"),
    ),
    _s(
        "update thread metadata a string",
        "UPDATE_THREAD",
        "INVALID_ARGS",
        lambda s, x: s.update_thread(x.thread, metadata=ill_typed("x")),
    ),
    _s(
        "resource metadata 10,000 deep",
        "SAVE_RESOURCE",
        "INVALID_METADATA",
        lambda s, x: s.save_resource({"id": x.resource, "metadata": nested(10_000)}),
    ),
    _s(
        "resource working memory surrogate",
        "SAVE_RESOURCE",
        "INVALID_ARGS",
        lambda s, x: s.save_resource({"id": x.resource, "working_memory": "\ud800"}),
    ),
    _s(
        "update resource metadata cyclic",
        "UPDATE_RESOURCE",
        "INVALID_METADATA",
        lambda s, x: s.update_resource(x.resource, metadata=cyclic()),
    ),
    _s(
        "update resource working memory surrogate",
        "UPDATE_RESOURCE",
        "INVALID_ARGS",
        lambda s, x: s.update_resource(x.resource, working_memory="wm \ud800"),
    ),
    _s("message text surrogate", "SAVE_MESSAGES", "INVALID_MESSAGE", _save_message(content="a \ud800 b")),
    _s(
        "message metadata 10,000 deep",
        "SAVE_MESSAGES",
        "INVALID_MESSAGE",
        _save_message(content=_content(nested(10_000))),
    ),
    _s(
        "message metadata too many keys",
        "SAVE_MESSAGES",
        "INVALID_MESSAGE",
        _save_message(content=_content(many_keys(MAX_METADATA_KEYS + 1))),
    ),
    _s(
        "message metadata surrogate key",
        "SAVE_MESSAGES",
        "INVALID_MESSAGE",
        _save_message(content=_content({"\ud800": 1})),
    ),
    _s(
        "message part 10,000 deep",
        "SAVE_MESSAGES",
        "INVALID_MESSAGE",
        _save_message(content=_content(None, extra=nested(10_000))),
    ),
    _s("message created_at 10**20", "SAVE_MESSAGES", "INVALID_MESSAGE", _save_message(created_at=10**20)),
    _s(
        "message created_at -(10**20)",
        "SAVE_MESSAGES",
        "INVALID_MESSAGE",
        _save_message(created_at=-(10**20)),
    ),
    _s(
        "update message metadata 33 deep",
        "UPDATE_MESSAGES",
        "INVALID_METADATA",
        lambda s, x: s.update_messages(
            [{"id": x.message(1), "content": {"metadata": nested(MAX_METADATA_DEPTH + 1)}}]
        ),
    ),
    _s(
        "update message metadata 10,000 deep",
        "UPDATE_MESSAGES",
        "INVALID_ARGS",
        lambda s, x: s.update_messages([{"id": x.message(1), "content": {"metadata": nested(10_000)}}]),
    ),
    _s(
        "update message text surrogate",
        "UPDATE_MESSAGES",
        "INVALID_ARGS",
        lambda s, x: s.update_messages([{"id": x.message(1), "content": {"content": "\ud800"}}]),
    ),
    _s(
        "delete messages as a string",
        "DELETE_MESSAGES",
        "INVALID_IDS",
        lambda s, x: s.delete_messages(ill_typed(x.message(1))),
    ),
    _s(
        "delete messages as an int",
        "DELETE_MESSAGES",
        "INVALID_IDS",
        lambda s, x: s.delete_messages(ill_typed(5)),
    ),
    _s(
        "list messages surrogate thread",
        "LIST_MESSAGES",
        "INVALID_THREAD_ID",
        lambda s, x: s.list_messages("\ud800"),
    ),
    _s(
        "list messages created_at 10**20",
        "LIST_MESSAGES",
        "INVALID_FILTER",
        lambda s, x: s.list_messages(x.thread, filter={"date_range": {"start": 10**20}}),
    ),
]


async def seed_storage(storage: MemoryStorage) -> Seeded:
    """One thread with three messages, and one resource, under a fresh prefix."""
    seeded = Seeded(f"h{uuid.uuid4().hex[:8]}-")
    await storage.save_thread(
        {
            "id": seeded.thread,
            "resource_id": seeded.resource,
            "title": "kept",
            "metadata": {"a": [1, {"b": 2}]},
        }
    )
    await storage.save_messages(
        [
            {
                "id": seeded.message(n),
                "thread_id": seeded.thread,
                "role": "user" if n % 2 else "assistant",
                "content": {
                    "format": 2,
                    "parts": [{"type": "text", "text": f"kept {n}"}],
                    "metadata": {"n": n},
                },
                "created_at": 1_700_000_000_000 + n,
            }
            for n in range(3)
        ]
    )
    await storage.save_resource({"id": seeded.resource, "working_memory": "kept", "metadata": {"n": 1}})
    return seeded


async def storage_state(storage: MemoryStorage, seeded: Seeded) -> list[Any]:
    """The seeded thread, resource and messages, as JSON data."""
    thread = await storage.get_thread_by_id(seeded.thread)
    resource = await storage.get_resource_by_id(seeded.resource)
    page = await storage.list_messages(seeded.thread, per_page=False)
    return [
        None if thread is None else thread.model_dump(mode="json"),
        None if resource is None else resource.model_dump(mode="json"),
        [m.model_dump(mode="json") for m in page.messages],
    ]


@pytest.mark.asyncio
class HostileStorageInputSuite(HostileSuiteBase):
    """Bad storage input (a part of ``HostileInputSuite``)."""

    @pytest.mark.parametrize("case", by_label(STORAGE_CASES))
    async def test_bad_storage_input(
        self, request: pytest.FixtureRequest, storage: MemoryStorage, case: StorageCase
    ) -> None:
        """docs/spec.md §4.1, §4.2: a ValidationError with the operation's id; the thread, its messages and
        the resource are exactly as stored."""
        set_item(request, f"storage: {case.label}")
        seeded = await seed_storage(storage)
        before = await storage_state(storage, seeded)
        error = await raised_by(lambda: case.call(storage, seeded))
        verdict(case.label, error, await storage_state(storage, seeded) != before)
        assert error is not None
        check_typed(error, "STORAGE", storage.store_name, case.operation, case.status, case.label)

    async def test_reads_of_text_no_store_holds_find_nothing(
        self, request: pytest.FixtureRequest, storage: MemoryStorage
    ) -> None:
        """Ids with an unpaired surrogate cannot exist: reads by them return nothing, never an untyped
        exception."""
        set_item(request, "storage: reads of unpaired surrogates")
        seeded = await seed_storage(storage)
        assert await storage.get_thread_by_id("\ud800") is None
        assert await storage.get_resource_by_id("\udc00") is None
        assert await storage.list_messages_by_id(["\ud800", seeded.message(1)]) != []
        assert [m.id for m in await storage.list_messages_by_id(["\ud800"])] == []
        await storage.delete_messages(["\ud800"])
        await storage.delete_thread("\ud800")
        assert len((await storage.list_messages(seeded.thread, per_page=False)).messages) == 3
