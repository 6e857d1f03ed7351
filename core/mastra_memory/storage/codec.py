"""Plain data as JSON text: how storages hold metadata and message content (docs/spec.md §4.1).

Storage keeps what it is given, so anything that is not plain JSON data is refused before any I/O:
NaN, infinities and arbitrary objects raise ValidationError; datetimes become canonical timestamps. The
template uses :func:`json_text` to check metadata and to encode content; storages that keep JSON text
columns (the SQL ones) store its output and read rows back with :func:`record_from_row`.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel

from ..errors import ValidationError
from ..messages import MastraDBMessage
from ..metadata_limits import is_unicode
from ..timestamps import canonical_timestamp
from .records import Resource, Thread

__all__ = [
    "MESSAGE_COLUMNS",
    "RESOURCE_COLUMNS",
    "THREAD_COLUMNS",
    "json_text",
    "json_text_or_none",
    "message_from_row",
    "record_from_row",
    "resource_from_row",
    "thread_from_row",
]

M = TypeVar("M", bound=BaseModel)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return canonical_timestamp(value)
    raise TypeError(f"{type(value).__name__} is not a JSON type")


def json_text(value: Any, what: str, *, ensure_ascii: bool = False) -> str:
    """Compact JSON text of plain data; ``what`` names the value in the ValidationError otherwise.

    Text must be Unicode: a string with an unpaired surrogate cannot be stored as UTF-8 (docs/spec.md
    §4.1), and data nested beyond what the encoder can walk is refused rather than raising RecursionError.
    """
    try:
        text = json.dumps(
            value, ensure_ascii=ensure_ascii, allow_nan=False, separators=(",", ":"), default=_json_default
        )
    except (TypeError, ValueError, OverflowError) as exc:  # OverflowError: a datetime beyond UTC's years
        raise ValidationError(
            f"{what} is not JSON-serialisable (no NaN, infinities or objects): {exc}"
        ) from None
    except RecursionError:
        raise ValidationError(
            f"{what} is nested too deeply to be stored; flatten it (e.g. store the deep part as a JSON "
            "string)"
        ) from None
    if not ensure_ascii and not is_unicode(text):
        raise ValidationError(
            f"{what} contains an unpaired surrogate, which is not Unicode text and cannot be stored; "
            "pass valid Unicode (e.g. decode bytes with errors='replace')"
        )
    return text


def json_text_or_none(value: Mapping[str, Any] | None, what: str) -> str | None:
    """:func:`json_text` of a metadata dict, or ``None`` for no metadata."""
    return None if value is None else json_text(dict(value), what)


def record_from_row(
    model: type[M], columns: Sequence[str], row: Sequence[Any], json_columns: Collection[str]
) -> M:
    """A ``model`` instance from a row of ``columns``, decoding the JSON-text ones (``NULL`` stays ``None``).

    Timestamps may be aware datetimes or epoch milliseconds; the records' validators accept both.
    """
    data = dict(zip(columns, row, strict=True))
    for name in json_columns:
        text = data[name]
        data[name] = None if text is None else json.loads(text)
    return model.model_validate(data)


# The columns of a row, in record field order, for storages whose tables mirror the records.
MESSAGE_COLUMNS = ("id", "thread_id", "resource_id", "role", "type", "content", "created_at")
THREAD_COLUMNS = ("id", "resource_id", "title", "metadata", "created_at", "updated_at")
RESOURCE_COLUMNS = ("id", "working_memory", "metadata", "created_at", "updated_at")


def message_from_row(row: Sequence[Any]) -> MastraDBMessage:
    """A message from a row of :data:`MESSAGE_COLUMNS` whose ``content`` is JSON text."""
    return record_from_row(MastraDBMessage, MESSAGE_COLUMNS, row, ("content",))


def thread_from_row(row: Sequence[Any]) -> Thread:
    """A thread from a row of :data:`THREAD_COLUMNS` whose ``metadata`` is JSON text or ``NULL``."""
    return record_from_row(Thread, THREAD_COLUMNS, row, ("metadata",))


def resource_from_row(row: Sequence[Any]) -> Resource:
    """A resource from a row of :data:`RESOURCE_COLUMNS` whose ``metadata`` is JSON text or ``NULL``."""
    return record_from_row(Resource, RESOURCE_COLUMNS, row, ("metadata",))
