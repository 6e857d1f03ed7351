"""The ``MemoryStorage`` contract (docs/spec.md §4): records, query models, shared validation, and the
protocol.

Every storage implementation reuses the validation functions here, so argument errors carry the same
messages everywhere and are raised before any I/O. The message metadata filter of §4.6 is validated by
:func:`validate_metadata_filter` and evaluated by :func:`metadata_matches`, the exact rule every storage
must reproduce.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic import ValidationError as PydanticValidationError
from pydantic.alias_generators import to_camel

from .capabilities import StorageCapabilities
from .errors import FilterValidationError, ValidationError, error_id
from .messages import MastraDBMessage, MessageContentV2, MessageInput, Role, Timestamp, coerce_datetime
from .timestamps import utc_now

__all__ = [
    "CloneMessageFilter",
    "CloneResult",
    "DateRange",
    "IncludeItem",
    "ListMessagesQuery",
    "ListThreadsQuery",
    "MastraDBMessage",
    "MemoryStorage",
    "MessageContentV2",
    "MessageFilter",
    "MessagePage",
    "MessageUpdate",
    "OrderBy",
    "Resource",
    "Thread",
    "ThreadFilter",
    "ThreadOrderBy",
    "ThreadPage",
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

DEFAULT_MESSAGES_PER_PAGE = 40
DEFAULT_THREADS_PER_PAGE = 100
_INT64_MAX = 2**63 - 1
_METADATA_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MAX_METADATA_KEY_LENGTH = 128
_RESERVED_METADATA_KEYS = frozenset({"__proto__", "prototype", "constructor"})

PerPage: TypeAlias = int | Literal[False]
"""A page size: an int ≥ 0, or ``False`` for "everything"."""
MetadataScalar: TypeAlias = str | int | float | bool | None


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class _StrictModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


def _fill_updated_at(data: Any) -> Any:
    """A new record starts with ``updated_at`` equal to ``created_at`` (both "now" when neither is given)."""
    if isinstance(data, Mapping) and data.get("updated_at", data.get("updatedAt")) is None:
        created = data.get("created_at", data.get("createdAt"))
        filled = {k: v for k, v in data.items() if k not in ("updatedAt", "createdAt")}
        filled["created_at"] = utc_now() if created is None else created
        filled["updated_at"] = filled["created_at"]
        return filled
    return data


# --------------------------------------------------------------------------------------------- records


class Thread(_Model):
    """One conversation, owned by exactly one resource."""

    id: str = Field(min_length=1)
    resource_id: str = Field(min_length=1)
    title: str = ""
    metadata: dict[str, Any] | None = None
    created_at: Timestamp = Field(default_factory=utc_now)
    updated_at: Timestamp = Field(default_factory=utc_now)

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        data = _fill_updated_at(data)
        if isinstance(data, Mapping) and "title" in data and data["title"] is None:
            return {**data, "title": ""}
        return data


class Resource(_Model):
    """The owner of threads, with optional resource-scoped working memory."""

    id: str = Field(min_length=1)
    working_memory: str | None = None
    metadata: dict[str, Any] | None = None
    created_at: Timestamp = Field(default_factory=utc_now)
    updated_at: Timestamp = Field(default_factory=utc_now)

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        return _fill_updated_at(data)


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

    @model_validator(mode="after")
    def _check_metadata(self) -> MessageFilter:
        if self.metadata is not None:
            validate_metadata_filter(self.metadata)
        return self


class OrderBy(_StrictModel):
    """Message order: always by ``(created_at, id)``; ``direction`` is ``ASC`` (default) or ``DESC``."""

    field: Literal["created_at"] = "created_at"
    direction: Literal["ASC", "DESC"] = "ASC"

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        return _normalise_order_input(data)


class ThreadOrderBy(_StrictModel):
    """Thread order: by ``created_at`` (default) or ``updated_at``, ``DESC`` by default; ties by id."""

    field: Literal["created_at", "updated_at"] = "created_at"
    direction: Literal["ASC", "DESC"] = "DESC"

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        return _normalise_order_input(data)


class ThreadFilter(_StrictModel):
    """Which threads ``list_threads`` returns: one resource's and/or those matching a §4.6 metadata filter."""

    resource_id: str | None = Field(default=None, min_length=1)
    metadata: dict[str, MetadataScalar] | None = None

    @model_validator(mode="after")
    def _check_metadata(self) -> ThreadFilter:
        if self.metadata is not None:
            validate_metadata_filter(self.metadata)
        return self


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


