"""The memory scenario of docs/spec.md §8.3 as reusable data, plus async builders for any storage or
``Memory``.

Resource A owns thread A1 (a1 "alpha apples", a2 "alpha bananas", a3 "alpha cherries") and thread A2
(a4 "alpha dates"); resource B owns thread B1 (b1 "beta eggs"). ``created_at`` is 2024-01-01T00:00:0nZ for
n = 1…5 in the order a1, a2, a3, a4, b1.

The tables are the spec's expectations written once: ``STORAGE_CASES`` (S1–S8, ``list_messages``) and
``RECALL_CASES`` (the ``Memory.recall`` rows M1, M2, M5, M7, M8 that are a single call). Every id is
written through a :class:`Scenario`, whose ``prefix`` keeps several copies apart on one backend (a
conformance target lives for a whole session, so each test seeds its own copy). The builders work on
anything implementing the protocols, so an adapter's own tests can reuse them:

.. code-block:: python

    scenario = Scenario(prefix="run1-")
    await scenario.seed_storage(my_storage)
    for case in STORAGE_CASES:
        page = await my_storage.list_messages(**case.kwargs(scenario))
        assert [m.id for m in page.messages] == scenario.ids(case.expected)
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from mastra_memory.memory import Memory
    from mastra_memory.storage import MemoryStorage

__all__ = [
    "EMBEDDER",
    "EPOCH",
    "MESSAGES",
    "QUERY",
    "RECALL_CASES",
    "RECALL_OPTIONS",
    "STORAGE_CASES",
    "THREADS",
    "RecallCase",
    "Scenario",
    "ScenarioMessage",
    "StorageCase",
    "at",
    "message",
    "window",
]

#: 2024-01-01T00:00:00Z; the scenario's messages are 1…5 seconds after it.
EPOCH: Final = datetime(2024, 1, 1, tzinfo=UTC)
#: The embedder of the ``Memory`` half of the scenario: deterministic, 64 dimensions, no network.
EMBEDDER: Final = "hash/64"
#: The query whose embedding equals a2's (score 1.0).
QUERY: Final = "alpha bananas"
#: ``last_messages=1``, ``semantic_recall={top_k: 1, message_range: 1}`` (scope resource, the default).
RECALL_OPTIONS: Final[Mapping[str, Any]] = {
    "lastMessages": 1,
    "semanticRecall": {"topK": 1, "messageRange": 1},
}

#: (thread, resource), in creation order, before prefixing.
THREADS: Final = (("A1", "A"), ("A2", "A"), ("B1", "B"))


@dataclass(frozen=True)
class ScenarioMessage:
    """One message of the scenario: id, thread, resource, text, and seconds after ``EPOCH``."""

    id: str
    thread_id: str
    resource_id: str
    text: str
    second: int


MESSAGES: Final = (
    ScenarioMessage("a1", "A1", "A", "alpha apples", 1),
    ScenarioMessage("a2", "A1", "A", "alpha bananas", 2),
    ScenarioMessage("a3", "A1", "A", "alpha cherries", 3),
    ScenarioMessage("a4", "A2", "A", "alpha dates", 4),
    ScenarioMessage("b1", "B1", "B", "beta eggs", 5),
)


def at(seconds: float) -> datetime:
    """``EPOCH`` plus ``seconds`` (an aware UTC datetime)."""
    return EPOCH + timedelta(seconds=seconds)


def message(
    id: str,
    thread_id: str,
    text: str | None = None,
    *,
    seconds: float = 0,
    role: str = "user",
    metadata: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A v2 message dict created ``seconds`` after ``EPOCH``; the text defaults to the id.

    ``metadata`` becomes ``content.metadata`` (what the §4.6 storage filter matches); ``None`` leaves it out.
    """
    body = text if text is not None else id
    content: dict[str, Any] = {"format": 2, "content": body, "parts": [{"type": "text", "text": body}]}
    if metadata is not None:
        content["metadata"] = dict(metadata)
    return {"id": id, "thread_id": thread_id, "role": role, "created_at": at(seconds), "content": content}


