"""``MongoDBStorage``: the ``MemoryStorage`` contract (docs/spec.md §4) on MongoDB.

This module holds only queries; the contract itself (validation, merging, bumps, clone, include
windows, paging rules) is the :class:`~mastra_memory.storage.MemoryStorage` template.

Layout: collections ``<prefix>threads``, ``<prefix>messages`` and ``<prefix>resources`` (and observational
memory's, :mod:`.om_documents`), one document per record, in one of two document layouts (``settings.layout``,
:mod:`.documents`): this project's own (described here), or ``@mastra/mongodb``'s (``layout="mastra"``, to
share the database with a Mastra app: the id in a field ``id``, camelCase fields, metadata as documents,
Mastra's indexes). Before it creates anything, the storage checks which layout the database holds and refuses
the other one with ``StorageLayoutError`` (docs/spec.md §4.7).

In this project's layout the id is ``_id``. Message content and every metadata dict are JSON *text*, so
storage never rewrites what it is given (BSON field names cannot hold ``.``-, ``$``- or NUL-keys; text
can). Timestamps are BSON dates (milliseconds, UTC), ids strings, so ``sort([("created_at", 1), ("_id",
1)])`` is the spec's ``(created_at, id)`` order (strings compare by binary UTF-8, which is code-point order).

Indexes (this project's layout): messages on ``(thread_id, created_at, _id)`` (pages, and the two cursor
queries of each include window, docs/spec.md §4.3 step 5) and ``(resource_id, created_at, _id)``; threads
on ``(resource_id, created_at, _id)`` and ``(resource_id, updated_at, _id)``.

Atomicity (docs/spec.md §4.5). On a replica set or sharded cluster every write is one multi-document
transaction (``session.with_transaction``, retried on transient errors when the work is idempotent; a
clone never is). FerretDB v1 has no transactions (``startTransaction`` is an unknown field) and neither
has a standalone ``mongod``; there each unit of work runs as its ordered sequence of single-document
writes. The template makes every check before the first write, and every write is an idempotent upsert
or delete by id, so a refused call writes nothing and a failed call that is retried converges to the same
state. Read-modify-writes of a thread, resource or message (``updated_at`` bumps, ``update_thread``,
``update_resource``, ``update_messages``) hold a lock document in ``<prefix>locks``
(:meth:`MongoDBStorage._lock`), so bumps stay strictly increasing and no concurrent update is lost.
What is lost without transactions: a reader may see a batch half written, and a crash mid-batch leaves
the writes made so far.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final, TypeVar

from mastra_memory.errors import StorageError, error_id
from mastra_memory.messages import MastraDBMessage
from mastra_memory.metadata_limits import is_unicode
from mastra_memory.storage import BackendErrors, codec
from mastra_memory.storage.hooks import Candidate, Side, Work
from mastra_memory.storage.records import ListMessagesQuery, ListThreadsQuery, Resource, Thread
from mastra_memory.timestamps import utc_now
from pymongo import ASCENDING, DESCENDING, ReplaceOne, UpdateOne
from pymongo.asynchronous.client_session import AsyncClientSession
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import DuplicateKeyError, PyMongoError

from .connection import Connection, is_transient
from .documents import LAYOUTS, DocumentLayout, check_database
from .om_documents import MongoOMDocuments
from .settings import MongoDBSettings

__all__ = ["MongoDBStorage"]

T = TypeVar("T")
Document = dict[str, Any]

STORE: Final = "MONGODB"
_TEXT_LIMIT: Final = "cannot contain unpaired surrogates (BSON strings are UTF-8)"


def _in(ids: Sequence[str]) -> Any:
    return ids[0] if len(ids) == 1 else {"$in": list(ids)}


@dataclass(slots=True)
class _Tx:
    """What the hooks receive: the collections, the session of the transaction (``None`` without one),
    and the record locks this unit holds (servers without transactions, see :meth:`MongoDBStorage._lock`)."""

    threads: AsyncCollection[Document]
    messages: AsyncCollection[Document]
    resources: AsyncCollection[Document]
    locks: AsyncCollection[Document]
    session: AsyncClientSession | None
    held: list[str] = field(default_factory=list)


#: How long a record lock may be held before another writer may take it over (a crashed holder).
_LEASE: Final = timedelta(seconds=60)


class MongoDBStorage(MongoOMDocuments):
    """Threads, messages and resources in MongoDB (any server; FerretDB too).

    Args:
        settings: :class:`MongoDBSettings`, a connection string, or ``None`` to read the environment.
    """

    store_name = STORE

    def __init__(self, settings: MongoDBSettings | str | None = None) -> None:
        self.settings = MongoDBSettings.given(settings)
        self._conn = Connection(self.settings)
        self._layout: DocumentLayout = LAYOUTS[self.settings.layout]
        self._ready = False

    # -- plumbing

    async def _collections(self, session: AsyncClientSession | None) -> _Tx:
        db = await self._conn.database()
        prefix = self.settings.collection_prefix
        # In Mastra's database the lock documents get a collection under this project's name, which
        # Mastra never reads (they exist only while a write holds them).
        locks = "mastra_memory_locks" if self._layout.name == "mastra" else f"{prefix}locks"
        tx = _Tx(
            db[f"{prefix}threads"],
            db[f"{prefix}messages"],
            db[f"{prefix}resources"],
            db[locks],
            session,
        )
        if not self._ready:
            # Read-only, before anything is created: the other layout's collections are refused unchanged.
            await check_database(db, prefix, self._layout.name, self._conn.where)
            collections = {"threads": tx.threads, "messages": tx.messages, "resources": tx.resources}
            for suffix, keys, unique in self._layout.indexes:
                if unique:
                    await collections[suffix].create_index(list(keys), unique=True)
                else:
                    await collections[suffix].create_index(list(keys))
            self._ready = True
        return tx

    async def _transaction(self, operation: str, work: Work[T], *, write: bool, idempotent: bool = True) -> T:
        tx = await self._collections(None)
        if not (write and self._conn.info.transactions):
            try:
                return await work(tx)
            finally:
                if tx.held:
                    await asyncio.shield(self._unlock(tx))
        async with self._conn.client.start_session() as session:
            bound = _Tx(tx.threads, tx.messages, tx.resources, tx.locks, session)
            if idempotent:

                async def callback(s: AsyncClientSession) -> T:
                    return await work(bound)

                return await session.with_transaction(callback)
            await session.start_transaction()
            try:
                result = await work(bound)
            except BaseException:
                await session.abort_transaction()
                raise
            await session.commit_transaction()
            return result

    def _om_mastra(self) -> bool:
        return self._layout.name == "mastra"

    def _om_collection_name(self) -> str:
        # Mastra's collection has a fixed name, as its other collections do (documents.MASTRA_PREFIX).
        if self._om_mastra():
            return "mastra_observational_memory"
        return f"{self.settings.collection_prefix}observational_memory"

    async def _om_lock(self, tx: Any, om_id: str) -> None:
        await self._lock(tx, f"om:{om_id}")

    def _backend_errors(self) -> BackendErrors:
        return BackendErrors(
            database="MongoDB",
            types=(PyMongoError,),
            where=self._conn.where,
            is_connection_lost=is_transient,
            lost="did not answer in time or closed the connection",
            connection_hint="check that the server is running, the connection string is right and the "
            "timeouts (server_selection_timeout_ms, timeout_ms) fit",
        )

    async def _lock(self, tx: _Tx, key: str) -> None:
        """Hold a lock on one record until the unit ends, where the server has no transactions.

        The lock is a document ``{_id: key}`` in ``<prefix>locks``: inserting it succeeds for one writer
        only (the ``_id`` index is unique; FerretDB's conditional updates are not atomic, its inserts
        are). Others wait (up to ``timeout_ms``); a lock older than its lease is taken over.
        """
        if tx.session is not None or key in tx.held:
            return
        deadline = time.monotonic() + self.settings.timeout_ms / 1000
        delay = 0.002
        while True:
            now = utc_now()
            try:
                await tx.locks.insert_one({"_id": key, "expires_at": now + _LEASE})
                tx.held.append(key)
                return
            except DuplicateKeyError:
                await tx.locks.delete_one({"_id": key, "expires_at": {"$lt": now}})
            if time.monotonic() > deadline:
                raise StorageError(
                    f"{key} stayed locked by another writer for {self.settings.timeout_ms} ms; "
                    "retry the call",
                    id=error_id("STORAGE", STORE, "LOCK", "TIMEOUT"),
                    details={"where": self._conn.where, "key": key},
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.05)

    async def _unlock(self, tx: _Tx) -> None:
        held, tx.held = tx.held, []
        await tx.locks.delete_many({"_id": {"$in": held}})

    async def close(self) -> None:
        """Close the client. A closed storage reopens on next use."""
        await self._conn.close()
        self._ready = False

    def _text_problem(self, text: str) -> str | None:
        """BSON strings are UTF-8: no unpaired surrogates."""
        return None if is_unicode(text) else _TEXT_LIMIT

    # -- threads

    async def _load_threads(
        self, tx: _Tx, thread_ids: Sequence[str], *, lock: bool = False
    ) -> dict[str, Thread]:
        ids = self._existing(thread_ids)
        if not ids:
            return {}
        if lock:
            for thread_id in sorted(ids):  # one lock order for every writer
                await self._lock(tx, f"thread:{thread_id}")
        layout = self._layout
        cursor = tx.threads.find({layout.key: _in(ids)}, session=tx.session)
        return {doc[layout.key]: layout.thread(doc) async for doc in cursor}

    async def _upsert(self, collection: AsyncCollection[Document], tx: _Tx, document: Document) -> None:
        """Write one record by id: replaced whole in this project's layout; in Mastra's, its fields set on
        the document Mastra made (which keeps its ``_id`` and any field Mastra adds)."""
        key = self._layout.key
        if key == "_id":
            await collection.replace_one({key: document[key]}, document, upsert=True, session=tx.session)
        else:
            await collection.update_one(
                {key: document[key]}, {"$set": document}, upsert=True, session=tx.session
            )

    async def _write_thread(self, tx: _Tx, thread: Thread) -> None:
        await self._upsert(tx.threads, tx, self._layout.thread_document(thread))

    async def _delete_thread(self, tx: _Tx, thread_id: str) -> None:
        await tx.messages.delete_many({"thread_id": thread_id}, session=tx.session)
        await tx.threads.delete_one({self._layout.key: thread_id}, session=tx.session)

    def _thread_where(self, q: ListThreadsQuery) -> Document:
        return {} if q.resource_id is None else {self._layout.resource_id: q.resource_id}

    async def _count_threads(self, tx: _Tx, query: ListThreadsQuery) -> int:
        return await tx.threads.count_documents(self._thread_where(query), session=tx.session)

    async def _find_threads(
        self, tx: _Tx, query: ListThreadsQuery, offset: int, limit: int | None
    ) -> list[Thread]:
        direction = ASCENDING if query.order.direction == "ASC" else DESCENDING
        layout = self._layout
        field = layout.created_at if query.order.field == "created_at" else layout.updated_at
        cursor = (
            tx.threads.find(self._thread_where(query), session=tx.session)
            .sort([(field, direction), (layout.key, direction)])
            .skip(offset)
        )
        if limit is not None:
            if limit == 0:
                return []
            cursor = cursor.limit(limit)
        return [layout.thread(doc) async for doc in cursor]

    # -- messages: reads

    def _base_where(self, q: ListMessagesQuery) -> Document:
        """The §4.3 step 3 predicate without the metadata filter."""
        where: Document = {}
        if q.thread_ids:
            threads = self._existing(q.thread_ids)
            where["thread_id"] = _in(threads) if threads else {"$in": []}
        if q.resource_id is not None:
            where[self._layout.resource_id] = q.resource_id
        bounds: Document = {}
        for comparison, stamp in q.created_at_bounds:
            bounds[{">": "$gt", ">=": "$gte", "<": "$lt", "<=": "$lte"}[comparison]] = stamp
        if bounds:
            where[self._layout.created_at] = bounds
        return where

    def _order(self, q: ListMessagesQuery) -> list[tuple[str, int]]:
        return self._sort(ASCENDING if q.order.direction == "ASC" else DESCENDING)

    def _sort(self, direction: int) -> list[tuple[str, int]]:
        """The spec's ``(created_at, id)`` order (docs/spec.md §4.3); ids compare as UTF-8 bytes, which is
        code-point order."""
        return [(self._layout.created_at, direction), (self._layout.key, direction)]

    def _message(self, doc: Document) -> MastraDBMessage:
        return codec.message_from_row(self._layout.message_row(doc))

    async def _count_messages(self, tx: _Tx, query: ListMessagesQuery) -> int:
        return await tx.messages.count_documents(self._base_where(query), session=tx.session)

    async def _find_messages(
        self, tx: _Tx, query: ListMessagesQuery, offset: int, limit: int | None
    ) -> list[MastraDBMessage]:
        if limit == 0:
            return []
        cursor = (
            tx.messages.find(self._base_where(query), {"metadata": 0}, session=tx.session)
            .sort(self._order(query))
            .skip(offset)
        )
        if limit is not None:
            cursor = cursor.limit(limit)
        return [self._message(doc) async for doc in cursor]

    async def _metadata_candidates(self, tx: _Tx, query: ListMessagesQuery) -> list[Candidate]:
        layout = self._layout
        if layout.message_metadata_field:
            # The metadata field holds content.metadata alone, so candidates never load whole messages.
            cursor = tx.messages.find(
                self._base_where(query), {"_id": 1, "metadata": 1}, session=tx.session
            ).sort(self._order(query))
            return [(doc["_id"], layout.loads(doc.get("metadata"))) async for doc in cursor]
        # Mastra's messages keep their metadata inside the content only.
        cursor = tx.messages.find(
            self._base_where(query), {layout.key: 1, "content": 1}, session=tx.session
        ).sort(self._order(query))
        candidates: list[Candidate] = []
        async for doc in cursor:
            content = layout.loads(doc["content"])
            candidates.append(
                (doc[layout.key], content.get("metadata") if isinstance(content, dict) else None)
            )
        return candidates

    async def _messages_by_id(
        self, tx: _Tx, message_ids: Sequence[str], *, lock: bool = False
    ) -> list[MastraDBMessage]:
        ids = self._existing(message_ids)
        if not ids:
            return []
        if lock:
            # update_messages merges content into what it read here: without transactions a concurrent
            # merge of the same message would be lost (docs/spec.md §4.5), so hold each one's lock.
            for message_id in sorted(ids):  # one lock order for every writer
                await self._lock(tx, f"message:{message_id}")
        cursor = tx.messages.find({self._layout.key: _in(ids)}, {"metadata": 0}, session=tx.session).sort(
            self._sort(ASCENDING)
        )
        return [self._message(doc) async for doc in cursor]

    async def _neighbours(
        self, tx: _Tx, anchor: MastraDBMessage, side: Side, limit: int, resource_id: str | None
    ) -> list[MastraDBMessage]:
        before = side == "before"
        comparison = "$lt" if before else "$gt"
        direction = DESCENDING if before else ASCENDING
        created, key = self._layout.created_at, self._layout.key
        where: Document = {
            "thread_id": anchor.thread_id,
            "$or": [
                {created: {comparison: anchor.created_at}},
                {created: anchor.created_at, key: {comparison: anchor.id}},
            ],
        }
        if resource_id is not None:
            where[self._layout.resource_id] = resource_id
        # One cursor query on the (thread_id, created_at[, id]) index.
        cursor = (
            tx.messages.find(where, {"metadata": 0}, session=tx.session)
            .sort(self._sort(direction))
            .limit(limit)
        )
        return [self._message(doc) async for doc in cursor]

    # -- messages: writes

    async def _write_messages(self, tx: _Tx, messages: Sequence[tuple[MastraDBMessage, Any]]) -> None:
        if not messages:
            return
        layout = self._layout
        requests: list[ReplaceOne[Document] | UpdateOne] = []
        for message, content in messages:
            document: Document = {
                layout.key: message.id,
                "thread_id": message.thread_id,
                layout.resource_id: message.resource_id,
                "role": message.role,
                "type": message.type,
                "content": content,
                layout.created_at: message.created_at,
            }
            if layout.message_metadata_field:
                metadata = message.content.metadata
                document["metadata"] = codec.json_text_or_none(metadata, f"metadata of message {message.id}")
                requests.append(ReplaceOne({"_id": message.id}, document, upsert=True))
            else:
                # Unlike Mastra's saveMessages, a re-save moves createdAt too: save replaces the whole
                # record here (docs/spec.md §4.5).
                requests.append(UpdateOne({layout.key: message.id}, {"$set": document}, upsert=True))
        # Ordered: a repeated id keeps the last, and a retry after a failure converges.
        await tx.messages.bulk_write(requests, ordered=True, session=tx.session)

    async def _delete_messages(self, tx: _Tx, message_ids: Sequence[str]) -> set[str]:
        ids = list(message_ids)
        key = self._layout.key
        owners = {
            doc["thread_id"]
            async for doc in tx.messages.find({key: {"$in": ids}}, {"thread_id": 1}, session=tx.session)
        }
        await tx.messages.delete_many({key: {"$in": ids}}, session=tx.session)
        return owners

    # -- resources

    async def _load_resource(self, tx: _Tx, resource_id: str, *, lock: bool = False) -> Resource | None:
        if lock:
            await self._lock(tx, f"resource:{resource_id}")
        doc = await tx.resources.find_one({self._layout.key: resource_id}, session=tx.session)
        return None if doc is None else self._layout.resource(doc)

    async def _write_resource(self, tx: _Tx, resource: Resource) -> None:
        await self._upsert(tx.resources, tx, self._layout.resource_document(resource))
