"""Observational-memory records and the inputs of their storage methods (docs/spec.md §4.8).

Mastra's ``ObservationalMemoryRecord`` and the ``*Input`` types of ``MemoryStorage``'s OM methods
(``@mastra/core`` 1.71.0 ``storage/types.d.ts``), with snake_case fields and Mastra's camelCase names as
aliases, so a record dumped ``by_alias`` is Mastra's JSON form. Input models refuse unknown keys and
wrong types (ValidationError before any I/O); records read back from a store accept extra columns.

:data:`OM_COLUMNS` is the row a storage keeps: Mastra's columns of ``mastra_observational_memory``
(``@mastra/core``'s ``OBSERVATIONAL_MEMORY_SCHEMA``), each with the record field it holds and its kind, so
every backend encodes a record the same way (:func:`om_values`, :func:`om_from_values`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from ..messages import Timestamp
from ..timestamps import utc_now

__all__ = [
    "OM_COLUMNS",
    "BufferedObservationChunk",
    "BufferedObservationChunkInput",
    "ColumnKind",
    "CreateObservationalMemoryInput",
    "CreateReflectionGenerationInput",
    "OMColumn",
    "OMKey",
    "ObservationalMemoryHistoryOptions",
    "ObservationalMemoryRecord",
    "ObservationalMemoryScope",
    "OriginType",
    "SwapBufferedReflectionToActiveInput",
    "SwapBufferedToActiveInput",
    "SwapBufferedToActiveResult",
    "SwapChunkResult",
    "UpdateActiveObservationsInput",
    "UpdateBufferedObservationsInput",
    "UpdateBufferedReflectionInput",
    "UpdateObservationalMemoryConfigInput",
    "om_from_values",
    "om_values",
]

ObservationalMemoryScope: TypeAlias = Literal["thread", "resource"]
OriginType: TypeAlias = Literal["initial", "reflection"]

_Count = Field(ge=0, strict=True)


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class _Input(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class _ExtractionFailure(_Model):
    slug: str
    error: str


class BufferedObservationChunkInput(_Input):
    """One observation cycle's output, buffered until activation (``bufferTokens``)."""

    cycle_id: str = Field(min_length=1)
    observations: str
    token_count: int = _Count
    message_ids: list[str]
    message_tokens: int = _Count
    last_observed_at: Timestamp
    suggested_continuation: str | None = None
    current_task: str | None = None
    thread_title: str | None = None
    extracted_values: dict[str, Any] | None = None
    extraction_failures: list[_ExtractionFailure] | None = None


class BufferedObservationChunk(_Model):
    """A buffered chunk as stored: the input plus its own id and creation time."""

    id: str
    cycle_id: str = ""
    observations: str = ""
    token_count: int = 0
    message_ids: list[str] = Field(default_factory=list)
    message_tokens: int = 0
    last_observed_at: Timestamp | None = None
    created_at: Timestamp = Field(default_factory=utc_now)
    suggested_continuation: str | None = None
    current_task: str | None = None
    thread_title: str | None = None
    extracted_values: dict[str, Any] | None = None
    extraction_failures: list[_ExtractionFailure] | None = None


class ObservationalMemoryRecord(_Model):
    """One generation of a thread's (``scope="thread"``) or a resource's (``"resource"``, ``thread_id``
    ``None``) observations. A reflection starts a new generation; the newest one is the current record."""

    id: str = Field(min_length=1)
    scope: ObservationalMemoryScope
    thread_id: str | None = None
    resource_id: str = Field(min_length=1)
    created_at: Timestamp = Field(default_factory=utc_now)
    updated_at: Timestamp = Field(default_factory=utc_now)
    last_observed_at: Timestamp | None = None
    origin_type: OriginType = "initial"
    generation_count: int = 0
    active_observations: str = ""
    buffered_observation_chunks: list[BufferedObservationChunk] | None = None
    buffered_observations: str | None = None
    buffered_observation_tokens: int | None = None
    buffered_message_ids: list[str] | None = None
    buffered_reflection: str | None = None
    buffered_reflection_tokens: int | None = None
    buffered_reflection_input_tokens: int | None = None
    reflected_observation_line_count: int | None = None
    observed_message_ids: list[str] | None = None
    observed_timezone: str | None = None
    total_tokens_observed: int = 0
    observation_token_count: int = 0
    pending_message_tokens: int = 0
    is_reflecting: bool = False
    is_observing: bool = False
    is_buffering_observation: bool = False
    is_buffering_reflection: bool = False
    last_buffered_at_tokens: int = 0
    last_buffered_at_time: Timestamp | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _scope_matches_thread(self) -> ObservationalMemoryRecord:
        _check_scope(self.scope, self.thread_id)
        return self

    @property
    def key(self) -> OMKey:
        """Whose record this is."""
        return OMKey(self.thread_id, self.resource_id)


