"""The records and query models of the ``MemoryStorage`` contract (docs/spec.md §4.1, §4.3, §4.4).

Models accept camelCase aliases (``resourceId``) as well as field names. The query models with
``extra="forbid"`` refuse unknown keys; the validated calls (:class:`ListMessagesQuery`,
:class:`ListThreadsQuery`, :class:`CloneArgs`) are what :mod:`.arguments` hands to a storage.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from ..messages import MastraDBMessage, MessageContentV2, Role, Timestamp
from ..timestamps import utc_now
from .metadata_filter import MetadataScalar, validate_metadata_filter

__all__ = [
    "CloneArgs",
    "CloneMessageFilter",
    "CloneMessageFilterInput",
    "CloneResult",
    "Comparison",
    "DateRange",
    "IncludeInput",
    "IncludeItem",
    "ListMessagesQuery",
    "ListThreadsQuery",
    "MessageFilter",
    "MessageFilterInput",
    "MessagePage",
    "MessageUpdate",
    "MessageUpdateInput",
    "OrderBy",
    "OrderByInput",
    "PerPage",
    "Resource",
    "ResourceInput",
    "Thread",
    "ThreadFilter",
    "ThreadFilterInput",
    "ThreadInput",
    "ThreadOrderBy",
    "ThreadOrderByInput",
    "ThreadPage",
    "message_sort_key",
]

PerPage: TypeAlias = int | Literal[False]
"""A page size: an int ≥ 0, or ``False`` for "everything"."""
Comparison: TypeAlias = Literal[">", ">=", "<", "<="]
"""How a bound compares (``$gt``, ``$gte``, ``$lt``, ``$lte`` in a document database)."""


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class _StrictModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class _HasMetadataFilter(Protocol):
    @property
    def metadata(self) -> dict[str, MetadataScalar] | None: ...


_Filtered = TypeVar("_Filtered", bound=_HasMetadataFilter)


def _check_metadata_filter(model: _Filtered) -> _Filtered:
    """A filter model's ``metadata`` follows the §4.6 rules (one validator for every filter model)."""
    if model.metadata is not None:
        validate_metadata_filter(model.metadata)
    return model


def _fill_updated_at(data: Any) -> Any:
    """A new record starts with ``updated_at`` equal to ``created_at`` (both "now" when neither is given)."""
    if isinstance(data, Mapping) and data.get("updated_at", data.get("updatedAt")) is None:
        created = data.get("created_at", data.get("createdAt"))
        filled = {k: v for k, v in data.items() if k not in ("updatedAt", "createdAt")}
        filled["created_at"] = utc_now() if created is None else created
        filled["updated_at"] = filled["created_at"]
        return filled
    return data


def normalise_order_input(data: Any) -> Any:
    """Accept camelCase field values (``createdAt``) and any case of direction (docs/spec.md §4.3, §4.4)."""
    if not isinstance(data, Mapping):
        return data
    fixed = dict(data)
    if isinstance(fixed.get("field"), str):
        fixed["field"] = {"createdAt": "created_at", "updatedAt": "updated_at"}.get(
            fixed["field"], fixed["field"]
        )
    if isinstance(fixed.get("direction"), str):
        fixed["direction"] = fixed["direction"].upper()
    return fixed


# --------------------------------------------------------------------------------------------- records


class _Record(_Model):
    """A thread or resource record (docs/spec.md §4.1); one given without ``updated_at`` starts with it
    equal to ``created_at``."""

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        return _fill_updated_at(data)


