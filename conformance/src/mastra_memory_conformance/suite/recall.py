"""``Memory.recall`` end to end (docs/spec.md §5.3–§5.6, §8.3 M1–M9) on the target's (storage, vector) pair.

``MemoryRecallSuite`` builds a ``Memory`` from the target's vector store and its ``MemoryStorage`` — or,
when the target has none, the embedded SQLite storage in a temporary file — with the deterministic
``hash/64`` embedder and the scenario options of §8.3 (``last_messages=1``, ``semantic_recall={top_k: 1,
message_range: 1}``, resource scope). Each test saves its own copy of the scenario under a random prefix
through ``Memory.save_messages``, so every message has one vector, and then checks:

* the single-call rows M1, M2, M5, M7 and M8, ownership (M3) and the resource-scope guard (M4);
* that deletes cascade: after ``delete_messages`` / ``delete_thread`` no vector of the deleted messages
  remains in any memory index — asked of the vector store directly, not through ``recall`` (M6);
* that nothing leaks across resources, neither through hits nor through caller include windows;
* index naming (M9): ``memory<sep>messages<sep>64`` for ``hash/64``, ``memory<sep>messages`` for
  ``hash/1536``, and a custom ``index_name`` honoured by save, recall, update, delete, reindex and the
  processor, with no vector in any default-named index.
* two embedders over one store (docs/spec.md §5.6): a reindex with a second embedder leaves the first
  embedder's index whole, and an update of a message's text removes its vectors from every memory index
  and writes new ones only in the updating memory's index.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

import pytest
import pytest_asyncio

from mastra_memory.capabilities import AdapterCapabilities
from mastra_memory.errors import ConfigError, ResourceScopeError, ThreadOwnershipError, ValidationError
from mastra_memory.memory import Memory
from mastra_memory.memory.message_list import MessageList
from mastra_memory.storage import MemoryStorage, storage_capabilities
from mastra_memory.vector import MastraVector, QueryResult

from ..report import Outcome
from ..scenarios import EMBEDDER, MESSAGES, QUERY, RECALL_CASES, RECALL_OPTIONS, RecallCase, Scenario, at
from ..targets import ConformanceTarget, TargetSettings
from . import query_limit, settle, target_storage

__all__ = ["MemoryRecallSuite"]

_CASES = [
    pytest.param(case, id=case.name, marks=pytest.mark.conformance(domain="memory", item=case.name))
    for case in RECALL_CASES
]
#: Score tolerance for "the same text" (1.0), wide enough for float32 storage.
_SAME_TEXT = 1e-3


def _ids(messages: Iterable[Any]) -> list[str]:
    return [m.id for m in messages]


@dataclass
class RecallRun:
    """One test's ``Memory`` over the target's stores, with the scenario copy it saved."""

    memory: Memory
    vector: MastraVector
    capabilities: AdapterCapabilities
    scenario: Scenario

    def strip(self, ids: Iterable[str]) -> list[str]:
        """Ids without the scenario prefix, for readable comparisons."""
        return [i.removeprefix(self.scenario.prefix) for i in ids]

    def default_index(self, dimension: int) -> str:
        """The default memory index name for ``dimension`` with the store's separator (docs/spec.md §5.5)."""
        sep = self.vector.index_separator
        base = f"memory{sep}messages"
        return base if dimension == 1536 else f"{base}{sep}{dimension}"

    async def memory_indexes(self, *extra: str) -> list[str]:
        """The message index set (docs/spec.md §5.5) as the store lists it, plus ``extra`` names that
        exist."""
        sep = self.vector.index_separator
        base = f"memory{sep}messages"
        native = {self.vector.to_native_index_name(name) for name in extra}
        return [
            name
            for name in await self.vector.list_indexes()
            if name == base or name.startswith(base + sep) or name in native
        ]

    async def settle(self) -> None:
        """Wait until memory writes are visible (eventually consistent targets only)."""
        for name in await self.memory_indexes():
            await settle(self.vector, self.capabilities, name)

    async def records(self, index: str, key: str, values: Iterable[str]) -> list[QueryResult]:
        """Every record of ``index`` whose metadata ``key`` is one of ``values``, read from the store."""
        wanted = list(values)
        dimension = (await self.vector.describe_index(index)).dimension
        probe = [1.0] + [0.0] * (dimension - 1)
        return await self.vector.query(
            index, probe, top_k=query_limit(self.capabilities, 1000), filter={key: {"$in": wanted}}
        )

    async def holders(self, key: str, values: Iterable[str], *extra: str) -> dict[str, set[str]]:
        """Memory index -> the ``key`` values (e.g. message ids) it holds vectors for, among ``values``."""
        wanted = list(values)
        found: dict[str, set[str]] = {}
        for index in await self.memory_indexes(*extra):
            held = {str(r.metadata.get(key)) for r in await self.records(index, key, wanted)}
            if held:
                found[index] = held
        return found