def window(target: str, before: int = 0, after: int = 0, hint: str | None = None) -> dict[str, Any]:
    """An include item in Mastra's camelCase spelling: ``target`` with ``before``/``after`` neighbours."""
    item: dict[str, Any] = {"id": target, "withPreviousMessages": before, "withNextMessages": after}
    if hint is not None:
        item["threadId"] = hint
    return item


@dataclass(frozen=True)
class Scenario:
    """One copy of the scenario whose thread, resource and message ids all start with ``prefix``."""

    prefix: str = ""

    @classmethod
    def unique(cls) -> Scenario:
        """A copy with a fresh random prefix (``s1a2b3c4-``)."""
        return cls(prefix=f"s{uuid.uuid4().hex[:8]}-")

    def id(self, name: str) -> str:
        """The prefixed form of a scenario name (``"a2"`` → ``"<prefix>a2"``)."""
        return f"{self.prefix}{name}"

    def ids(self, names: Iterable[str]) -> list[str]:
        """The prefixed forms of several names, in order."""
        return [self.id(n) for n in names]

    def window(self, target: str, before: int = 0, after: int = 0, hint: str | None = None) -> dict[str, Any]:
        """An include item for the scenario message ``target`` (names, not prefixed ids)."""
        return window(self.id(target), before, after, None if hint is None else self.id(hint))

    @property
    def threads(self) -> list[tuple[str, str]]:
        """(thread id, resource id) of the three threads, prefixed."""
        return [(self.id(t), self.id(r)) for t, r in THREADS]

    def messages(self) -> list[dict[str, Any]]:
        """The five messages as fresh input dicts (with their resource ids), prefixed."""
        return [
            {
                **message(self.id(m.id), self.id(m.thread_id), m.text, seconds=m.second),
                "resource_id": self.id(m.resource_id),
            }
            for m in MESSAGES
        ]

    async def seed_storage(self, storage: MemoryStorage) -> None:
        """Write the scenario straight into a storage: the threads, then the five messages in one call."""
        for thread_id, resource_id in self.threads:
            await storage.save_thread({"id": thread_id, "resource_id": resource_id, "created_at": EPOCH})
        await storage.save_messages(self.messages())

    async def seed_memory(self, memory: Memory) -> None:
        """Create the threads and save the messages through ``Memory.save_messages`` (one vector each when
        semantic recall is on)."""
        for thread_id, resource_id in self.threads:
            await memory.create_thread(resource_id, thread_id)
        await memory.save_messages(self.messages())


@dataclass(frozen=True)
class StorageCase:
    """One ``list_messages`` row of §8.3 (S1–S8) and what it must return (scenario names, not ids)."""

    name: str
    thread_id: str
    expected: tuple[str, ...]
    total: int
    has_more: bool
    resource_id: str | None = None
    include: tuple[tuple[str, int, int, str | None], ...] = ()
    per_page: int | bool | None = None
    description: str = ""

    def kwargs(self, scenario: Scenario) -> dict[str, Any]:
        """The ``list_messages`` keyword arguments for one copy of the scenario."""
        out: dict[str, Any] = {"thread_id": scenario.id(self.thread_id)}
        if self.resource_id is not None:
            out["resource_id"] = scenario.id(self.resource_id)
        if self.include:
            out["include"] = [scenario.window(*item) for item in self.include]
        if self.per_page is not None:
            out["per_page"] = self.per_page
        return out

    @property
    def echoed_per_page(self) -> int | bool:
        """The ``per_page`` the page must echo (40 when not given)."""
        return 40 if self.per_page is None else self.per_page

    @property
    def isolates_resources(self) -> bool:
        """Whether the case checks that an include window stays inside ``resource_id`` (§4 resource scope)."""
        return self.name in ("S1", "S3")


