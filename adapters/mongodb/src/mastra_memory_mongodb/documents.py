"""The two document layouts :class:`~.storage.MongoDBStorage` can work on, and the read-only check of which
one a database holds (docs/spec.md §4.7).

* ``mastra-memory`` (the default): this project's own documents -- the record's id as ``_id``, fields
  ``resource_id``, ``created_at``, ``updated_at``, ``working_memory``, every metadata dict as JSON *text*
  (BSON field names cannot hold every key), a ``metadata`` field on messages for filtered listing.
* ``mastra``: the collections and documents ``@mastra/mongodb`` 1.18.9 writes (read from what its
  ``MongoDBStore`` wrote to FerretDB; tests/interop/test_mongo_storage.py compares them), so that a Mastra
  app and a Python service share one database. ``_id`` is an ObjectId the server assigns and the record's
  id is the field ``id`` (a unique index); fields ``resourceId``, ``createdAt``, ``updatedAt``,
  ``workingMemory`` (messages keep ``thread_id``); dates are BSON dates; thread and resource metadata are
  BSON documents; message content is JSON text; no metadata field on messages. The indexes are Mastra's,
  with Mastra's names, so neither side's index creation changes what the other made.

Both name their collections ``mastra_threads``, ``mastra_messages`` and ``mastra_resources`` (with the
default prefix), so a storage opened on the other layout would find nothing it can read and add its indexes
to the other side's collections. :func:`check_database` tells the layout from the collections' indexes and
one document of each before the storage creates anything, and raises :class:`StorageLayoutError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from mastra_memory.errors import ValidationError
from mastra_memory.filters.numbers import in_int64
from mastra_memory.storage import codec
from mastra_memory.storage.layouts import (
    MASTRA_ONLY_TABLE,
    Layout,
    StorageLayoutError,
    layout_of_fields,
    layout_setting,
    wrong_layout,
)
from mastra_memory.storage.records import Resource, Thread
from mastra_memory.vector.metadata import first_problem
from pymongo.asynchronous.database import AsyncDatabase

__all__ = ["LAYOUTS", "DocumentLayout", "Layout", "StorageLayoutError", "check_database", "database_layout"]

Document = dict[str, Any]

#: The collection names Mastra's MongoDBStore uses (fixed; it has no prefix setting).
MASTRA_PREFIX: Final = "mastra_"

#: What each layout is, for error messages.
DESCRIPTIONS: Final[dict[Layout, str]] = {
    "mastra-memory": "mastra-memory's own MongoDB layout (the id as _id, fields resource_id, created_at, "
    "working_memory, metadata as JSON text)",
    "mastra": "Mastra's MongoDB layout (@mastra/mongodb: an id field with a unique index, fields "
    "resourceId, createdAt, workingMemory, metadata as documents)",
}


def _bson_problem(value: Any, path: str) -> str | None:
    if isinstance(value, str) and "\x00" in value:  # FerretDB's strings cannot hold it
        return f"{path}: strings containing U+0000"
    if isinstance(value, int) and not isinstance(value, bool) and not in_int64(value):
        return f"{path}: the integer {value} is outside BSON's signed 64-bit range"
    return None


def _key_problem(key: str, path: str) -> str | None:
    if "\x00" in key or key.startswith("$") or "." in key:
        return f"{path} (key): field names starting with '$' or holding '.' or U+0000"
    return None


@dataclass(frozen=True)
class DocumentLayout:
    """The field names and encodings that differ between the layouts; the storage's queries use these."""

    name: Layout
    #: The field holding the record's id (``_id`` in this project's layout, ``id`` in Mastra's).
    key: str
    resource_id: str
    created_at: str
    updated_at: str
    working_memory: str
    #: Metadata as JSON text (this project) or as a BSON document (Mastra).
    metadata_as_text: bool
    #: Whether messages carry ``content.metadata`` in a field of their own.
    message_metadata_field: bool
    #: The indexes the storage creates: ``(collection suffix, keys, unique)``.
    indexes: tuple[tuple[str, tuple[tuple[str, int], ...], bool], ...]

    # -- writing

    def metadata(self, value: Mapping[str, Any] | None, what: str) -> Any:
        """Metadata as stored: JSON text, or a BSON document after refusing what BSON cannot hold."""
        if self.metadata_as_text:
            return codec.json_text_or_none(value, what)
        if value is None:
            return None
        problem = first_problem(value, _bson_problem, _key_problem)
        if problem is not None:
            raise ValidationError(
                f"{what} cannot be stored in Mastra's MongoDB layout (a BSON document): {problem}; "
                "rename the key or change the value (this project's own layout stores it as JSON text)"
            )
        return dict(value)

    def thread_document(self, thread: Thread) -> Document:
        return {
            self.key: thread.id,
            self.resource_id: thread.resource_id,
            "title": thread.title,
            "metadata": self.metadata(thread.metadata, f"metadata of thread {thread.id}"),
            self.created_at: thread.created_at,
            self.updated_at: thread.updated_at,
        }

    def resource_document(self, resource: Resource) -> Document:
        return {
            self.key: resource.id,
            self.working_memory: resource.working_memory,
            "metadata": self.metadata(resource.metadata, f"metadata of resource {resource.id}"),
            self.created_at: resource.created_at,
            self.updated_at: resource.updated_at,
        }

    # -- reading

    def loads(self, stored: Any) -> Any:
        """Stored metadata as a dict (Mastra reads a string as JSON text too, and so does this)."""
        if stored is None:
            return None
        return json.loads(stored) if isinstance(stored, str) else stored

    def thread(self, doc: Document) -> Thread:
        return Thread(
            id=doc[self.key],
            resource_id=doc[self.resource_id],
            title=doc.get("title") or "",
            metadata=self.loads(doc.get("metadata")),
            created_at=doc[self.created_at],
            updated_at=doc.get(self.updated_at) or doc[self.created_at],
        )

    def message_row(self, doc: Document) -> tuple[Any, ...]:
        """The message's row in ``codec.MESSAGE_COLUMNS`` order, content as JSON text."""
        content = doc["content"]
        if not isinstance(content, str):  # Mastra reads a content document as well
            content = json.dumps(content)
        return (
            doc[self.key],
            doc["thread_id"],
            doc.get(self.resource_id),
            doc["role"],
            doc.get("type") or "v2",
            content,
            doc[self.created_at],
        )

    def resource(self, doc: Document) -> Resource:
        return Resource(
            id=doc[self.key],
            working_memory=doc.get(self.working_memory),
            metadata=self.loads(doc.get("metadata")),
            created_at=doc[self.created_at],
            updated_at=doc.get(self.updated_at) or doc[self.created_at],
        )


