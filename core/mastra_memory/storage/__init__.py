"""The ``MemoryStorage`` contract (docs/spec.md §4): records, query models, argument checks, the §4.6
metadata filter, and the template every storage is built on.

* :mod:`.records` — ``Thread``, ``Resource``, the query models and pages (§4.1, §4.3, §4.4);
* :mod:`.arguments` — the argument checks, raised before any I/O with the same messages everywhere;
* :mod:`.metadata_filter` — the storage-level metadata filter: :func:`validate_metadata_filter` and
  :func:`metadata_matches`, the exact rule every storage reproduces (§4.6);
* :mod:`.codec` — plain data as JSON text, for storages that keep documents as text;
* :mod:`.hooks` — :class:`StorageHooks`, what a backend implements, and the steps the template takes
  over it; :mod:`.failures` — :class:`BackendErrors`, how a backend's own exceptions are reported;
* :mod:`.base` — :class:`MemoryStorage`, composed of sibling parts over the hooks class that validate,
  merge updates, clone threads and assemble include windows and pages once: :mod:`.threads`,
  :mod:`.resources`, :mod:`.clone`, :mod:`.pages`, :mod:`.writes`, :mod:`.thread_ops` (with
  :mod:`.patches` and :mod:`.archive`, the merge rules and the archive mark they share) and
  :mod:`.observational` (observational memory, §4.8, over the records of :mod:`.observational_records`).

A new storage subclasses :class:`MemoryStorage`, sets ``store_name``, implements the hooks listed in
:class:`StorageHooks` and declares its exceptions in ``_backend_errors``; the conformance kit's storage
domain then checks it against the spec.
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
from .failures import BackendErrors
from .hooks import Candidate, Side, StorageHooks, Work
from .metadata_filter import MetadataScalar, metadata_matches, validate_metadata_filter
from .observational import (
    DEFAULT_HISTORY_LIMIT,
    ObservationalMemoryNotFoundError,
    deep_merge,
    plan_activation,
)
from .observational_records import (
    OM_COLUMNS,
    BufferedObservationChunk,
    BufferedObservationChunkInput,
    CreateObservationalMemoryInput,
    CreateReflectionGenerationInput,
    ObservationalMemoryHistoryOptions,
    ObservationalMemoryRecord,
    ObservationalMemoryScope,
    OMColumn,
    OMKey,
    SwapBufferedReflectionToActiveInput,
    SwapBufferedToActiveInput,
    SwapBufferedToActiveResult,
    UpdateActiveObservationsInput,
    UpdateBufferedObservationsInput,
    UpdateBufferedReflectionInput,
    UpdateObservationalMemoryConfigInput,
    om_from_values,
    om_values,
)
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
    "DEFAULT_HISTORY_LIMIT",
    "DEFAULT_MESSAGES_PER_PAGE",
    "DEFAULT_THREADS_PER_PAGE",
    "OM_COLUMNS",
    "BackendErrors",
    "BufferedObservationChunk",
    "BufferedObservationChunkInput",
    "Candidate",
    "CloneArgs",
    "CloneMessageFilter",
    "CloneMessageFilterInput",
    "CloneResult",
    "CreateObservationalMemoryInput",
    "CreateReflectionGenerationInput",
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
    "OMColumn",
    "OMKey",
    "ObservationalMemoryHistoryOptions",
    "ObservationalMemoryNotFoundError",
    "ObservationalMemoryRecord",
    "ObservationalMemoryScope",
    "OrderBy",
    "OrderByInput",
    "PerPage",
    "Resource",
    "ResourceInput",
    "Side",
    "StorageHooks",
    "SwapBufferedReflectionToActiveInput",
    "SwapBufferedToActiveInput",
    "SwapBufferedToActiveResult",
    "Thread",
    "ThreadFilter",
    "ThreadFilterInput",
    "ThreadInput",
    "ThreadOrderBy",
    "ThreadOrderByInput",
    "ThreadPage",
    "UpdateActiveObservationsInput",
    "UpdateBufferedObservationsInput",
    "UpdateBufferedReflectionInput",
    "UpdateObservationalMemoryConfigInput",
    "Work",
    "deep_merge",
    "message_sort_key",
    "metadata_matches",
    "om_from_values",
    "om_values",
    "plan_activation",
    "storage_capabilities",
    "validate_clone_args",
    "validate_list_messages_args",
    "validate_list_messages_by_resource_args",
    "validate_list_threads_args",
    "validate_message_ids",
    "validate_metadata_filter",
    "validate_resource_id",
]