def _check_scope(scope: str, thread_id: str | None) -> None:
    # Mastra keys a record by thread id when there is one and by resource id otherwise; a thread-scoped
    # record without a thread, or a resource-scoped one with one, would land under the other key.
    if scope == "thread" and not thread_id:
        raise ValueError("scope 'thread' needs a thread_id (use scope 'resource' with thread_id None)")
    if scope == "resource" and thread_id is not None:
        raise ValueError("scope 'resource' takes thread_id None (one record per resource)")


@dataclass(frozen=True)
class OMKey:
    """Whose observations: a thread of a resource, or (``thread_id`` ``None``) the resource itself."""

    thread_id: str | None
    resource_id: str

    @property
    def lookup_key(self) -> str:
        """Mastra's ``lookupKey`` column: ``thread:<id>`` or ``resource:<id>``."""
        return f"thread:{self.thread_id}" if self.thread_id else f"resource:{self.resource_id}"


# ----------------------------------------------------------------------------------------- inputs


class ObservationalMemoryHistoryOptions(_Input):
    """Bounds of ``get_observational_memory_history``: ``created_at`` within ``[from, to]``, then skip
    ``offset``."""

    from_: Timestamp | None = Field(default=None, alias="from")
    to: Timestamp | None = None
    offset: int | None = Field(default=None, ge=0, strict=True)


class CreateObservationalMemoryInput(_Input):
    thread_id: str | None
    resource_id: str = Field(min_length=1)
    scope: ObservationalMemoryScope
    config: dict[str, Any] = Field(default_factory=dict)
    observed_timezone: str | None = None

    @model_validator(mode="after")
    def _scope_matches_thread(self) -> CreateObservationalMemoryInput:
        _check_scope(self.scope, self.thread_id)
        return self


class UpdateActiveObservationsInput(_Input):
    id: str = Field(min_length=1)
    observations: str
    token_count: int = _Count
    last_observed_at: Timestamp
    observed_message_ids: list[str] | None = None
    observed_timezone: str | None = None


class UpdateBufferedObservationsInput(_Input):
    id: str = Field(min_length=1)
    chunk: BufferedObservationChunkInput
    last_buffered_at_time: Timestamp | None = None


class SwapBufferedToActiveInput(_Input):
    id: str = Field(min_length=1)
    activation_ratio: float = Field(ge=0, le=1)
    message_tokens_threshold: int = _Count
    current_pending_tokens: int = _Count
    force_max_activation: bool = False
    last_observed_at: Timestamp | None = None
    buffered_chunks: list[BufferedObservationChunk] | None = None


class SwapChunkResult(_Model):
    cycle_id: str
    message_tokens: int
    observation_tokens: int
    message_count: int
    observations: str


class SwapBufferedToActiveResult(_Model):
    """What an activation moved (Mastra's ``SwapBufferedToActiveResult``)."""

    chunks_activated: int = 0
    message_tokens_activated: int = 0
    observation_tokens_activated: int = 0
    messages_activated: int = 0
    activated_cycle_ids: list[str] = Field(default_factory=list)
    activated_message_ids: list[str] = Field(default_factory=list)
    observations: str | None = None
    per_chunk: list[SwapChunkResult] | None = None
    suggested_continuation: str | None = None
    current_task: str | None = None


class UpdateBufferedReflectionInput(_Input):
    id: str = Field(min_length=1)
    reflection: str
    token_count: int = _Count
    input_token_count: int = _Count
    reflected_observation_line_count: int = _Count


class SwapBufferedReflectionToActiveInput(_Input):
    current_record: ObservationalMemoryRecord
    token_count: int = _Count


class CreateReflectionGenerationInput(_Input):
    current_record: ObservationalMemoryRecord
    reflection: str
    token_count: int = _Count


class UpdateObservationalMemoryConfigInput(_Input):
    id: str = Field(min_length=1)
    config: dict[str, Any]


# ------------------------------------------------------------------------------------- stored row

ColumnKind: TypeAlias = Literal["text", "int", "bool", "time", "json"]