# ----------------------------------------------------------------------------- §4.6 metadata filter


def validate_metadata_filter(value: Any) -> dict[str, MetadataScalar]:
    """Check a storage metadata filter (docs/spec.md §4.6) and return it as a plain dict.

    Raises FilterValidationError with the exact phrases of the spec.
    """
    if not isinstance(value, Mapping):
        raise FilterValidationError("metadata filter must be a dict")
    for key, item in value.items():
        if (
            not isinstance(key, str)
            or len(key) > _MAX_METADATA_KEY_LENGTH
            or key in _RESERVED_METADATA_KEYS
            or not _METADATA_KEY.match(key)
        ):
            raise FilterValidationError(f'invalid metadata filter key "{key}"')
        valid = (
            item is None
            or isinstance(item, str | bool | int)
            or (isinstance(item, float) and math.isfinite(item))
        )
        if not valid:
            raise FilterValidationError(
                f'invalid metadata filter value for key "{key}": expected str, finite number, bool or None'
            )
    return dict(value)


def _typed_equal(expected: MetadataScalar, actual: Any) -> bool:
    # bool subclasses int, so bools are checked first and never compared with numbers.
    if expected is None:
        return actual is None
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if isinstance(expected, int | float):
        return isinstance(actual, int | float) and expected == actual
    return isinstance(actual, str) and expected == actual


def metadata_matches(filter: Mapping[str, MetadataScalar] | None, metadata: Mapping[str, Any] | None) -> bool:
    """Whether ``metadata`` satisfies a validated §4.6 filter.

    Every key must be present with a value equal *with type*: numbers equal numbers (``2 == 2.0``), bools
    only bools (``True`` never equals ``1``), strings only strings, and ``None`` only an explicit null. A
    missing key never matches. ``None`` or ``{}`` as the filter matches everything.
    """
    if not filter:
        return True
    if not isinstance(metadata, Mapping):
        return False
    return all(key in metadata and _typed_equal(expected, metadata[key]) for key, expected in filter.items())


# ------------------------------------------------------------------------------- argument validation


def _error(store: str, operation: str, status: str, message: str) -> ValidationError:
    return ValidationError(message, id=error_id("STORAGE", store, operation, status), domain="STORAGE")


def _tag(exc: ValidationError, store: str, operation: str, status: str) -> ValidationError:
    """Give an error raised by a shared helper the storage id of the operation it surfaced in."""
    exc.id = error_id("STORAGE", store, operation, status)
    exc.domain = "STORAGE"
    return exc


def _lookup(data: Mapping[str, Any], name: str) -> Any:
    """Read a snake_case key or its camelCase alias."""
    return data[name] if name in data else data.get(to_camel(name))


def _unknown_keys(data: Mapping[str, Any], allowed: Iterable[str]) -> list[str]:
    names = set(allowed)
    known = names | {to_camel(n) for n in names}
    return sorted(str(k) for k in data if k not in known)


def _normalise_order_input(data: Any) -> Any:
    """Accept camelCase field values (``createdAt``) and any case of direction."""
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


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_page(page: Any, per_page: Any, *, store: str, operation: str) -> None:
    if not _is_int(page) or page < 0:
        suffix = "" if _is_int(page) else f": got {page!r} (use an int)"
        raise _error(store, operation, "INVALID_PAGE", f"page must be >= 0{suffix}")
    if per_page is not False and (not _is_int(per_page) or per_page < 0):
        suffix = "" if _is_int(per_page) else f": got {per_page!r} (use an int, None or False)"
        raise _error(store, operation, "INVALID_PER_PAGE", f"per_page must be >= 0{suffix}")
    if per_page is False and page != 0:
        raise _error(store, operation, "INVALID_PAGE", "page must be 0 when per_page is false")
    if per_page is not False and (page * per_page > _INT64_MAX or per_page > _INT64_MAX):
        raise _error(store, operation, "INVALID_PAGE", "page value too large")


