"""The argument checks every storage shares (docs/spec.md §4.2-§4.5), run before any I/O.

Each check raises :class:`~mastra_memory.errors.ValidationError` (or its subclass
FilterValidationError) with the id ``MASTRA_STORAGE_<STORE>_<OPERATION>_<STATUS>``, so argument errors
carry the same messages on every backend. :class:`~mastra_memory.storage.MemoryStorage` calls them; a
storage built on the template never needs to.

Why one module of this size: it is the storage contract's whole input boundary (ids, pages, include
windows, filters, patches, limits), kept together so every rule is reviewed beside its siblings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError
from pydantic.alias_generators import to_camel

from ..errors import FilterValidationError, ValidationError, error_id, pydantic_problems
from ..filters.numbers import INT64_MAX
from ..messages import MessageContentV2, coerce_datetime
from ..metadata_limits import RECORD_METADATA, is_unicode, metadata_problem, text_problem
from .metadata_filter import MetadataScalar, validate_metadata_filter
from .records import (
    CloneArgs,
    CloneMessageFilter,
    DateRange,
    IncludeItem,
    ListMessagesQuery,
    ListThreadsQuery,
    MessageFilter,
    MessageUpdate,
    OrderBy,
    PerPage,
    Resource,
    Thread,
    ThreadFilter,
    ThreadOrderBy,
    normalise_order_input,
)

__all__ = [
    "DEFAULT_MESSAGES_PER_PAGE",
    "DEFAULT_THREADS_PER_PAGE",
    "check_record_metadata",
    "non_blank",
    "parse_model",
    "validate_clone_args",
    "validate_list",
    "validate_list_messages_args",
    "validate_list_messages_by_resource_args",
    "validate_list_threads_args",
    "validate_message_ids",
    "validate_resource_id",
    "validate_resource_patch",
    "validate_thread_patch",
]

M = TypeVar("M", bound=BaseModel)

DEFAULT_MESSAGES_PER_PAGE = 40  # docs/spec.md §4.3
DEFAULT_THREADS_PER_PAGE = 100  # docs/spec.md §4.4


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
    if per_page is not False and (page * per_page > INT64_MAX or per_page > INT64_MAX):
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
    if not is_unicode(resource_id):
        raise _error(
            store,
            operation,
            "INVALID_RESOURCE_ID",
            f"resource_id must be a non-empty string of Unicode text, got {resource_id[:60]!r} (an "
            "unpaired surrogate)",
        )
    return resource_id


def parse_model(model: type[M], raw: Any, *, store: str, operation: str, status: str, what: str) -> M:
    """``raw`` as a ``model`` instance; pydantic's problems become one ValidationError ``invalid <what>: ...``
    with the status given.

    The metadata a write brings — of a :class:`Thread`, a :class:`Resource`, a message's content
    (``MessageContentV2``) or the content patch of a :class:`MessageUpdate` — is checked against the
    limits of docs/spec.md §4.1 too (:func:`check_record_metadata`, status ``INVALID_METADATA``), and the
    text of a message's content must be Unicode text.
    """
    if isinstance(raw, model):
        parsed = raw
    else:
        try:
            parsed = model.model_validate(raw)
        except PydanticValidationError as exc:
            problems = pydantic_problems(exc, strip_value_error=True)
            raise _error(store, operation, status, f"invalid {what}: " + "; ".join(problems)) from None
    metadata: Any = None
    if isinstance(parsed, Thread | Resource | MessageContentV2):
        metadata = parsed.metadata
    elif isinstance(parsed, MessageUpdate) and parsed.content is not None:
        metadata = parsed.content.get("metadata")
    check_record_metadata(metadata, what, store=store, operation=operation)
    if isinstance(parsed, MessageContentV2):  # text of a write must be Unicode text (docs/spec.md §4.1)
        unpaired = text_problem(parsed.model_dump())
        if unpaired is not None:
            raise _error(store, operation, status, f"invalid {what}: {unpaired}")
    return parsed


def check_record_metadata(metadata: Any, what: str, *, store: str, operation: str) -> None:
    """Metadata of a thread, a resource or a message within the limits of docs/spec.md §4.1 (depth, keys,
    size, Unicode text: :data:`~mastra_memory.metadata_limits.RECORD_METADATA`), else ValidationError
    ``<OPERATION>_INVALID_METADATA``. ``None`` and non-dicts are left to the type checks."""
    if not isinstance(metadata, Mapping):
        return
    problem = metadata_problem(metadata, RECORD_METADATA)
    if problem is not None:
        raise _error(store, operation, "INVALID_METADATA", f"invalid {what}: {problem}")


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
        parsed = parse_model(
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
        if not isinstance(item_id, str) or not item_id.strip() or not is_unicode(item_id):
            raise _error(
                store,
                operation,
                "INVALID_INCLUDE",
                f"include[{index}].id must be a non-empty string (of Unicode text)",
            )
        for count in ("with_previous_messages", "with_next_messages"):
            value = _lookup(item, count)
            if value is not None and (not _is_int(value) or value < 0):
                raise _error(
                    store, operation, "INVALID_INCLUDE", f"include[{index}].{count} must be an integer >= 0"
                )
        hint = _lookup(item, "thread_id")
        if hint is not None and (not isinstance(hint, str) or not is_unicode(hint)):
            raise _error(
                store,
                operation,
                "INVALID_INCLUDE",
                f"include[{index}].thread_id must be a string (of Unicode text)",
            )
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
    raw: Any, model: type[BaseModel], fields: tuple[str, ...], *, store: str, operation: str
) -> Any:
    if raw is None:
        return model()
    if isinstance(raw, model):
        return raw
    if not isinstance(raw, Mapping):
        raise _error(store, operation, "INVALID_ORDER_BY", "order_by must be a dict with field and direction")
    fixed = normalise_order_input(raw)
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


def _message_query(
    thread_ids: tuple[str, ...],
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
) -> ListMessagesQuery:
    """The checks both listings share (docs/spec.md §4.3 step 1), in the order errors are reported."""
    effective_per_page: PerPage = DEFAULT_MESSAGES_PER_PAGE if per_page is None else per_page
    _check_page(page, effective_per_page, store=store, operation=operation)
    resource = validate_resource_id(resource_id, store=store, operation=operation, required=not thread_ids)
    parsed_filter = _parse_message_filter(filter, store=store, operation=operation)
    items = _parse_include(include, store=store, operation=operation)
    order: OrderBy = _parse_order(order_by, OrderBy, ("created_at",), store=store, operation=operation)
    if not isinstance(include_total, bool):
        raise _error(store, operation, "INVALID_ARGS", "include_total must be a bool")
    return ListMessagesQuery(
        thread_ids=thread_ids,
        resource_id=resource,
        include=items,
        per_page=effective_per_page,
        page=page,
        filter=parsed_filter,
        order=order,
        include_total=include_total,
    )


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
    if not all(is_unicode(t) for t in ids):
        raise _error(
            store,
            operation,
            "INVALID_THREAD_ID",
            "thread_id must be a non-empty string or a list of non-empty strings of Unicode text (no "
            "unpaired surrogates)",
        )
    return _message_query(
        tuple(dict.fromkeys(ids)),
        *(resource_id, include, per_page, page, filter, order_by, include_total),
        store=store,
        operation=operation,
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
    return _message_query(
        (),
        *(resource_id, include, per_page, page, filter, order_by, include_total),
        store=store,
        operation="LIST_MESSAGES_BY_RESOURCE_ID",
    )


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
    non_blank(source_thread_id, "source_thread_id", store=store, operation=operation)
    if new_thread_id is not None:
        non_blank(new_thread_id, "new_thread_id", store=store, operation=operation)
    resource = validate_resource_id(resource_id, store=store, operation=operation)
    if title is not None and not isinstance(title, str):
        raise _error(store, operation, "INVALID_ARGS", "title must be a string")
    if message_limit is not None and (not _is_int(message_limit) or message_limit < 0):
        raise _error(store, operation, "INVALID_ARGS", "message_limit must be an integer >= 0")
    parsed_filter: CloneMessageFilter | None = None
    if message_filter is not None:
        parsed_filter = parse_model(
            CloneMessageFilter,
            message_filter,
            store=store,
            operation=operation,
            status="INVALID_ARGS",
            what="message_filter",
        )
    return CloneArgs(new_thread_id, resource, title, message_limit, parsed_filter)


def non_blank(value: Any, name: str, *, store: str, operation: str) -> str:
    """``value`` if it is a non-blank string, else ValidationError ``<name> must be a non-empty string``."""
    if not isinstance(value, str) or not value.strip():
        raise _error(store, operation, "INVALID_ARGS", f"{name} must be a non-empty string")
    return value


def validate_list(value: Any, name: str, *, store: str, operation: str) -> None:
    """A batch argument (``messages``, ``updates``) must be a list, not a string, a dict or a scalar.

    Each item, as given, must be Unicode text throughout and nested at most
    :data:`~mastra_memory.metadata_limits.MAX_CONTENT_DEPTH` levels (docs/spec.md §4.1); a problem is a
    ValidationError ``INVALID_MESSAGE`` (``messages``) or ``INVALID_ARGS`` (``updates``).
    """
    if isinstance(value, str | Mapping) or not isinstance(value, Iterable):
        raise _error(store, operation, "INVALID_ARGS", f"{name} must be a list of {name}")
    if not isinstance(value, Sequence):
        return  # an iterator: checked once normalised, not consumed here
    for index, item in enumerate(value):
        problem = text_problem(item)
        if problem is not None:
            raise _error(
                store,
                operation,
                "INVALID_MESSAGE" if name == "messages" else "INVALID_ARGS",
                f"{name}[{index}]: {problem}",
            )


def _check_patch(metadata: Any, texts: Mapping[str, Any], *, store: str, operation: str) -> None:
    for name, text in texts.items():
        if text is not None and not isinstance(text, str):
            raise _error(store, operation, "INVALID_ARGS", f"{name} must be a string")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise _error(store, operation, "INVALID_ARGS", "metadata must be a dict")
    check_record_metadata(metadata, "metadata patch", store=store, operation=operation)


def validate_thread_patch(id: Any, title: Any, metadata: Any, *, store: str) -> None:
    """``update_thread`` arguments (docs/spec.md §4.2): a thread id, a string title, a dict of metadata."""
    operation = "UPDATE_THREAD"
    non_blank(id, "id", store=store, operation=operation)
    _check_patch(metadata, {"title": title}, store=store, operation=operation)


def validate_resource_patch(resource_id: Any, working_memory: Any, metadata: Any, *, store: str) -> None:
    """``update_resource`` arguments (docs/spec.md §4.2): an id, string working memory, dict metadata."""
    operation = "UPDATE_RESOURCE"
    non_blank(resource_id, "resource_id", store=store, operation=operation)
    _check_patch(metadata, {"working_memory": working_memory}, store=store, operation=operation)
