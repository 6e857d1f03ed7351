"""The ``MemoryStorage`` contract (docs/spec.md §4): records, query models, argument checks, the §4.6
metadata filter, and the template every storage is built on.

* :mod:`.records` — ``Thread``, ``Resource``, the query models and pages (§4.1, §4.3, §4.4);
* :mod:`.arguments` — the argument checks, raised before any I/O with the same messages everywhere;
* :mod:`.metadata_filter` — the storage-level metadata filter: :func:`validate_metadata_filter` and
  :func:`metadata_matches`, the exact rule every storage reproduces (§4.6);
* :mod:`.codec` — plain data as JSON text, for storages that keep documents as text;
* :mod:`.hooks` and :mod:`.base` — :class:`MemoryStorage`, whose public methods validate, merge updates,
  clone threads and assemble include windows and pages once, over a backend's ``_`` hooks.

A new storage subclasses :class:`MemoryStorage`, sets ``store_name`` and implements the hooks listed in
:class:`StorageHooks`; the conformance kit's storage domain then checks it against the spec.
"""

from __future__ import annotations

from ..messages import MastraDBMessage, MessageContentV2, MessageInput
from .arguments import (
    DEFAULT_MESSAGES_PER_PAGE,
    DEFAULT_THREADS_PER_PAGE,
    validate_clone_args,
    validate_list_messages_args,
    validate_list_messages_by_resource_args,
    validate_list_threads_args,
    validate_message_ids,
    validate_resource_id,
)
from .base import MemoryStorage, storage_capabilities
from .hooks import Candidate, Side, StorageHooks, Work
from .metadata_filter import MetadataScalar, metadata_matches, validate_metadata_filter
from .records import (
    CloneArgs,
    CloneMessageFilter,
    CloneMessageFilterInput,
    CloneResult,
    DateRange,
    IncludeInput,
    IncludeItem,
    ListMessagesQuery,
    ListThreadsQuery,
    MessageFilter,
    MessageFilterInput,
    MessagePage,
    MessageUpdate,
    MessageUpdateInput,
    OrderBy,
    OrderByInput,
    PerPage,
    Resource,
    ResourceInput,
    Thread,
    ThreadFilter,
    ThreadFilterInput,
    ThreadInput,
    ThreadOrderBy,
    ThreadOrderByInput,
    ThreadPage,
    message_sort_key,
)

__all__ = [
    "DEFAULT_MESSAGES_PER_PAGE",
    "DEFAULT_THREADS_PER_PAGE",
    "Candidate",
    "CloneArgs",
    "CloneMessageFilter",
    "CloneMessageFilterInput",
    "CloneResult",
    "DateRange",
    "IncludeInput",
    "IncludeItem",
    "ListMessagesQuery",
    "ListThreadsQuery",
    "MastraDBMessage",
    "MemoryStorage",
    "MessageContentV2",
    "MessageFilter",
    "MessageFilterInput",
    "MessageInput",
    "MessagePage",
    "MessageUpdate",
    "MessageUpdateInput",
    "MetadataScalar",
    "OrderBy",
    "OrderByInput",
    "PerPage",
    "Resource",
    "ResourceInput",
    "Side",
    "StorageHooks",
    "Thread",
    "ThreadFilter",
    "ThreadFilterInput",
    "ThreadInput",
    "ThreadOrderBy",
    "ThreadOrderByInput",
    "ThreadPage",
    "Work",
    "message_sort_key",
    "metadata_matches",
    "storage_capabilities",
    "validate_clone_args",
    "validate_list_messages_args",
    "validate_list_messages_by_resource_args",
    "validate_list_threads_args",
    "validate_message_ids",
    "validate_metadata_filter",
    "validate_resource_id",
]