def validate_resource_id(
    resource_id: Any, *, store: str, operation: str, required: bool = False
) -> str | None:
    """``None`` (unless required) or a non-blank string; ``""`` never means "not given" (docs/spec.md
    §4.3)."""
    if resource_id is None and not required:
        return None
    if not isinstance(resource_id, str) or not resource_id.strip():
        raise _error(store, operation, "INVALID_RESOURCE_ID", "resource_id must be a non-empty string")
    return resource_id


def _as_model(
    model: type[_StrictModel], raw: Any, *, store: str, operation: str, status: str, what: str
) -> Any:
    if isinstance(raw, model):
        return raw
    try:
        return model.model_validate(raw)
    except PydanticValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"])
            problems.append(f"{where}: {err['msg'].removeprefix('Value error, ')}" if where else err["msg"])
        raise _error(store, operation, status, f"invalid {what}: " + "; ".join(problems)) from None


def _parse_message_filter(raw: Any, *, store: str, operation: str) -> MessageFilter | None:
    if raw is None:
        return None
    if isinstance(raw, MessageFilter):
        parsed = raw
    else:
        if not isinstance(raw, Mapping):
            raise _error(
                store, operation, "INVALID_FILTER", "filter must be a dict with date_range and/or metadata"
            )
        unknown = _unknown_keys(raw, ("date_range", "metadata"))
        if unknown:
            raise _error(
                store,
                operation,
                "INVALID_FILTER",
                f"filter accepts only date_range and metadata; unknown keys: {', '.join(unknown)} "
                "(vector filters belong in semantic_recall.filter)",
            )
        metadata = _lookup(raw, "metadata")
        if metadata is not None:
            try:
                validate_metadata_filter(metadata)
            except FilterValidationError as exc:
                raise _tag(exc, store, operation, "INVALID_FILTER") from None
        date_range = _lookup(raw, "date_range")
        if date_range is not None and not isinstance(date_range, DateRange | Mapping):
            raise _error(store, operation, "INVALID_FILTER", "filter.date_range must be a dict")
        if isinstance(date_range, Mapping):
            unknown = _unknown_keys(date_range, DateRange.model_fields)
            if unknown:
                raise _error(
                    store,
                    operation,
                    "INVALID_FILTER",
                    "filter.date_range accepts start, end, start_exclusive and end_exclusive; "
                    f"unknown keys: {', '.join(unknown)}",
                )
            for bound in ("start", "end"):
                value = _lookup(date_range, bound)
                if value is not None:
                    try:
                        coerce_datetime(value, f"filter.date_range.{bound}")
                    except ValidationError as exc:
                        raise _tag(exc, store, operation, "INVALID_FILTER") from None
        parsed = _as_model(
            MessageFilter, raw, store=store, operation=operation, status="INVALID_FILTER", what="filter"
        )
    if parsed.date_range is None and not parsed.metadata:
        return None
    return parsed