async def _open_storage(target: ConformanceTarget, settings: TargetSettings, tmp_path: Path) -> MemoryStorage:
    storage = target_storage(target, settings, tmp_path / "recall-storage.db")
    await storage.init()
    return storage


@asynccontextmanager
async def _run(
    target: ConformanceTarget,
    settings: TargetSettings,
    vector: MastraVector,
    capabilities: AdapterCapabilities,
    outcome: Outcome,
    tmp_path: Path,
    *,
    embedder: str = EMBEDDER,
    options: Mapping[str, Any] = RECALL_OPTIONS,
) -> AsyncIterator[RecallRun | None]:
    """A ``Memory`` over the target's pair with the scenario saved; ``None`` when the storage declares
    ``resource_scope=False`` (then ``Memory`` must refuse resource scope, which is checked here).

    Indexes the test created are deleted afterwards; the storage is closed (the vector store is the
    ``vector_store`` fixture's to close).
    """
    storage = await _open_storage(target, settings, tmp_path)
    before = set(await vector.list_indexes())
    try:
        if not storage_capabilities(storage).resource_scope:
            with pytest.raises(ConfigError, match="resource_scope=False"):
                Memory(storage=storage, vector=vector, embedder=embedder, options=dict(options))
            outcome.unsupported("resource_scope", "the storage declares resource_scope=False")
            yield None
            return
        memory = Memory(storage=storage, vector=vector, embedder=embedder, options=dict(options))
        run = RecallRun(memory, vector, capabilities, Scenario(f"m{uuid.uuid4().hex[:8]}-"))
        await run.scenario.seed_memory(memory)
        await run.settle()
        yield run
        await memory.flush()
    finally:
        for name in set(await vector.list_indexes()) - before:
            await vector.delete_index(name)
        await storage.close()


#: What the ``open_run`` fixture gives: ``open_run(embedder=..., options=...)`` opens :func:`_run`.
OpenRun = Callable[..., AbstractAsyncContextManager[RecallRun | None]]
_Test = TypeVar("_Test", bound=Callable[..., Coroutine[Any, Any, None]])


def _with_run(test: _Test) -> _Test:
    """Give ``test`` the ``run`` fixture's :class:`RecallRun`, or end it there when the fixture yielded
    ``None``: the storage declares ``resource_scope=False``, and the fixture checked that ``Memory`` refuses
    it (the test passes, annotated as unsupported)."""

    @functools.wraps(test)
    async def when_memory_runs(*args: Any, run: RecallRun | None, **kwargs: Any) -> None:
        if run is None:
            return
        await test(*args, run=run, **kwargs)

    return cast(_Test, when_memory_runs)


