"""``MastraStore``: a LangGraph ``BaseStore`` on any mastra-memory storage, with its semantic index on any
vector store.

LangGraph's contract (``langgraph.store.base``): ``batch``/``abatch`` run a list of ``GetOp``, ``PutOp``
(``value=None`` deletes), ``SearchOp`` and ``ListNamespacesOp`` and return one result each, in order;
``put(ttl=)`` and ``get/search(refresh_ttl=)`` carry TTLs in minutes when ``supports_ttl``. The ops run in
the order given, so a read after a write in one batch sees the write.

Items are thread records of the storage (:mod:`.items`); the ``filter`` of a search is our filter language
(docs/spec.md §2), parsed before any I/O — a filter we cannot honour is a ``FilterError``, never dropped —
and decided for each item of the namespace prefix by the reference evaluator (§2.3), so LangGraph's six
operators ``$eq $ne $gt $gte $lt $lte`` mean exactly what §2.3 says on every storage.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Coroutine, Iterable, Mapping
from typing import Any, TypeVar

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)
from mastra_memory import ConfigError, MastraVector, MemoryStorage, ValidationError, create_vector
from mastra_memory import sync as blocking
from mastra_memory.filters import Node, matches, parse
from mastra_memory.memory.defaults import resolve_storage, vector_default
from mastra_memory.storage.records import Thread
from mastra_memory.timestamps import StampClock, epoch_ms, utc_now

from .index import SemanticIndex
from .items import (
    EXPIRES_KEY,
    StoredItem,
    decode,
    encode_metadata,
    item_id,
    matches_condition,
    prefix_metadata,
)

__all__ = ["MastraStore"]

_MINUTE_MS = 60_000
# Strictly increasing write stamps for the process: items put within one millisecond keep their order
# (a search without a query lists items oldest first, as LangGraph's InMemoryStore lists them in
# insertion order) instead of tying and ordering by their digest ids.
_CLOCK = StampClock()
T = TypeVar("T")


class MastraStore(BaseStore):
    """A LangGraph store over a mastra-memory ``MemoryStorage`` (and a ``MastraVector`` for ``index``).

    Args:
        storage: a ``MemoryStorage``, a storage plugin name or URL (``"sqlite:///memory.db"``), or a
            ``Memory`` whose storage and vector store are used; by default the SQLite file ``./memory.db``.
        vector: the ``MastraVector`` (or its name or URL) holding the semantic index; by default the one
            ``Memory(storage=...)`` would use: the same SQLite file for SQLite.
        index: LangGraph's ``IndexConfig``: ``{"dims": int, "embed": ..., "fields": [...]}``.
        ttl: LangGraph's ``TTLConfig`` (``default_ttl`` and ``refresh_on_read``; expired items are never
            returned and ``sweep_ttl`` deletes them; ``sweep_interval_minutes`` is what
            ``start_ttl_sweeper`` waits between sweeps).
        scope: the resource id the items are kept under; stores with different scopes on one storage
            never see each other's items.
        index_name: the vector index's name.
    """

    supports_ttl: bool = True

    def __init__(
        self,
        storage: MemoryStorage | str | Any | None = None,
        *,
        vector: MastraVector | str | None = None,
        index: Mapping[str, Any] | None = None,
        ttl: TTLConfig | None = None,
        scope: str = "langgraph",
        index_name: str = "langgraph_store",
    ) -> None:
        if (
            storage is not None
            and not isinstance(storage, MemoryStorage | str)
            and hasattr(storage, "storage")
        ):
            vector = vector if vector is not None else storage.vector
            storage = storage.storage
        self.storage: MemoryStorage = resolve_storage(storage)
        if not isinstance(scope, str) or not scope:
            raise ConfigError("scope must be a non-empty string (the resource id of the items)")
        self.scope = scope
        self.ttl_config = ttl
        self.index_config = dict(index) if index else None
        self.semantic: SemanticIndex | None = None
        if self.index_config is not None:
            # Without vector=, the vector store Memory(storage=...) would pick: the same SQLite file.
            if vector is None:
                vector = vector_default(storage, self.storage).build()
            elif isinstance(vector, str):
                vector = create_vector(vector)
            self.semantic = SemanticIndex(vector, self.index_config, index_name)
        self._sweeper: asyncio.Task[None] | None = None

    # --- the contract -------------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` (blocking): on mastra-memory's background event loop, so it works from any thread."""
        ops = list(ops)
        self._validate(ops)
        return _wait(self._run(ops))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order; one result per op."""
        ops = list(ops)
        self._validate(ops)
        return await self._run(ops)

    @staticmethod
    def _validate(ops: list[Op]) -> None:
        # Before any I/O: bad labels (LangGraph's own check) and filters (docs/spec.md §2.6).
        for op in ops:
            validate_op_namespace(op)
            if isinstance(op, SearchOp):
                parse(op.filter)

    async def _run(self, ops: list[Op]) -> list[Result]:
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(await self._get(op))
            elif isinstance(op, PutOp):
                await self._put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(await self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(await self._list_namespaces(op))
            else:
                raise ValidationError(f"unknown store operation {type(op).__name__}", domain="LANGGRAPH")
        return results

    # --- reads --------------------------------------------------------------------------------------

    async def _load(self, namespace: tuple[str, ...], key: str) -> StoredItem | None:
        thread = await self.storage.get_thread_by_id(item_id(self.scope, namespace, key), self.scope)
        stored = decode(thread) if thread is not None else None
        # The digest names the item; the record must also say it is that item (never another namespace's).
        if stored is None or stored.namespace != namespace or stored.key != key:
            return None
        return stored

    async def _get(self, op: GetOp) -> Item | None:
        stored = await self._load(tuple(op.namespace), str(op.key))
        now = epoch_ms(utc_now())
        if stored is None or stored.expired(now):
            return None
        if op.refresh_ttl:
            stored = await self._refresh(stored, now)
        return _item(stored)

    async def _scan(self, prefix: tuple[str, ...], wildcards: bool = False) -> list[StoredItem]:
        """The live items under a namespace prefix, label by label (``*`` a wildcard only with
        ``wildcards``), oldest first."""
        flt: dict[str, Any] = {"resource_id": self.scope}
        narrowed = prefix_metadata(prefix, wildcards)
        if narrowed:
            flt["metadata"] = narrowed
        page = await self.storage.list_threads(
            filter=flt,
            per_page=False,
            order_by={"field": "created_at", "direction": "ASC"},
            include_archived=True,
        )
        now = epoch_ms(utc_now())
        out = []
        for thread in page.threads:
            stored = decode(thread)
            if stored is None or stored.expired(now) or len(stored.namespace) < len(prefix):
                continue
            if all(
                (wildcards and p == "*") or p == label
                for p, label in zip(prefix, stored.namespace, strict=False)
            ):
                out.append(stored)
        return out

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        node: Node | None = parse(op.filter)
        candidates = [s for s in await self._scan(prefix) if matches(node, s.value)]
        start, stop = max(op.offset, 0), max(op.offset, 0) + max(op.limit, 0)
        if not (op.query and self.semantic is not None):
            chosen: list[tuple[StoredItem, float | None]] = [(s, None) for s in candidates[start:stop]]
        else:
            chosen = await self._semantic(op.query, prefix, candidates, start, stop, op.limit)
        if op.refresh_ttl:
            now = epoch_ms(utc_now())
            chosen = [(await self._refresh(s, now), score) for s, score in chosen]
        return [_search_item(s, score) for s, score in chosen]

    async def _semantic(
        self,
        query: str,
        prefix: tuple[str, ...],
        candidates: list[StoredItem],
        start: int,
        stop: int,
        limit: int,
    ) -> list[tuple[StoredItem, float | None]]:
        assert self.semantic is not None
        if not candidates or stop <= 0:
            return []
        by_id = {s.id: s for s in candidates}
        vector = await self.semantic.embed_query(query)
        hits, exhausted = await self.semantic.search(self.scope, prefix, vector, stop, by_id)
        chosen: list[tuple[StoredItem, float | None]] = [
            (by_id[h.item_id], h.score) for h in hits[start:stop]
        ]
        if exhausted and len(chosen) < limit:
            # As LangGraph's InMemoryStore does: items with nothing embedded follow the scored ones.
            scored = {h.item_id for h in hits}
            rest = [s for s in candidates if s.id not in scored]
            chosen.extend((s, None) for s in rest[: limit - len(chosen)])
        return chosen

    async def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        prefix: tuple[str, ...] = ()
        for condition in op.match_conditions or ():
            if condition.match_type == "prefix":
                prefix = tuple(condition.path)
        found = {s.namespace for s in await self._scan(prefix, wildcards=True)}
        conditions = op.match_conditions or ()
        namespaces = [ns for ns in found if all(matches_condition(ns, c) for c in conditions)]
        if op.max_depth is not None:
            namespaces = list({ns[: op.max_depth] for ns in namespaces})
        namespaces.sort()
        return namespaces[op.offset : op.offset + op.limit]

    # --- writes -------------------------------------------------------------------------------------

    async def _put(self, op: PutOp) -> None:
        namespace, key = tuple(op.namespace), str(op.key)
        current = await self._load(namespace, key)
        ident = item_id(self.scope, namespace, key)
        if op.value is None:
            if current is not None:
                await self._drop(current)
            return
        now = _CLOCK.next()
        ttl = op.ttl
        expires = epoch_ms(now) + round(ttl * _MINUTE_MS) if isinstance(ttl, int | float) else None
        # Check the value fits before anything is embedded (the vectors count is set once known).
        encode_metadata(namespace, key, op.value, ttl_minutes=ttl, expires_at_ms=expires, vectors=0)
        vectors = 0
        previous = current.vectors if current is not None else 0
        if self.semantic is not None:
            texts = self.semantic.texts(op.value, op.index)
            embedded = await self.semantic.embed_documents([t for _, t in texts])
            vectors = await self.semantic.write(
                self.scope, ident, namespace, [p for p, _ in texts], embedded, previous
            )
        thread = Thread(
            id=ident,
            resource_id=self.scope,
            metadata=encode_metadata(
                namespace, key, op.value, ttl_minutes=ttl, expires_at_ms=expires, vectors=vectors
            ),
            created_at=current.created_at if current is not None else now,
            updated_at=now,
        )
        await self.storage.save_thread(thread)

    async def _drop(self, stored: StoredItem) -> None:
        await self.storage.delete_thread(stored.id)
        if self.semantic is not None:
            await self.semantic.remove(stored.id, stored.vectors)

    async def _refresh(self, stored: StoredItem, now_ms: int) -> StoredItem:
        """Restart an item's TTL (reads with ``refresh_ttl``); ``updated_at`` stays."""
        if stored.ttl_minutes is None:
            return stored
        metadata = dict(stored.thread.metadata or {})
        metadata[EXPIRES_KEY] = now_ms + round(stored.ttl_minutes * _MINUTE_MS)
        thread = stored.thread.model_copy(update={"metadata": metadata})
        await self.storage.save_thread(thread)
        return decode(thread) or stored

    # --- TTL ----------------------------------------------------------------------------------------

    async def asweep_ttl(self) -> int:
        """Delete every expired item of this store (its vectors too); returns how many."""
        page = await self.storage.list_threads(
            filter={"resource_id": self.scope}, per_page=False, include_archived=True
        )
        now = epoch_ms(utc_now())
        expired = [s for t in page.threads if (s := decode(t)) is not None and s.expired(now)]
        for stored in expired:
            await self._drop(stored)
        return len(expired)

    def sweep_ttl(self) -> int:
        """Blocking :meth:`asweep_ttl`."""
        return _wait(self.asweep_ttl())

    async def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> asyncio.Task[None]:
        """Sweep expired items every ``sweep_interval_minutes`` (default: the TTL config's, else 5) in a
        task of the running loop; :meth:`stop_ttl_sweeper` ends it."""
        interval = sweep_interval_minutes or (self.ttl_config or {}).get("sweep_interval_minutes") or 5
        if self._sweeper is None or self._sweeper.done():

            async def sweep() -> None:
                while True:
                    await asyncio.sleep(float(interval) * 60)
                    await self.asweep_ttl()

            self._sweeper = asyncio.get_running_loop().create_task(sweep())
        return self._sweeper

    async def stop_ttl_sweeper(self) -> None:
        """End the sweeper task, if one runs."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None

    async def aclose(self) -> None:
        """Stop the sweeper and close the storage (and the vector store of the index)."""
        await self.stop_ttl_sweeper()
        await self.storage.close()
        if self.semantic is not None:
            await self.semantic.vector.close()

    def close(self) -> None:
        """Blocking :meth:`aclose`."""
        _wait(self.aclose())


def _wait(work: Coroutine[Any, Any, T]) -> T:
    """Block until ``work`` is done on mastra-memory's background loop. Called inside a running event loop
    (a sync ``put`` in async code, as LangGraph's InMemoryStore allows) the wait happens in a helper
    thread, since ``mastra_memory.sync`` refuses to block a loop's own thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return blocking.run(work)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mastra-store-wait") as pool:
        return pool.submit(blocking.run, work).result()


def _item(stored: StoredItem) -> Item:
    return Item(
        value=stored.value,
        key=stored.key,
        namespace=stored.namespace,
        created_at=stored.created_at,
        updated_at=stored.updated_at,
    )


def _search_item(stored: StoredItem, score: float | None) -> SearchItem:
    return SearchItem(
        namespace=stored.namespace,
        key=stored.key,
        value=stored.value,
        created_at=stored.created_at,
        updated_at=stored.updated_at,
        score=score,
    )