def _parse_include(raw: Any, *, store: str, operation: str) -> tuple[IncludeItem, ...]:
    if raw is None:
        return ()
    if isinstance(raw, Mapping | str) or not isinstance(raw, Iterable):
        raise _error(store, operation, "INVALID_INCLUDE", "include must be a list of include items")
    items: list[IncludeItem] = []
    for index, item in enumerate(raw):
        if isinstance(item, IncludeItem):
            items.append(item)
            continue
        if not isinstance(item, Mapping):
            raise _error(store, operation, "INVALID_INCLUDE", f"include[{index}] must be a dict with an id")
        unknown = _unknown_keys(item, IncludeItem.model_fields)
        if unknown:
            raise _error(
                store,
                operation,
                "INVALID_INCLUDE",
                f"include[{index}] has unknown keys: {', '.join(unknown)}",
            )
        item_id = _lookup(item, "id")
        if not isinstance(item_id, str) or not item_id.strip():
            raise _error(
                store, operation, "INVALID_INCLUDE", f"include[{index}].id must be a non-empty string"
            )
        for count in ("with_previous_messages", "with_next_messages"):
            value = _lookup(item, count)
            if value is not None and (not _is_int(value) or value < 0):
                raise _error(
                    store, operation, "INVALID_INCLUDE", f"include[{index}].{count} must be an integer >= 0"
                )
        hint = _lookup(item, "thread_id")
        if hint is not None and not isinstance(hint, str):
            raise _error(store, operation, "INVALID_INCLUDE", f"include[{index}].thread_id must be a string")
        items.append(
            IncludeItem(
                id=item_id,
                thread_id=hint or None,
                with_previous_messages=_lookup(item, "with_previous_messages") or 0,
                with_next_messages=_lookup(item, "with_next_messages") or 0,
            )
        )
    return tuple(items)


def _parse_order(
    raw: Any, model: type[_StrictModel], fields: tuple[str, ...], *, store: str, operation: str
) -> Any:
    if raw is None:
        return model()
    if isinstance(raw, model):
        return raw
    if not isinstance(raw, Mapping):
        raise _error(store, operation, "INVALID_ORDER_BY", "order_by must be a dict with field and direction")
    fixed = _normalise_order_input(raw)
    unknown = _unknown_keys(fixed, ("field", "direction"))
    if unknown:
        raise _error(store, operation, "INVALID_ORDER_BY", f"order_by has unknown keys: {', '.join(unknown)}")
    field = fixed.get("field")
    if field is not None and field not in fields:
        allowed = " or ".join(repr(f) for f in fields)
        raise _error(store, operation, "INVALID_ORDER_BY", f"order_by.field must be {allowed}, got {field!r}")
    direction = fixed.get("direction")
    if direction is not None and direction not in ("ASC", "DESC"):
        raise _error(
            store,
            operation,
            "INVALID_ORDER_BY",
            f"order_by.direction must be 'ASC' or 'DESC', got {direction!r}",
        )
    return model.model_validate({k: v for k, v in fixed.items() if v is not None})


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

    def in_scope(self, message: MastraDBMessage) -> bool:
        """Whether the message belongs to the queried thread set (or resource), for the has_more rule."""
        if self.thread_ids:
            return message.thread_id in self.thread_ids
        return message.resource_id == self.resource_id


def _common_message_args(
    resource_id: Any,
    include: Any,
    per_page: Any,
    page: Any,
    filter: Any,
    order_by: Any,
    include_total: Any,
    *,
    store: str,
    operation: str,
    resource_required: bool,
) -> tuple[str | None, tuple[IncludeItem, ...], PerPage, MessageFilter | None, OrderBy]:
    effective_per_page: PerPage = DEFAULT_MESSAGES_PER_PAGE if per_page is None else per_page
    _check_page(page, effective_per_page, store=store, operation=operation)
    resource = validate_resource_id(resource_id, store=store, operation=operation, required=resource_required)
    parsed_filter = _parse_message_filter(filter, store=store, operation=operation)
    items = _parse_include(include, store=store, operation=operation)
    order: OrderBy = _parse_order(order_by, OrderBy, ("created_at",), store=store, operation=operation)
    if not isinstance(include_total, bool):
        raise _error(store, operation, "INVALID_ARGS", "include_total must be a bool")
    return resource, items, effective_per_page, parsed_filter, order