@pytest.mark.asyncio
class MemoryRecallSuite:
    """docs/spec.md §8.3 M1–M9 and the delete cascades of §5.6 on the target's (storage, vector) pair.

    Most tests take ``run``, the scenario saved through a ``Memory`` with the default options (and are
    decorated with :func:`_with_run`); those that need another embedder or other options take
    ``open_run``.
    """

    @pytest.fixture
    def open_run(
        self,
        conformance_target: ConformanceTarget,
        target_settings: TargetSettings,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        outcome: Outcome,
        tmp_path: Path,
    ) -> OpenRun:
        """Opens :func:`_run` on the target's pair; ``embedder`` and ``options`` may be given."""

        def open_run(
            *, embedder: str = EMBEDDER, options: Mapping[str, Any] = RECALL_OPTIONS
        ) -> AbstractAsyncContextManager[RecallRun | None]:
            return _run(
                conformance_target,
                target_settings,
                vector_store,
                capabilities,
                outcome,
                tmp_path,
                embedder=embedder,
                options=options,
            )

        return open_run

    @pytest_asyncio.fixture(loop_scope="function")
    async def run(self, open_run: OpenRun) -> AsyncIterator[RecallRun | None]:
        """The scenario saved through a ``Memory`` with the default options, or ``None`` (see
        :func:`_with_run`)."""
        async with open_run() as run:
            yield run

    @pytest.mark.parametrize("case", _CASES)
    @_with_run
    async def test_recall_scenario(
        self,
        case: RecallCase,
        run: RecallRun,
    ) -> None:
        """§8.3 M1, M2, M5, M7, M8: one ``recall`` call each, exact message ids in order."""
        sc = run.scenario
        result = await run.memory.recall(**case.kwargs(sc))
        assert run.strip(_ids(result.messages)) == list(case.expected), (
            f"{case.name} ({case.description}): expected {list(case.expected)}, "
            f"got {run.strip(_ids(result.messages))}"
        )
        resource = sc.id(case.resource_id) if case.resource_id else None
        assert all(m.resource_id == resource for m in result.messages), "a message of another resource leaked"
        if case.name == "M1":
            assert [(h.message_id, h.thread_id) for h in result.hits] == [(sc.id("a2"), sc.id("A1"))]
            assert result.hits[0].score == pytest.approx(1.0, abs=_SAME_TEXT), "equal texts score 1.0"
            assert result.index_name == run.default_index(64)
        if case.name == "M7":
            assert result.hits == [], "no hit reaches the threshold"
        if case.name == "M8":
            assert (result.per_page, result.total, result.has_more) == (0, 0, False), (
                "history off uses the include-only path (per_page=0), never per_page=False"
            )

    @pytest.mark.conformance(domain="memory", item="M3")
    @_with_run
    async def test_m3_thread_of_another_resource(
        self,
        run: RecallRun,
    ) -> None:
        sc = run.scenario
        with pytest.raises(ThreadOwnershipError) as info:
            await run.memory.recall(sc.id("A2"), resource_id=sc.id("B"), vector_search_string=QUERY)
        assert str(info.value) == f"thread {sc.id('A2')} does not belong to the requested resource"

    @pytest.mark.conformance(domain="memory", item="M4")
    @_with_run
    async def test_m4_resource_scope_needs_a_resource(
        self,
        run: RecallRun,
    ) -> None:
        with pytest.raises(ResourceScopeError, match="needs a resource_id"):
            await run.memory.recall(run.scenario.id("A2"), vector_search_string=QUERY)
        with pytest.raises(ValidationError):  # "" must not disable isolation
            await run.memory.recall(run.scenario.id("A2"), resource_id="", vector_search_string=QUERY)

    @pytest.mark.conformance(domain="memory", item="M6")
    @_with_run
    async def test_m6_deleted_messages_leave_no_vectors(
        self,
        run: RecallRun,
    ) -> None:
        sc = run.scenario
        everyone = sc.ids(m.id for m in MESSAGES)
        assert await run.holders("message_id", everyone) == {run.default_index(64): set(everyone)}, (
            "every scenario message must have its vector in the default index before the delete"
        )
        await run.memory.delete_messages([sc.id("a2")])
        await run.settle()
        held = await run.holders("message_id", everyone)
        assert held == {run.default_index(64): set(everyone) - {sc.id("a2")}}, (
            f"after delete_messages(a2) the vector store still holds {held}"
        )
        result = await run.memory.recall(sc.id("A2"), resource_id=sc.id("A"), vector_search_string=QUERY)
        assert sc.id("a2") not in _ids(result.messages)
        assert all(h.message_id != sc.id("a2") for h in result.hits), "a hit for a deleted message surfaced"
        assert set(_ids(result.messages)) <= set(sc.ids(["a1", "a3", "a4"]))

    @pytest.mark.conformance(domain="memory", item="delete_thread")
    @_with_run
    async def test_deleted_thread_leaves_no_vectors(
        self,
        run: RecallRun,
    ) -> None:
        sc = run.scenario
        await run.memory.delete_thread(sc.id("A1"))
        await run.settle()
        assert await run.holders("thread_id", [sc.id("A1")]) == {}, "vectors of a deleted thread remain"
        survivors = await run.holders("message_id", sc.ids(m.id for m in MESSAGES))
        assert survivors == {run.default_index(64): set(sc.ids(["a4", "b1"]))}
        for query in ("alpha apples", QUERY, "alpha cherries"):
            result = await run.memory.recall(sc.id("A2"), resource_id=sc.id("A"), vector_search_string=query)
            assert run.strip(_ids(result.messages)) == ["a4"], f"deleted content leaked for {query!r}"

    @pytest.mark.conformance(domain="memory", item="resource isolation")
    @_with_run
    async def test_no_cross_resource_leaks(
        self,
        run: RecallRun,
    ) -> None:
        """Resource B never sees resource A: not through hits, not through a caller's include windows."""
        sc = run.scenario
        for text in [m.text for m in MESSAGES]:
            result = await run.memory.recall(
                sc.id("B1"),
                resource_id=sc.id("B"),
                vector_search_string=text,
                thread_config={"semanticRecall": {"topK": 5}},
            )
            assert run.strip(_ids(result.messages)) == ["b1"], f"query {text!r} leaked across resources"
            assert {h.message_id for h in result.hits} <= {sc.id("b1")}
        result = await run.memory.recall(
            sc.id("B1"), resource_id=sc.id("B"), include=[{"id": sc.id("a2"), "withPreviousMessages": 1}]
        )
        assert run.strip(_ids(result.messages)) == ["b1"], "a caller include crossed resources"
        result = await run.memory.recall(
            sc.id("A2"), resource_id=sc.id("A"), include=[{"id": sc.id("a2"), "withNextMessages": 1}]
        )
        assert run.strip(_ids(result.messages)) == ["a2", "a3", "a4"], "recall must honour a caller include"
        result = await run.memory.recall(
            sc.id("A2"),
            resource_id=sc.id("A"),
            vector_search_string="beta eggs",
            thread_config={"semanticRecall": {"topK": 5, "messageRange": 0}},
        )
        assert sc.id("b1") not in _ids(result.messages)
        assert {h.message_id for h in result.hits} <= set(sc.ids(["a1", "a2", "a3", "a4"]))

    @pytest.mark.conformance(domain="memory", item="two embedders")
    @_with_run
    async def test_reindex_keeps_another_embedders_index_and_an_update_clears_it(
        self,
        run: RecallRun,
    ) -> None:
        """docs/spec.md §5.6: a reindex changes no text, so another embedder's vectors stay right and
        stay; an update changes the text, so every embedder's old vectors of that message go."""
        sc = run.scenario
        first, second_index = run.default_index(64), run.default_index(32)
        everyone = set(sc.ids(m.id for m in MESSAGES))
        a1_thread = set(sc.ids(["a1", "a2", "a3"]))
        # The same stores with another embedder (not closed here: the stores are the run's).
        second = Memory(
            storage=run.memory.storage,
            vector=run.vector,
            embedder="hash/32",
            options=dict(RECALL_OPTIONS),
        )
        assert await second.reindex_thread(sc.id("A1")) == 3
        await run.settle()
        held = await run.holders("message_id", everyone)
        assert held == {first: everyone, second_index: a1_thread}, (
            f"a reindex with hash/32 must leave hash/64's index whole, found {held}"
        )
        result = await run.memory.recall(sc.id("A2"), resource_id=sc.id("A"), vector_search_string=QUERY)
        assert run.strip(_ids(result.messages)) == ["a1", "a2", "a3", "a4"], "the first embedder recalls"

        a2 = sc.id("a2")
        await second.update_messages([{"id": a2, "content": "alpha bananas, ripe"}], resource_id=sc.id("A"))
        await run.settle()
        held = await run.holders("message_id", everyone)
        assert held == {first: everyone - {a2}, second_index: a1_thread}, (
            f"an update must remove the message's stale vectors from every memory index, found {held}"
        )
        [record] = await run.records(second_index, "message_id", [a2])
        assert record.metadata["content"] == "alpha bananas, ripe", "the update re-indexes the new text"
        await second.flush()

    @pytest.mark.conformance(domain="memory", item="M9")
    @pytest.mark.parametrize("dimension", [64, 1536])
    async def test_m9_default_index_names(
        self, dimension: int, capabilities: AdapterCapabilities, open_run: OpenRun
    ) -> None:
        """The default index name follows the real embedding dimension on the write and the read path."""
        if capabilities.max_dimension is not None and capabilities.max_dimension < dimension:
            pytest.skip(
                f"{capabilities.name} declares max_dimension {capabilities.max_dimension} < {dimension}"
            )
        async with open_run(embedder=f"hash/{dimension}") as run:
            if run is None:
                return
            sc = run.scenario
            index = run.default_index(dimension)
            everyone = sc.ids(m.id for m in MESSAGES)
            assert await run.holders("message_id", everyone) == {index: set(everyone)}, (
                f"hash/{dimension} must write every vector to {index!r} and nowhere else"
            )
            assert (await run.vector.describe_index(index)).dimension == dimension
            result = await run.memory.recall(sc.id("A2"), resource_id=sc.id("A"), vector_search_string=QUERY)
            assert run.strip(_ids(result.messages)) == ["a1", "a2", "a3", "a4"]
            assert result.index_name == index

    @pytest.mark.conformance(domain="memory", item="M9")
    async def test_m9_custom_index_name_on_every_path(self, open_run: OpenRun) -> None:
        """``index_name`` is used by save, recall, update, delete, reindex and the processor."""
        custom = f"custom_{uuid.uuid4().hex[:8]}"
        options = {"lastMessages": 1, "semanticRecall": {"topK": 1, "messageRange": 1, "indexName": custom}}
        async with open_run(options=options) as run:
            if run is None:
                return
            sc = run.scenario
            native = run.vector.to_native_index_name(custom)
            everyone = sc.ids(m.id for m in MESSAGES)
            assert await run.holders("message_id", everyone, custom) == {native: set(everyone)}, "save"

            result = await run.memory.recall(sc.id("A2"), resource_id=sc.id("A"), vector_search_string=QUERY)
            assert run.strip(_ids(result.messages)) == ["a1", "a2", "a3", "a4"], "recall"
            assert result.index_name in (custom, native)

            await run.memory.update_messages([{"id": sc.id("a3"), "content": "alpha cranberries"}])
            await run.settle()
            [a3] = await run.records(native, "message_id", [sc.id("a3")])
            assert a3.metadata["content"] == "alpha cranberries", "update re-indexes into the custom index"

            await run.memory.delete_messages([sc.id("a1")])
            await run.settle()
            assert await run.holders("message_id", [sc.id("a1")], custom) == {}, "delete"

            assert await run.memory.reindex_thread(sc.id("A1")) == 2, "reindex"
            await run.settle()
            left = set(sc.ids(["a2", "a3", "a4", "b1"]))
            assert await run.holders("message_id", everyone, custom) == {native: left}

            # The memory input processors include MessageHistory too (docs/spec.md §5.12): take recall's.
            [processor] = [p for p in run.memory.get_input_processors() if p.id == "semantic-recall"]
            a2_thread, a = sc.id("A2"), sc.id("A")
            context = {"MastraMemory": {"thread": {"id": a2_thread, "resource_id": a}, "resource_id": a}}
            turn = [
                {
                    "id": sc.id("n1"),
                    "thread_id": a2_thread,
                    "role": "user",
                    "content": QUERY,
                    "created_at": at(9),
                }
            ]
            listing = MessageList(turn, thread_id=a2_thread, resource_id=a)
            await processor.process_input(listing.all(), listing, None, request_context=context)
            [system] = listing.system_messages
            assert "alpha bananas" in (system.content.content or ""), "the processor reads the custom index"
            answer = {
                "id": sc.id("n2"),
                "thread_id": a2_thread,
                "role": "assistant",
                "content": "assistant answer",
                "created_at": at(10),
            }
            await processor.process_output_result([answer], listing, None, request_context=context)
            await run.settle()
            final = await run.holders("message_id", [*everyone, sc.id("n1"), sc.id("n2")], custom)
            assert final == {native: left | {sc.id("n1"), sc.id("n2")}}, (
                f"only the custom index may hold this test's vectors, found {final}"
            )
