"""Observational memory in MongoDB: one document per generation, and the template's five OM hooks over
them (docs/spec.md §4.8).

* ``mastra-memory``: collection ``<prefix>observational_memory``; the record's id as ``_id``, fields named
  as the record's, config, metadata, chunks and id lists as JSON *text* (as this layout keeps every
  document: BSON field names cannot hold every key), dates as BSON dates.
* ``mastra``: collection ``mastra_observational_memory`` as ``@mastra/mongodb`` 1.18.9 writes it: an
  ObjectId ``_id`` and the id in ``id`` (unique index), camelCase fields, config, metadata, chunks and id
  lists as BSON documents and arrays, and Mastra's index ``{lookupKey: 1, generationCount: -1}``.

Every OM write holds the record's lock document first (:meth:`~.storage.MongoDBStorage._lock`, a no-op
inside a transaction): FerretDB's conditional updates are not atomic, so the lock is what makes a
compare-and-set one winner there; on a replica set the transaction and the filtered ``update_one`` are.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from mastra_memory.storage import OM_COLUMNS, MemoryStorage, ObservationalMemoryRecord, OMKey, codec
from mastra_memory.storage.observational_hooks import GenerationsQuery
from mastra_memory.storage.observational_records import OM_KINDS, om_from_values
from pymongo import ASCENDING, DESCENDING
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import DuplicateKeyError

__all__ = ["MongoOMDocuments"]

Document = dict[str, Any]

_MASTRA_NAMES: Final = {c.field: c.mastra for c in OM_COLUMNS}
_BOUND_OPERATORS: Final = {">=": "$gte", "<=": "$lte"}


class MongoOMDocuments(MemoryStorage):
    """The OM hooks as MongoDB queries; :class:`~.storage.MongoDBStorage` gives the collection, the
    layout and the lock."""

    supports_observational_memory = True
    _om_indexed: bool = False

    def _om_mastra(self) -> bool:
        raise NotImplementedError

    def _om_collection_name(self) -> str:
        raise NotImplementedError

    async def _om_lock(self, tx: Any, om_id: str) -> None:
        raise NotImplementedError

    # -- documents

    def _om_name(self, field: str) -> str:
        if field == "id":
            return "id" if self._om_mastra() else "_id"
        return _MASTRA_NAMES[field] if self._om_mastra() else field

    def _om_value(self, field: str, value: Any) -> Any:
        if OM_KINDS[field] == "json" and value is not None and not self._om_mastra():
            return codec.json_text(value, field)
        return value

    def _om_document(self, values: Mapping[str, Any]) -> Document:
        return {self._om_name(f): self._om_value(f, v) for f, v in values.items()}

    def _om_record(self, document: Document) -> ObservationalMemoryRecord:
        values: dict[str, Any] = {}
        for column in OM_COLUMNS:
            value = document.get(self._om_name(column.field))
            if column.kind == "json" and isinstance(value, str):
                value = json.loads(value)
            elif isinstance(value, datetime) and value.tzinfo is None:
                value = value.replace(tzinfo=UTC)
            values[column.field] = value
        return om_from_values(values)

    async def _om_collection(self, tx: Any) -> AsyncCollection[Document]:
        collection: AsyncCollection[Document] = tx.threads.database[self._om_collection_name()]
        if not self._om_indexed:
            if self._om_mastra():
                await collection.create_index([("id", ASCENDING)], unique=True)
                await collection.create_index([("lookupKey", ASCENDING), ("generationCount", DESCENDING)])
            else:
                await collection.create_index(
                    [("lookup_key", ASCENDING), ("resource_id", ASCENDING), ("generation_count", DESCENDING)]
                )
            self._om_indexed = True
        return collection

    # -- hooks

    async def _om_load(self, tx: Any, om_id: str, *, lock: bool = False) -> ObservationalMemoryRecord | None:
        if not self._existing([om_id]):
            return None
        if lock:
            await self._om_lock(tx, om_id)
        collection = await self._om_collection(tx)
        document = await collection.find_one({self._om_name("id"): om_id}, session=tx.session)
        return None if document is None else self._om_record(document)

    async def _om_find_generations(self, tx: Any, query: GenerationsQuery) -> list[ObservationalMemoryRecord]:
        name = self._om_name
        find: Document = {
            name("lookup_key"): query.key.lookup_key,
            name("resource_id"): query.key.resource_id,
        }
        if query.created:
            find[name("created_at")] = {_BOUND_OPERATORS[op]: bound for op, bound in query.created}
        collection = await self._om_collection(tx)
        cursor = (
            collection.find(find, session=tx.session)
            .sort([(name("generation_count"), DESCENDING), (name("created_at"), DESCENDING)])
            .skip(query.offset)
        )
        if query.limit is not None:
            cursor = cursor.limit(query.limit)
        return [self._om_record(document) async for document in cursor]

    async def _om_insert(self, tx: Any, values: Mapping[str, Any]) -> bool:
        collection = await self._om_collection(tx)
        try:
            await collection.insert_one(self._om_document(values), session=tx.session)
        except DuplicateKeyError:  # the id's unique index (``_id``, or Mastra's ``id_1``)
            return False
        return True

    async def _om_update(
        self, tx: Any, om_id: str, changes: Mapping[str, Any], expect: Mapping[str, Any]
    ) -> bool:
        if not self._existing([om_id]):
            return False
        await self._om_lock(tx, om_id)
        collection = await self._om_collection(tx)
        query = {self._om_name("id"): om_id, **self._om_document(expect)}
        result = await collection.update_one(query, {"$set": self._om_document(changes)}, session=tx.session)
        return result.matched_count > 0

    async def _om_delete(self, tx: Any, key: OMKey) -> None:
        if len(self._existing([key.lookup_key, key.resource_id])) < 2:
            return
        collection = await self._om_collection(tx)
        name = self._om_name
        await collection.delete_many(
            {name("lookup_key"): key.lookup_key, name("resource_id"): key.resource_id}, session=tx.session
        )