def validate_list_messages_args(
    thread_id: Any,
    resource_id: Any = None,
    include: Any = None,
    per_page: Any = None,
    page: Any = 0,
    filter: Any = None,
    order_by: Any = None,
    include_total: Any = True,
    *,
    store: str,
) -> ListMessagesQuery:
    """Validate ``list_messages`` arguments (docs/spec.md §4.3 step 1) before any I/O; raise
    ValidationError."""
    operation = "LIST_MESSAGES"
    if isinstance(thread_id, str):
        ids: list[Any] = [thread_id]
    elif isinstance(thread_id, Sequence) and not isinstance(thread_id, bytes) and len(thread_id) > 0:
        ids = list(thread_id)
    else:
        ids = []
    if not ids or any(not isinstance(t, str) or not t.strip() for t in ids):
        raise _error(
            store,
            operation,
            "INVALID_THREAD_ID",
            "thread_id must be a non-empty string or a list of non-empty strings",
        )
    resource, items, pp, parsed_filter, order = _common_message_args(
        resource_id,
        include,
        per_page,
        page,
        filter,
        order_by,
        include_total,
        store=store,
        operation=operation,
        resource_required=False,
    )
    return ListMessagesQuery(
        thread_ids=tuple(dict.fromkeys(ids)),
        resource_id=resource,
        include=items,
        per_page=pp,
        page=page,
        filter=parsed_filter,
        order=order,
        include_total=include_total,
    )


def validate_list_messages_by_resource_args(
    resource_id: Any,
    include: Any = None,
    per_page: Any = None,
    page: Any = 0,
    filter: Any = None,
    order_by: Any = None,
    include_total: Any = True,
    *,
    store: str,
) -> ListMessagesQuery:
    """Validate ``list_messages_by_resource_id`` arguments; a blank ``resource_id`` is a ValidationError."""
    resource, items, pp, parsed_filter, order = _common_message_args(
        resource_id,
        include,
        per_page,
        page,
        filter,
        order_by,
        include_total,
        store=store,
        operation="LIST_MESSAGES_BY_RESOURCE_ID",
        resource_required=True,
    )
    return ListMessagesQuery(
        thread_ids=(),
        resource_id=resource,
        include=items,
        per_page=pp,
        page=page,
        filter=parsed_filter,
        order=order,
        include_total=include_total,
    )


@dataclass(frozen=True)
class ListThreadsQuery:
    """A validated ``list_threads`` call."""

    resource_id: str | None
    metadata: dict[str, MetadataScalar]
    page: int
    per_page: PerPage
    order: ThreadOrderBy

    @property
    def offset(self) -> int:
        """Rows skipped before the page."""
        return 0 if self.per_page is False else self.page * self.per_page

    def has_more(self, total: int) -> bool:
        """``offset + per_page < total``; always ``False`` with ``per_page=False`` (docs/spec.md §4.4)."""
        return self.per_page is not False and self.offset + self.per_page < total


def validate_list_threads_args(
    filter: Any = None,
    page: Any = 0,
    per_page: Any = DEFAULT_THREADS_PER_PAGE,
    order_by: Any = None,
    *,
    store: str,
) -> ListThreadsQuery:
    """Validate ``list_threads`` arguments (docs/spec.md §4.4) before any I/O; raise ValidationError."""
    operation = "LIST_THREADS"
    effective_per_page: PerPage = DEFAULT_THREADS_PER_PAGE if per_page is None else per_page
    _check_page(page, effective_per_page, store=store, operation=operation)
    resource_id: str | None = None
    metadata: dict[str, MetadataScalar] = {}
    if isinstance(filter, ThreadFilter):
        resource_id, metadata = filter.resource_id, dict(filter.metadata or {})
    elif filter is not None:
        if not isinstance(filter, Mapping):
            raise _error(
                store, operation, "INVALID_FILTER", "filter must be a dict with resource_id and/or metadata"
            )
        unknown = _unknown_keys(filter, ("resource_id", "metadata"))
        if unknown:
            raise _error(
                store,
                operation,
                "INVALID_FILTER",
                f"filter accepts only resource_id and metadata; unknown keys: {', '.join(unknown)}",
            )
        resource_id = validate_resource_id(_lookup(filter, "resource_id"), store=store, operation=operation)
        raw_metadata = _lookup(filter, "metadata")
        try:
            metadata = {} if raw_metadata is None else validate_metadata_filter(raw_metadata)
        except FilterValidationError as exc:
            raise _tag(exc, store, operation, "INVALID_FILTER") from None
    order: ThreadOrderBy = _parse_order(
        order_by, ThreadOrderBy, ("created_at", "updated_at"), store=store, operation=operation
    )
    return ListThreadsQuery(
        resource_id=resource_id, metadata=metadata, page=page, per_page=effective_per_page, order=order
    )