class Thread(_Record):
    """One conversation, owned by exactly one resource."""

    id: str = Field(min_length=1)
    resource_id: str = Field(min_length=1)
    title: str = ""
    metadata: dict[str, Any] | None = None
    created_at: Timestamp = Field(default_factory=utc_now)
    updated_at: Timestamp = Field(default_factory=utc_now)

    @model_validator(mode="before")
    @classmethod
    def _no_title(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "title" in data and data["title"] is None:
            return {**data, "title": ""}
        return data


class Resource(_Record):
    """The owner of threads, with optional resource-scoped working memory."""

    id: str = Field(min_length=1)
    working_memory: str | None = None
    metadata: dict[str, Any] | None = None
    created_at: Timestamp = Field(default_factory=utc_now)
    updated_at: Timestamp = Field(default_factory=utc_now)


# --------------------------------------------------------------------------------------- query models


class IncludeItem(_StrictModel):
    """A message addressed by id plus up to N messages before and M after it in its own thread.

    ``thread_id`` is only a hint: the window is always taken from the thread that owns the message.
    """

    id: str = Field(min_length=1)
    thread_id: str | None = None
    with_previous_messages: int = Field(default=0, ge=0, strict=True)
    with_next_messages: int = Field(default=0, ge=0, strict=True)


class DateRange(_StrictModel):
    """Bounds on ``created_at``; inclusive unless the matching ``*_exclusive`` flag is set."""

    start: Timestamp | None = None
    end: Timestamp | None = None
    start_exclusive: bool = False
    end_exclusive: bool = False


class MessageFilter(_StrictModel):
    """The storage-level message filter: a ``created_at`` range and a §4.6 metadata filter.

    Any other key is refused; vector-style filters belong in ``semantic_recall.filter``.
    """

    date_range: DateRange | None = None
    metadata: dict[str, MetadataScalar] | None = None

    _check_metadata = model_validator(mode="after")(_check_metadata_filter)


class _Order(_StrictModel):
    """An order model: accepts camelCase field values and any case of direction."""

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        return normalise_order_input(data)


class OrderBy(_Order):
    """Message order: always by ``(created_at, id)``; ``direction`` is ``ASC`` (default) or ``DESC``."""

    field: Literal["created_at"] = "created_at"
    direction: Literal["ASC", "DESC"] = "ASC"


class ThreadOrderBy(_Order):
    """Thread order: by ``created_at`` (default) or ``updated_at``, ``DESC`` by default; ties by id."""

    field: Literal["created_at", "updated_at"] = "created_at"
    direction: Literal["ASC", "DESC"] = "DESC"


class ThreadFilter(_StrictModel):
    """Which threads ``list_threads`` returns: one resource's and/or those matching a §4.6 metadata filter."""

    resource_id: str | None = Field(default=None, min_length=1)
    metadata: dict[str, MetadataScalar] | None = None

    _check_metadata = model_validator(mode="after")(_check_metadata_filter)


class MessageUpdate(_StrictModel):
    """A partial message update. Only given fields change; ``content`` is merged (docs/spec.md §4.5)."""

    id: str = Field(min_length=1)
    content: dict[str, Any] | None = None
    role: Role | None = None
    type: str | None = None
    thread_id: str | None = Field(default=None, min_length=1)
    created_at: Timestamp | None = None

    @model_validator(mode="before")
    @classmethod
    def _content_as_dict(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        content = data.get("content")
        if isinstance(content, MessageContentV2):
            return {**data, "content": content.model_dump(exclude_unset=True)}
        if isinstance(content, str):
            return {**data, "content": {"content": content, "parts": [{"type": "text", "text": content}]}}
        return data


class CloneMessageFilter(_StrictModel):
    """Which messages ``clone_thread`` copies: a ``created_at`` range (inclusive) and/or explicit ids."""

    start_date: Timestamp | None = None
    end_date: Timestamp | None = None
    message_ids: list[str] | None = None


# ---------------------------------------------------------------------------------------------- results


class MessagePage(_Model):
    """One page of ``list_messages``. ``total`` is ``None`` when ``include_total=False``."""

    messages: list[MastraDBMessage]
    total: int | None
    page: int
    per_page: PerPage
    has_more: bool


class ThreadPage(_Model):
    """One page of ``list_threads``."""

    threads: list[Thread]
    total: int
    page: int
    per_page: PerPage
    has_more: bool


class CloneResult(_Model):
    """What ``clone_thread`` created: the new thread, its messages, and old id → new id."""

    thread: Thread
    messages: list[MastraDBMessage]
    message_id_map: dict[str, str]


# ------------------------------------------------------------------------------------ validated calls


@dataclass(frozen=True)
class ListMessagesQuery:
    """A validated ``list_messages`` / ``list_messages_by_resource_id`` call.

    ``thread_ids`` is empty for a query over every thread of ``resource_id``.
    """

    thread_ids: tuple[str, ...]
    resource_id: str | None
    include: tuple[IncludeItem, ...]
    per_page: PerPage
    page: int
    filter: MessageFilter | None
    order: OrderBy
    include_total: bool

    @property
    def offset(self) -> int:
        """Rows skipped before the page."""
        return 0 if self.per_page is False else self.page * self.per_page

    @property
    def descending(self) -> bool:
        """Whether the requested order is newest first."""
        return self.order.direction == "DESC"

    @property
    def created_at_bounds(self) -> tuple[tuple[Comparison, datetime], ...]:
        """``filter.date_range`` as comparisons of ``created_at`` (docs/spec.md §4.3 step 3), e.g.
        ``((">=", start), ("<", end))``: inclusive unless the bound's ``*_exclusive`` flag is set."""
        bounds: list[tuple[Comparison, datetime]] = []
        date_range = self.filter.date_range if self.filter else None
        if date_range is not None and date_range.start is not None:
            bounds.append((">" if date_range.start_exclusive else ">=", date_range.start))
        if date_range is not None and date_range.end is not None:
            bounds.append(("<" if date_range.end_exclusive else "<=", date_range.end))
        return tuple(bounds)

    def in_scope(self, message: MastraDBMessage) -> bool:
        """Whether the message belongs to the queried thread set (or resource), for the has_more rule."""
        if self.thread_ids:
            return message.thread_id in self.thread_ids
        return message.resource_id == self.resource_id


@dataclass(frozen=True)
class ListThreadsQuery:
    """A validated ``list_threads`` call."""

    resource_id: str | None
    metadata: dict[str, MetadataScalar]
    page: int
    per_page: PerPage
    order: ThreadOrderBy
    #: Whether archived threads are listed too (docs/spec.md §4.4).
    include_archived: bool = True

    @property
    def offset(self) -> int:
        """Rows skipped before the page."""
        return 0 if self.per_page is False else self.page * self.per_page

    def has_more(self, total: int) -> bool:
        """``offset + per_page < total``; always ``False`` with ``per_page=False`` (docs/spec.md §4.4)."""
        return self.per_page is not False and self.offset + self.per_page < total


@dataclass(frozen=True)
class CloneArgs:
    """Validated ``clone_thread`` options."""

    new_thread_id: str | None
    resource_id: str | None
    title: str | None
    message_limit: int | None
    message_filter: CloneMessageFilter | None
    #: The clone's resource when it differs from the source's (docs/spec.md §4.2).
    new_resource_id: str | None = None
    #: Shallow-merged over the source's metadata, under the clone keys.
    metadata: dict[str, Any] | None = None


def message_sort_key(message: MastraDBMessage) -> tuple[datetime, str]:
    """The total order of messages: ``(created_at, id)`` (docs/spec.md §4.3 step 4)."""
    return (message.created_at, message.id)


# ------------------------------------------------------------------------------------ input aliases

ThreadInput: TypeAlias = Thread | Mapping[str, Any]
ResourceInput: TypeAlias = Resource | Mapping[str, Any]
IncludeInput: TypeAlias = IncludeItem | Mapping[str, Any]
MessageFilterInput: TypeAlias = MessageFilter | Mapping[str, Any]
OrderByInput: TypeAlias = OrderBy | Mapping[str, Any]
ThreadFilterInput: TypeAlias = ThreadFilter | Mapping[str, Any]
ThreadOrderByInput: TypeAlias = ThreadOrderBy | Mapping[str, Any]
MessageUpdateInput: TypeAlias = MessageUpdate | Mapping[str, Any]
CloneMessageFilterInput: TypeAlias = CloneMessageFilter | Mapping[str, Any]
