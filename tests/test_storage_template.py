"""The ``MemoryStorage`` template (docs/spec.md §4) over two backends: SQLite, and plain dicts.

``DictStorage`` answers every hook with a dict lookup or a sorted scan, the way a document database answers
them with ``find`` and ``count_documents``: nothing in the template may need SQL. The tests run the same
spec rules on both backends.
"""

from __future__ import annotations

import operator
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest

from mastra_memory.errors import ThreadNotFoundError
from mastra_memory.messages import MastraDBMessage
from mastra_memory.storage import (
    Candidate,
    ListMessagesQuery,
    ListThreadsQuery,
    MemoryStorage,
    Resource,
    Side,
    Thread,
    Work,
    message_sort_key,
)
from mastra_memory.stores.sqlite.storage import SQLiteStorage

T = TypeVar("T")
T0 = datetime(2024, 1, 1, tzinfo=UTC)
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}


class DictStorage(MemoryStorage):
    """Threads, messages and resources in dicts; a unit of work is all-or-nothing (restored on error)."""

    store_name = "DICT"

    def __init__(self) -> None:
        self.threads: dict[str, Thread] = {}
        self.messages: dict[str, MastraDBMessage] = {}
        self.resources: dict[str, Resource] = {}

    async def _transaction(self, operation: str, work: Work[T], *, write: bool, idempotent: bool = True) -> T:
        saved = (dict(self.threads), dict(self.messages), dict(self.resources))
        try:
            return await work(None)  # the hooks never suspend, so no other task interleaves
        except BaseException:
            self.threads, self.messages, self.resources = saved
            raise

    async def _load_threads(
        self, tx: None, thread_ids: Sequence[str], *, lock: bool = False
    ) -> dict[str, Thread]:
        return {i: self.threads[i] for i in thread_ids if i in self.threads}

    async def _write_thread(self, tx: None, thread: Thread) -> None:
        self.threads[thread.id] = thread

    async def _delete_thread(self, tx: None, thread_id: str) -> None:
        self.messages = {k: m for k, m in self.messages.items() if m.thread_id != thread_id}
        self.threads.pop(thread_id, None)

    def _thread_scan(self, q: ListThreadsQuery) -> list[Thread]:
        rows = [t for t in self.threads.values() if q.resource_id in (None, t.resource_id)]
        key = operator.attrgetter(q.order.field, "id")
        return sorted(rows, key=key, reverse=q.order.direction == "DESC")

    async def _count_threads(self, tx: None, query: ListThreadsQuery) -> int:
        return len(self._thread_scan(query))

    async def _find_threads(
        self, tx: None, query: ListThreadsQuery, offset: int, limit: int | None
    ) -> list[Thread]:
        return self._thread_scan(query)[offset : None if limit is None else offset + limit]

    def _message_scan(self, q: ListMessagesQuery) -> list[MastraDBMessage]:
        rows = [
            m
            for m in self.messages.values()
            if (not q.thread_ids or m.thread_id in q.thread_ids)
            and (q.resource_id is None or m.resource_id == q.resource_id)
            and all(_COMPARE[op](m.created_at, stamp) for op, stamp in q.created_at_bounds)
        ]
        return sorted(rows, key=message_sort_key, reverse=q.descending)

    async def _count_messages(self, tx: None, query: ListMessagesQuery) -> int:
        return len(self._message_scan(query))

    async def _find_messages(
        self, tx: None, query: ListMessagesQuery, offset: int, limit: int | None
    ) -> list[MastraDBMessage]:
        return self._message_scan(query)[offset : None if limit is None else offset + limit]

    async def _metadata_candidates(self, tx: None, query: ListMessagesQuery) -> list[Candidate]:
        return [(m.id, m.content.metadata) for m in self._message_scan(query)]

    async def _messages_by_id(
        self, tx: None, message_ids: Sequence[str], *, lock: bool = False
    ) -> list[MastraDBMessage]:
        return sorted((self.messages[i] for i in message_ids if i in self.messages), key=message_sort_key)

    async def _neighbours(
        self, tx: None, anchor: MastraDBMessage, side: Side, limit: int, resource_id: str | None
    ) -> list[MastraDBMessage]:
        thread = sorted(
            (
                m
                for m in self.messages.values()
                if m.thread_id == anchor.thread_id and resource_id in (None, m.resource_id)
            ),
            key=message_sort_key,
        )
        if side == "before":
            return [m for m in thread if message_sort_key(m) < message_sort_key(anchor)][::-1][:limit]
        return [m for m in thread if message_sort_key(m) > message_sort_key(anchor)][:limit]

    async def _message_threads(self, tx: None, message_ids: Sequence[str]) -> set[str]:
        return {self.messages[i].thread_id for i in message_ids if i in self.messages}

    async def _write_messages(self, tx: None, messages: Sequence[tuple[MastraDBMessage, Any]]) -> None:
        for message, _content in messages:
            self.messages[message.id] = message

    async def _delete_messages(self, tx: None, message_ids: Sequence[str]) -> set[str]:
        gone = [self.messages.pop(i) for i in message_ids if i in self.messages]
        return {m.thread_id for m in gone}

    async def _load_resource(self, tx: None, resource_id: str, *, lock: bool = False) -> Resource | None:
        return self.resources.get(resource_id)

    async def _write_resource(self, tx: None, resource: Resource) -> None:
        self.resources[resource.id] = resource


