"""Hybrid recall's lexical side (``semanticRecall.mode: "hybrid"``) on the target's (storage, vector) pair.

A target whose manifest declares ``lexical_search`` keeps a lexical index beside each vector index, written
and deleted with the vectors; the suite checks, through ``Memory`` with the ``hash/64`` embedder and through
the lexical index itself:

* tenant scope: a resource-scoped search never returns another resource's message, a thread-scoped one
  never another thread's, on the lexical side alone and fused;
* filters: ``semanticRecall.filter`` on thread metadata applies to the lexical side exactly as to the vectors;
* hostile text: FTS syntax in a query (``"``, ``*``, ``NEAR``, ``OR``, ``AND NOT``, ``col:``, ``^``, brackets)
  is searched as words, never raises;
* deletes: a deleted message's lexical rows go with its vectors.

A target that does not declare it must refuse the mode with ``CapabilityError`` before anything is written
or embedded.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from mastra_memory.capabilities import AdapterCapabilities
from mastra_memory.errors import CapabilityError
from mastra_memory.filters import parse
from mastra_memory.memory import Memory
from mastra_memory.memory.index.lexical import lexical_index_for
from mastra_memory.storage import storage_capabilities
from mastra_memory.vector import MastraVector

from ..report import Outcome
from ..targets import ConformanceTarget, TargetSettings
from . import target_storage

__all__ = ["LexicalSearchSuite"]

EMBEDDER = "hash/64"
HOSTILE = [
    '"',
    '""',
    '"unbalanced',
    "*",
    "pot*",
    "NEAR",
    "NEAR(spare key, 2)",
    "OR",
    "key OR",
    "AND NOT key",
    "content: key",
    "^key",
    "(key",
    "key)",
    "{key}",
    "-key",
    "+",
    "\\",
    "'; DROP TABLE x; --",
    "\u00e9t\u00e9 na\u00efve",
    "   ",
]


@dataclass
class LexicalRun:
    memory: Memory
    vector: MastraVector
    prefix: str

    def id(self, name: str) -> str:
        return f"{self.prefix}{name}"


def _options(**recall: Any) -> dict[str, Any]:
    return {
        "lastMessages": False,
        "semanticRecall": {"topK": 10, "messageRange": 0, "scope": "resource", "mode": "hybrid", **recall},
    }


async def _seed(run: LexicalRun) -> None:
    i = run.id
    await run.memory.create_thread(i("alice"), i("a1"), metadata={"project": "garden"})
    await run.memory.create_thread(i("alice"), i("a2"), metadata={"project": "house"})
    await run.memory.create_thread(i("bob"), i("b1"), metadata={"project": "garden"})
    await run.memory.save_messages(
        [
            {
                "id": i("m1"),
                "thread_id": i("a1"),
                "role": "user",
                "content": "the spare key is under the blue pot",
            },
            {
                "id": i("m2"),
                "thread_id": i("a1"),
                "role": "assistant",
                "content": "noted: NEAR the door, OR the shed",
            },
            {
                "id": i("m3"),
                "thread_id": i("a2"),
                "role": "user",
                "content": "the house key hangs by the door",
            },
            {
                "id": i("m4"),
                "thread_id": i("b1"),
                "role": "user",
                "content": "bob's spare key is under the blue pot",
            },
        ]
    )
    await run.memory.settled(timeout=60)


@pytest.mark.asyncio
class LexicalSearchSuite:
    """The lexical side of hybrid recall: scope, filters, hostile text, deletes (or the refusal)."""

    @pytest_asyncio.fixture(loop_scope="function")
    async def run(
        self,
        conformance_target: ConformanceTarget,
        target_settings: TargetSettings,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        outcome: Outcome,
        tmp_path: Path,
    ) -> AsyncIterator[LexicalRun | None]:
        storage = target_storage(conformance_target, target_settings, tmp_path / "lexical-storage.db")
        await storage.init()
        if not storage_capabilities(storage).resource_scope:  # the memory domain checks that refusal
            outcome.unsupported("resource_scope", "the storage declares resource_scope=False")
            await storage.close()
            yield None
            return
        before = set(await vector_store.list_indexes())
        memory = Memory(storage=storage, vector=vector_store, embedder=EMBEDDER, options=_options())
        run = LexicalRun(memory, vector_store, f"x{uuid.uuid4().hex[:8]}-")
        try:
            if not capabilities.lexical_search:
                await memory.create_thread(run.id("alice"), run.id("a1"))
                with pytest.raises(CapabilityError, match="lexical"):
                    await memory.recall(run.id("a1"), resource_id=run.id("alice"), vector_search_string="key")
                assert set(await vector_store.list_indexes()) == before, "a refused recall created an index"
                outcome.unsupported("lexical_search", "the manifest does not declare lexical_search")
                yield None
                return
            await _seed(run)
            yield run
        finally:
            for name in set(await vector_store.list_indexes()) - before:
                await vector_store.delete_index(name)
            await storage.close()

    async def _hits(self, run: LexicalRun, query: str, thread: str = "a1", **config: Any) -> list[str]:
        result = await run.memory.recall(
            run.id(thread),
            resource_id=run.id("alice"),
            vector_search_string=query,
            per_page=0,
            thread_config={"semanticRecall": config} if config else None,
        )
        return [h.message_id.removeprefix(run.prefix) for h in result.hits]

    async def _lexical(self, run: LexicalRun, query: str, flt: Mapping[str, Any]) -> list[str]:
        index = lexical_index_for(run.vector)
        assert index is not None, "the manifest declares lexical_search, but no lexical index was found"
        [name] = [n for n in await run.vector.list_indexes() if n.startswith("memory")]
        node = parse(dict(flt))
        rows = await index.search(name, query, top_k=20, flt=node)
        return sorted(str(r.metadata["message_id"]).removeprefix(run.prefix) for r in rows)

    async def test_resource_scope_never_reaches_another_resource(self, run: LexicalRun | None) -> None:
        if run is None:
            return
        hits = await self._hits(run, "spare key blue pot")
        assert hits[0] == "m1"
        assert "m4" not in hits, "a message of another resource leaked through hybrid recall"
        assert await self._lexical(run, "spare key blue pot", {"resource_id": run.id("alice")}) == [
            "m1",
            "m3",
        ]

    async def test_thread_scope_never_reaches_another_thread(self, run: LexicalRun | None) -> None:
        if run is None:
            return
        hits = await self._hits(run, "house key door", scope="thread")
        assert set(hits) <= {"m1", "m2"}
        assert await self._lexical(run, "house key door", {"thread_id": run.id("a2")}) == ["m3"]

    async def test_filter_applies_to_the_lexical_side(self, run: LexicalRun | None) -> None:
        if run is None:
            return
        hits = await self._hits(run, "key door", filter={"project": "house"})
        assert hits == ["m3"]
        scoped = {"resource_id": run.id("alice"), "project": {"$in": ["garden"]}}
        assert await self._lexical(run, "key door", scoped) == ["m1", "m2"]
        assert await self._lexical(run, "key", {"role": "assistant", "resource_id": run.id("alice")}) == []

    @pytest.mark.parametrize("query", HOSTILE)
    async def test_hostile_text_is_searched_as_words(self, run: LexicalRun | None, query: str) -> None:
        if run is None:
            return
        hits = await self._hits(run, query)
        assert "m4" not in hits
        found = await self._lexical(run, query, {"resource_id": run.id("alice")})
        assert "m4" not in found

    async def test_syntax_words_match_as_words(self, run: LexicalRun | None) -> None:
        if run is None:
            return
        assert await self._lexical(run, "NEAR", {"resource_id": run.id("alice")}) == ["m2"]
        assert await self._lexical(run, '"shed" OR', {"resource_id": run.id("alice")}) == ["m2"]

    async def test_deleted_messages_leave_the_lexical_index(self, run: LexicalRun | None) -> None:
        if run is None:
            return
        await run.memory.delete_messages([run.id("m1")])
        await run.memory.delete_thread(run.id("a2"))
        assert await self._lexical(run, "key", {"resource_id": run.id("alice")}) == []
        assert "m1" not in await self._hits(run, "spare key blue pot")
        assert await self._lexical(run, "key", {"resource_id": run.id("bob")}) == ["m4"]