OWN: Final = DocumentLayout(
    name="mastra-memory",
    key="_id",
    resource_id="resource_id",
    created_at="created_at",
    updated_at="updated_at",
    working_memory="working_memory",
    metadata_as_text=True,
    message_metadata_field=True,
    indexes=(
        ("messages", (("thread_id", 1), ("created_at", 1), ("_id", 1)), False),
        ("messages", (("resource_id", 1), ("created_at", 1), ("_id", 1)), False),
        ("threads", (("resource_id", 1), ("created_at", 1), ("_id", 1)), False),
        ("threads", (("resource_id", 1), ("updated_at", 1), ("_id", 1)), False),
    ),
)

MASTRA: Final = DocumentLayout(
    name="mastra",
    key="id",
    resource_id="resourceId",
    created_at="createdAt",
    updated_at="updatedAt",
    working_memory="workingMemory",
    metadata_as_text=False,
    message_metadata_field=False,
    # @mastra/mongodb's getDefaultIndexDefinitions for these three collections, same keys and options, so
    # the names (id_1, resourceId_1_createdAt_-1, ...) are the ones its init creates.
    indexes=(
        ("threads", (("id", 1),), True),
        ("threads", (("resourceId", 1), ("createdAt", -1)), False),
        ("threads", (("resourceId", 1), ("updatedAt", -1)), False),
        ("messages", (("id", 1),), True),
        ("messages", (("thread_id", 1), ("createdAt", 1)), False),
        ("messages", (("resourceId", 1), ("createdAt", 1)), False),
        ("resources", (("id", 1),), True),
    ),
)

LAYOUTS: Final[dict[Layout, DocumentLayout]] = {"mastra-memory": OWN, "mastra": MASTRA}


async def database_layout(db: AsyncDatabase[Document], prefix: str) -> Layout | None:
    """The layout of the memory collections ``<prefix>threads|messages|resources`` in ``db``: ``None``
    when they are absent or empty and tell nothing. Reads the collection list, indexes and one document
    of each; writes nothing."""
    names = set(await db.list_collection_names())
    for suffix in ("threads", "messages", "resources"):
        name = f"{prefix}{suffix}"
        if name not in names:
            continue
        collection = db[name]
        fields: set[str] = set()
        async for index in await collection.list_indexes():
            fields.update(index["key"].keys())
        doc = await collection.find_one({})
        if doc is not None:
            fields.update(doc.keys())
        found = layout_of_fields(fields)
        if found is not None:
            return found
    # Mastra's init creates every collection, memory or not (the workflow one only Mastra's); this
    # project's collections under Mastra's names there would be Mastra's next read. Another prefix does
    # not meet Mastra's collections.
    if prefix == MASTRA_PREFIX and MASTRA_ONLY_TABLE in names:
        return "mastra"
    return None


async def check_database(db: AsyncDatabase[Document], prefix: str, expected: Layout, where: str) -> None:
    """Raise :class:`StorageLayoutError` (id ``MASTRA_STORAGE_MONGODB_INIT_WRONG_LAYOUT``) when the database
    holds the other layout; a new or empty one passes. Run before the storage creates anything."""
    found = await database_layout(db, prefix)
    if found is None or found == expected:
        return
    raise wrong_layout(
        "MONGODB",
        f"database {db.name!r} at {where}",
        found,
        expected,
        descriptions=DESCRIPTIONS,
        open_with=layout_setting("MongoDBSettings", "MONGODB", found),
        convert="convert it: read every thread, message and resource with a storage of that layout and save "
        "them with one of this layout into another database",
        details={"database": db.name, "where": where},
    )