def validate_message_ids(message_ids: Any, *, store: str, operation: str) -> list[str]:
    """A list of non-blank message ids (``{"id": ...}`` dicts accepted), deduplicated in order."""
    if isinstance(message_ids, str | Mapping) or not isinstance(message_ids, Iterable):
        raise _error(store, operation, "INVALID_IDS", "message_ids must be a list of non-empty strings")
    ids: list[str] = []
    for item in message_ids:
        value = item.get("id") if isinstance(item, Mapping) else item
        if not isinstance(value, str) or not value.strip():
            raise _error(store, operation, "INVALID_IDS", "message_ids must be a list of non-empty strings")
        ids.append(value)
    return list(dict.fromkeys(ids))


@dataclass(frozen=True)
class CloneArgs:
    """Validated ``clone_thread`` options."""

    new_thread_id: str | None
    resource_id: str | None
    title: str | None
    message_limit: int | None
    message_filter: CloneMessageFilter | None


def validate_clone_args(
    source_thread_id: Any,
    new_thread_id: Any = None,
    resource_id: Any = None,
    title: Any = None,
    message_limit: Any = None,
    message_filter: Any = None,
    *,
    store: str,
) -> CloneArgs:
    """Validate ``clone_thread`` arguments before any I/O."""
    operation = "CLONE_THREAD"
    if not isinstance(source_thread_id, str) or not source_thread_id.strip():
        raise _error(store, operation, "INVALID_ARGS", "source_thread_id must be a non-empty string")
    if new_thread_id is not None and (not isinstance(new_thread_id, str) or not new_thread_id.strip()):
        raise _error(store, operation, "INVALID_ARGS", "new_thread_id must be a non-empty string")
    resource = validate_resource_id(resource_id, store=store, operation=operation)
    if title is not None and not isinstance(title, str):
        raise _error(store, operation, "INVALID_ARGS", "title must be a string")
    if message_limit is not None and (not _is_int(message_limit) or message_limit < 0):
        raise _error(store, operation, "INVALID_ARGS", "message_limit must be an integer >= 0")
    parsed_filter: CloneMessageFilter | None = None
    if message_filter is not None:
        parsed_filter = _as_model(
            CloneMessageFilter,
            message_filter,
            store=store,
            operation=operation,
            status="INVALID_ARGS",
            what="message_filter",
        )
    return CloneArgs(new_thread_id, resource, title, message_limit, parsed_filter)


# ------------------------------------------------------------------------------------ shared helpers


def message_sort_key(message: MastraDBMessage) -> tuple[datetime, str]:
    """The total order of messages: ``(created_at, id)``."""
    return (message.created_at, message.id)


def storage_capabilities(storage: object) -> StorageCapabilities:
    """What a storage declares in its ``capabilities`` attribute; undeclared storages get the defaults."""
    declared = getattr(storage, "capabilities", None)
    if isinstance(declared, StorageCapabilities):
        return declared
    nested = getattr(declared, "storage", None)
    return nested if isinstance(nested, StorageCapabilities) else StorageCapabilities()


# ------------------------------------------------------------------------------------------ protocol

ThreadInput: TypeAlias = Thread | Mapping[str, Any]
ResourceInput: TypeAlias = Resource | Mapping[str, Any]
IncludeInput: TypeAlias = IncludeItem | Mapping[str, Any]
MessageFilterInput: TypeAlias = MessageFilter | Mapping[str, Any]
OrderByInput: TypeAlias = OrderBy | Mapping[str, Any]
ThreadFilterInput: TypeAlias = ThreadFilter | Mapping[str, Any]
ThreadOrderByInput: TypeAlias = ThreadOrderBy | Mapping[str, Any]
MessageUpdateInput: TypeAlias = MessageUpdate | Mapping[str, Any]
CloneMessageFilterInput: TypeAlias = CloneMessageFilter | Mapping[str, Any]