STORAGE_CASES: Final = (
    StorageCase(
        "S1",
        "B1",
        ("b1",),
        1,
        False,
        resource_id="B",
        include=(("a2", 2, 2, None),),
        description="a target owned by another resource is dropped",
    ),
    StorageCase(
        "S2",
        "A2",
        ("a1", "a2", "a3", "a4"),
        1,
        False,
        resource_id="A",
        include=(("a2", 1, 1, None),),
        description="a window from another thread of the same resource",
    ),
    StorageCase(
        "S3",
        "B1",
        (),
        0,
        False,
        resource_id="B",
        per_page=0,
        include=(("a2", 2, 2, None),),
        description="include-only path: a cross-resource target yields nothing",
    ),
    StorageCase(
        "S4",
        "B1",
        ("a1", "a2", "a3", "b1"),
        1,
        False,
        include=(("a2", 1, 1, None),),
        description="without resource_id, windows may come from any resource",
    ),
    StorageCase(
        "S5",
        "A2",
        ("a1", "a2", "a3", "a4"),
        1,
        False,
        resource_id="A",
        include=(("a2", 1, 1, "A2"),),
        description="a wrong thread_id hint does not change the window",
    ),
    StorageCase(
        "S6",
        "A1",
        ("a2",),
        0,
        False,
        resource_id="A",
        per_page=0,
        include=(("a2", 0, 0, None),),
        description="per_page=0 returns the windows only",
    ),
    StorageCase(
        "S7",
        "A1",
        ("a1", "a2", "a3", "a4"),
        3,
        False,
        resource_id="A",
        per_page=False,
        include=(("a4", 0, 0, None),),
        description="per_page=False returns the whole thread plus the window",
    ),
    StorageCase(
        "S8a",
        "A1",
        ("a1", "a2"),
        3,
        True,
        resource_id="A",
        per_page=2,
        description="the first page of two",
    ),
    StorageCase(
        "S8b",
        "A1",
        ("a1", "a2", "a3"),
        3,
        False,
        resource_id="A",
        per_page=2,
        include=(("a3", 0, 0, None),),
        description="the window supplies the rest of the thread, so nothing more remains",
    ),
)


@dataclass(frozen=True)
class RecallCase:
    """One single-call ``Memory.recall`` row of §8.3 and the messages it must return (scenario names)."""

    name: str
    thread_id: str
    resource_id: str | None
    expected: tuple[str, ...]
    query: str = QUERY
    thread_config: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""

    def kwargs(self, scenario: Scenario) -> dict[str, Any]:
        """The ``recall`` keyword arguments for one copy of the scenario."""
        out: dict[str, Any] = {"thread_id": scenario.id(self.thread_id), "vector_search_string": self.query}
        if self.resource_id is not None:
            out["resource_id"] = scenario.id(self.resource_id)
        if self.thread_config:
            out["thread_config"] = _deep_copy(self.thread_config)
        return out


def _deep_copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_deep_copy(v) for v in value]
    return value


RECALL_CASES: Final = (
    RecallCase(
        "M1",
        "A2",
        "A",
        ("a1", "a2", "a3", "a4"),
        description="hit a2 (score 1.0) with its window, plus the newest history message a4",
    ),
    RecallCase(
        "M2",
        "A2",
        "A",
        ("a4",),
        thread_config={"semanticRecall": {"scope": "thread"}},
        description="thread scope: a2 lives in another thread, so only history remains",
    ),
    RecallCase(
        "M5",
        "B1",
        "B",
        ("b1",),
        description="resource B sees none of resource A's messages",
    ),
    RecallCase(
        "M7",
        "A2",
        "A",
        ("a4",),
        query="zzz unrelated",
        thread_config={"semanticRecall": {"threshold": 0.999}},
        description="a threshold no hit reaches leaves history only",
    ),
    RecallCase(
        "M8",
        "A2",
        "A",
        ("a1", "a2", "a3"),
        thread_config={"lastMessages": False},
        description="history off: the include-only path returns the windows",
    ),
)