@pytest.fixture(params=["sqlite", "dict"])
async def storage(request: pytest.FixtureRequest) -> AsyncIterator[MemoryStorage]:
    backend: MemoryStorage = SQLiteStorage(":memory:") if request.param == "sqlite" else DictStorage()
    await backend.init()
    yield backend
    await backend.close()


def message(id: str, thread_id: str, seconds: int, **metadata: Any) -> dict[str, Any]:
    return {
        "id": id,
        "thread_id": thread_id,
        "role": "user",
        "created_at": T0 + timedelta(seconds=seconds),
        "content": {
            "format": 2,
            "content": id,
            "parts": [{"type": "text", "text": id}],
            "metadata": metadata,
        },
    }


async def seed(storage: MemoryStorage) -> None:
    """docs/spec.md §8.3: resource A owns A1 (a1, a2, a3) and A2 (a4); resource B owns B1 (b1)."""
    for thread_id, resource_id in (("A1", "A"), ("A2", "A"), ("B1", "B")):
        await storage.save_thread({"id": thread_id, "resource_id": resource_id, "created_at": T0})
    rows = [("a1", "A1", "x"), ("a2", "A1", "y"), ("a3", "A1", "x"), ("a4", "A2", "x"), ("b1", "B1", "x")]
    await storage.save_messages([message(i, t, n + 1, tag=tag) for n, (i, t, tag) in enumerate(rows)])


def ids(messages: Sequence[MastraDBMessage]) -> list[str]:
    return [m.id for m in messages]


async def test_a_message_limit_above_the_count_clones_every_message(storage: MemoryStorage) -> None:
    await seed(storage)
    result = await storage.clone_thread("A1", new_thread_id="copy", message_limit=5)
    assert list(result.message_id_map) == ["a1", "a2", "a3"]  # "the newest 5" of three is all three
    picked = await storage.clone_thread("A1", message_limit=5, message_filter={"message_ids": ["a3", "a1"]})
    assert list(picked.message_id_map) == ["a1", "a3"]
    newest = await storage.clone_thread("A1", message_limit=2)
    assert list(newest.message_id_map) == ["a2", "a3"]


async def test_include_windows_pages_and_has_more(storage: MemoryStorage) -> None:
    await seed(storage)
    page = await storage.list_messages(
        "A2", resource_id="A", include=[{"id": "a2", "withPreviousMessages": 1, "withNextMessages": 1}]
    )
    assert (ids(page.messages), page.total, page.has_more) == (["a1", "a2", "a3", "a4"], 1, False)
    windows = await storage.list_messages(
        "B1",
        resource_id="A",
        per_page=0,
        include=[{"id": "a3", "with_previous_messages": 5}],
        order_by={"direction": "desc"},
    )
    assert ids(windows.messages) == ["a3", "a2", "a1"]
    tagged = await storage.list_messages("A1", per_page=1, page=1, filter={"metadata": {"tag": "x"}})
    assert (ids(tagged.messages), tagged.total, tagged.has_more) == (["a3"], 2, False)
    threads = await storage.list_threads(filter={"resource_id": "A"}, per_page=1)
    assert ([t.id for t in threads.threads], threads.total, threads.has_more) == (["A2"], 2, True)


async def test_writes_merge_bump_and_stay_atomic(storage: MemoryStorage) -> None:
    await seed(storage)
    before = await storage.get_thread_by_id("A1")
    [updated] = await storage.update_messages(
        [{"id": "a1", "content": {"metadata": {"more": 1}}, "thread_id": "A2"}]
    )
    assert (updated.thread_id, updated.resource_id, updated.content.metadata) == (
        "A2",
        "A",
        {"tag": "x", "more": 1},
    )
    after = await storage.get_thread_by_id("A1")
    assert before is not None
    assert after is not None
    assert after.updated_at > before.updated_at
    with pytest.raises(ThreadNotFoundError):
        await storage.save_messages([message("new", "A1", 9), message("lost", "missing", 9)])
    assert await storage.list_messages_by_id(["new"]) == []
    await storage.delete_messages(["a2", "unknown"])
    assert ids((await storage.list_messages("A1")).messages) == ["a3"]