@dataclass(frozen=True)
class OMColumn:
    """A column of ``mastra_observational_memory``: its record field (snake_case, also the column name in
    this project's own layouts), Mastra's column name, and what kind of value it holds."""

    field: str
    mastra: str
    kind: ColumnKind
    nullable: bool = True


def _col(field: str, kind: ColumnKind, nullable: bool = True) -> OMColumn:
    return OMColumn(field, to_camel(field), kind, nullable)


#: Mastra's columns in its order. ``lookup_key`` and ``last_reflection_at`` are not record fields: the
#: first is derived from the key, the second is the creation time of a reflection generation.
OM_COLUMNS: Final[tuple[OMColumn, ...]] = (
    _col("id", "text", False),
    _col("lookup_key", "text", False),
    _col("scope", "text", False),
    _col("resource_id", "text"),
    _col("thread_id", "text"),
    _col("active_observations", "text", False),
    _col("active_observations_pending_update", "text"),
    _col("origin_type", "text", False),
    _col("config", "json", False),
    _col("generation_count", "int", False),
    _col("last_observed_at", "time"),
    _col("last_reflection_at", "time"),
    _col("pending_message_tokens", "int", False),
    _col("total_tokens_observed", "int", False),
    _col("observation_token_count", "int", False),
    _col("is_observing", "bool", False),
    _col("is_reflecting", "bool", False),
    _col("observed_message_ids", "json"),
    _col("observed_timezone", "text"),
    _col("buffered_observations", "text"),
    _col("buffered_observation_tokens", "int"),
    _col("buffered_message_ids", "json"),
    _col("buffered_reflection", "text"),
    _col("buffered_reflection_tokens", "int"),
    _col("buffered_reflection_input_tokens", "int"),
    _col("reflected_observation_line_count", "int"),
    _col("buffered_observation_chunks", "json"),
    _col("is_buffering_observation", "bool", False),
    _col("is_buffering_reflection", "bool", False),
    _col("last_buffered_at_tokens", "int", False),
    _col("last_buffered_at_time", "time"),
    _col("metadata", "json"),
    _col("created_at", "time", False),
    _col("updated_at", "time", False),
)

OM_KINDS: Final[Mapping[str, ColumnKind]] = {c.field: c.kind for c in OM_COLUMNS}


def plain(field: str, value: Any) -> Any:
    """A record field's value as plain data for a ``json`` column (chunks as Mastra's camelCase JSON)."""
    if field == "buffered_observation_chunks" and value is not None:
        return [
            c.model_dump(mode="json", by_alias=True, exclude_none=True)
            if isinstance(c, BufferedObservationChunk)
            else c
            for c in value
        ]
    return value


def om_values(record: ObservationalMemoryRecord) -> dict[str, Any]:
    """The row of a record, by field name: timestamps as datetimes, ``json`` columns as plain data."""
    values: dict[str, Any] = {}
    for column in OM_COLUMNS:
        if column.field == "lookup_key":
            values["lookup_key"] = record.key.lookup_key
        elif column.field == "last_reflection_at":
            values["last_reflection_at"] = record.created_at if record.origin_type == "reflection" else None
        elif column.field == "active_observations_pending_update":
            values[column.field] = None
        else:
            values[column.field] = plain(column.field, getattr(record, column.field))
    return values


def _flag(value: Any) -> bool:
    # Mastra's stores read "true"/1/True as set (booleans as integers in SQLite, text in some rows).
    return value is True or value == 1 or value == "true"


def om_from_values(values: Mapping[str, Any]) -> ObservationalMemoryRecord:
    """A record from a row by field name (timestamps as datetimes, ISO text or epoch ms; ``json`` columns
    decoded), tolerating what Mastra's own stores leave empty (``NULL`` counters, ``""`` thread ids)."""
    data: dict[str, Any] = {}
    for column in OM_COLUMNS:
        if column.field in ("lookup_key", "last_reflection_at", "active_observations_pending_update"):
            continue
        value = values.get(column.field)
        if column.kind == "bool":
            value = _flag(value)
        elif column.kind == "int" and not column.nullable:
            value = int(value or 0)
        elif column.kind == "int" and value is not None:
            value = int(value)
        if value is not None:
            data[column.field] = value
    if not data.get("thread_id"):
        data["thread_id"] = None
    # Mastra reads the legacy buffered text from this column; keep it when the newer one is empty.
    if data.get("buffered_observations") is None and values.get("active_observations_pending_update"):
        data["buffered_observations"] = values["active_observations_pending_update"]
    data.setdefault("config", {})
    return ObservationalMemoryRecord.model_validate(data)