@runtime_checkable
class MemoryStorage(Protocol):
    """Threads, messages and resources (docs/spec.md §4.2). Every method is async; models accept camelCase
    dicts."""

    async def init(self) -> None:
        """Create the schema idempotently."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...

    async def get_thread_by_id(self, thread_id: str, resource_id: str | None = None) -> Thread | None:
        """The thread, or ``None`` if missing or if ``resource_id`` is given and differs."""
        ...

    async def save_thread(self, thread: ThreadInput) -> Thread:
        """Insert or replace a thread by id."""
        ...

    async def update_thread(
        self, id: str, title: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Thread:
        """Replace the title, shallow-merge metadata, bump ``updated_at``; ThreadNotFoundError if missing."""
        ...

    async def delete_thread(self, thread_id: str) -> None:
        """Delete the thread and its messages in one transaction; a missing thread is a no-op."""
        ...

    async def list_threads(
        self,
        filter: ThreadFilterInput | None = None,
        page: int = 0,
        per_page: PerPage | None = DEFAULT_THREADS_PER_PAGE,
        order_by: ThreadOrderByInput | None = None,
    ) -> ThreadPage:
        """Threads matching ``filter``, paged and ordered (docs/spec.md §4.4)."""
        ...

    async def list_messages(
        self,
        thread_id: str | Sequence[str],
        resource_id: str | None = None,
        include: Sequence[IncludeInput] | None = None,
        per_page: PerPage | None = None,
        page: int = 0,
        filter: MessageFilterInput | None = None,
        order_by: OrderByInput | None = None,
        include_total: bool = True,
    ) -> MessagePage:
        """Messages of one or more threads plus include windows (the exact algorithm of docs/spec.md §4.3)."""
        ...

    async def list_messages_by_id(self, message_ids: Sequence[str]) -> list[MastraDBMessage]:
        """Those messages in ascending ``(created_at, id)`` order; unknown ids are skipped."""
        ...

    async def list_messages_by_resource_id(
        self,
        resource_id: str,
        include: Sequence[IncludeInput] | None = None,
        per_page: PerPage | None = None,
        page: int = 0,
        filter: MessageFilterInput | None = None,
        order_by: OrderByInput | None = None,
        include_total: bool = True,
    ) -> MessagePage:
        """As ``list_messages`` over every thread of the resource."""
        ...

    async def save_messages(self, messages: Sequence[MessageInput]) -> list[MastraDBMessage]:
        """Upsert messages by id in one transaction (docs/spec.md §4.5); returns the stored messages."""
        ...

    async def update_messages(self, updates: Sequence[MessageUpdateInput]) -> list[MastraDBMessage]:
        """Apply partial updates in one transaction; unknown ids are ignored. Returns the updated messages."""
        ...

    async def delete_messages(self, message_ids: Sequence[str]) -> None:
        """Delete messages in one transaction; unknown ids are ignored."""
        ...

    async def get_resource_by_id(self, resource_id: str) -> Resource | None:
        """The resource, or ``None``."""
        ...

    async def save_resource(self, resource: ResourceInput) -> Resource:
        """Insert or replace a resource by id."""
        ...

    async def update_resource(
        self, resource_id: str, working_memory: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Resource:
        """Create the resource if missing; else replace working memory, shallow-merge metadata, bump."""
        ...

    async def clone_thread(
        self,
        source_thread_id: str,
        new_thread_id: str | None = None,
        resource_id: str | None = None,
        title: str | None = None,
        message_limit: int | None = None,
        message_filter: CloneMessageFilterInput | None = None,
    ) -> CloneResult:
        """Copy a thread and (some of) its messages under new ids."""
        ...
