"""Messages from JSON Lines: the format that ``mastra-memory ingest`` reads and the demo sample uses.

One JSON object per line; blank lines are skipped::

    {"id": "m1", "thread_id": "t1", "resource_id": "alex", "role": "user",
     "content": "We named the puppy Miso", "created_at": "2025-02-16T16:20:00.000Z", "thread_title": "Puppy"}

* ``thread_id``, ``role`` (``user`` or ``assistant``; ``system`` lines are accepted but not stored) and
  ``content`` are required. ``content`` is a string, a v1 part list, or format-2 content
  (``{"format": 2, "parts": [...]}``).
* ``resource_id`` is required for a thread that does not exist yet: the thread is created for that
  resource. ``thread_title`` (optional) titles a thread created this way.
* ``id`` and ``created_at`` are optional: a missing id becomes a uuid, a missing timestamp "now" (in line
  order). Re-loading a line with the same id replaces the stored message.
* camelCase spellings (``threadId``, ``resourceId``, ``createdAt``, ``threadTitle``) are accepted.

The whole file is read and checked before anything is written, so an invalid line (reported with its line
number) leaves the database untouched. Messages are then saved in batches; each batch is one transaction.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import MastraMemoryError, ValidationError
from ..memory import Memory
from ..messages import MastraDBMessage, normalize_messages

Advance = Callable[[int], None]
"""Called with the number of messages just saved (drives a progress bar)."""

_ALIASES = {
    "threadId": "thread_id",
    "resourceId": "resource_id",
    "createdAt": "created_at",
    "threadTitle": "thread_title",
}
_FIELDS = ("id", "thread_id", "resource_id", "role", "type", "content", "created_at", "thread_title")


class BatchError(MastraMemoryError):
    """Saving one batch failed after every check passed; earlier batches stay saved."""

    default_domain = "MEMORY"


@dataclass(slots=True)
class ThreadSpec:
    """A thread the file mentions: its resource and title as given by the first line that sets them."""

    id: str
    line: int
    resource_id: str | None = None
    resource_line: int | None = None
    title: str = ""


@dataclass(slots=True)
class MessageFile:
    """The checked content of a JSON Lines file: messages in file order, the line of each, and threads."""

    source: str
    messages: list[MastraDBMessage] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    threads: dict[str, ThreadSpec] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LoadReport:
    """What :func:`load_messages` wrote."""

    saved: int
    skipped: int
    threads_created: list[str]
    threads_touched: list[str]


def _line_error(source: str, line: int, problem: str) -> ValidationError:
    return ValidationError(f"{source}, line {line}: {problem}", details={"source": source, "line": line})


def _optional_str(data: dict[str, Any], key: str, source: str, line: int) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _line_error(source, line, f"{key} must be a non-empty string, got {value!r}")
    return value


def _required_str(data: dict[str, Any], key: str, source: str, line: int) -> str:
    value = _optional_str(data, key, source, line)
    if value is None:
        raise _line_error(source, line, f"{key} must be a non-empty string, got null")
    return value


def _record(raw: str, source: str, line: int) -> dict[str, Any]:
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise _line_error(source, line, f"invalid JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(obj, dict):
        raise _line_error(source, line, f"expected a JSON object, got {type(obj).__name__}")
    data: dict[str, Any] = {}
    for key, value in obj.items():
        name = _ALIASES.get(key, key)
        if name not in _FIELDS:
            raise _line_error(source, line, f"unknown field {key!r}; expected one of {', '.join(_FIELDS)}")
        if name in data:
            raise _line_error(source, line, f"field {name!r} is given twice (snake_case and camelCase)")
        data[name] = value
    for required in ("thread_id", "role", "content"):
        if required not in data:
            raise _line_error(source, line, f"missing required field {required!r}")
    return data


def parse_lines(lines: Iterable[str], source: str) -> MessageFile:
    """Read and check every line; raise ValidationError naming the first bad line (nothing is written)."""
    parsed = MessageFile(source=source)
    seen_ids: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        data = _record(raw, source, number)
        thread_id = _required_str(data, "thread_id", source, number)
        resource_id = _optional_str(data, "resource_id", source, number)
        title = data.pop("thread_title", None)
        if title is not None and not isinstance(title, str):
            raise _line_error(source, number, f"thread_title must be a string, got {title!r}")
        spec = parsed.threads.setdefault(thread_id, ThreadSpec(id=thread_id, line=number))
        if resource_id is not None:
            if spec.resource_id is None:
                spec.resource_id, spec.resource_line = resource_id, number
            elif spec.resource_id != resource_id:
                raise _line_error(
                    source,
                    number,
                    f"thread {thread_id!r} has resource_id {spec.resource_id!r} on line {spec.resource_line} "
                    f"but {resource_id!r} here; a thread belongs to exactly one resource",
                )
        if title and not spec.title:
            spec.title = title
        try:
            messages = normalize_messages([data])
        except ValidationError as exc:
            problem = str(exc).removeprefix("invalid message [0]: ").removeprefix("message [0]: ")
            raise _line_error(source, number, problem) from None
        for message in messages:
            if message.id in seen_ids:
                raise _line_error(
                    source,
                    number,
                    f"message id {message.id!r} was already used on line {seen_ids[message.id]}",
                )
            seen_ids[message.id] = number
            parsed.messages.append(message)
            parsed.lines.append(number)
    return parsed


def read_file(path: Path) -> MessageFile:
    """Read and check a JSON Lines file (UTF-8); a line that is not valid UTF-8 is reported by number."""
    source = str(path)
    lines: list[str] = []
    for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
        try:
            lines.append(raw.decode("utf-8-sig" if number == 1 else "utf-8"))  # tolerate a BOM
        except UnicodeDecodeError as exc:
            raise _line_error(source, number, f"not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    return parse_lines(lines, source)


async def check_threads(memory: Memory, parsed: MessageFile) -> list[ThreadSpec]:
    """Check the file's threads against the database; return the threads that must be created.

    Raises ValidationError naming the line when a new thread has no resource_id, or when the file gives
    an existing thread another resource than the stored one.
    """
    missing: list[ThreadSpec] = []
    for spec in parsed.threads.values():
        stored = await memory.get_thread_by_id(spec.id)
        if stored is None:
            if spec.resource_id is None:
                raise _line_error(
                    parsed.source,
                    spec.line,
                    f"thread {spec.id!r} does not exist yet; give resource_id so it can be created",
                )
            missing.append(spec)
        elif spec.resource_id is not None and stored.resource_id != spec.resource_id:
            raise _line_error(
                parsed.source,
                spec.resource_line or spec.line,
                f"thread {spec.id!r} already exists and belongs to another resource "
                f"than {spec.resource_id!r}",
            )
    return missing


async def load_messages(
    memory: Memory,
    parsed: MessageFile,
    *,
    batch_size: int = 100,
    advance: Advance | None = None,
    to_create: Sequence[ThreadSpec] | None = None,
) -> LoadReport:
    """Save the checked messages through ``Memory.save_messages`` in batches of ``batch_size``.

    Every check runs before the first write (pass ``to_create`` from :func:`check_threads` when the
    caller has already checked). Threads are created just before the batch that first uses
    them, dated by their earliest message. Each batch is atomic: if one fails, the error says which
    lines were saved before it.
    """
    if batch_size < 1:
        raise ValidationError(f"batch size must be >= 1, got {batch_size}")
    if to_create is None:
        to_create = await check_threads(memory, parsed)
    pending = {spec.id: spec for spec in to_create}
    first_at: dict[str, datetime] = {}
    for message in parsed.messages:
        at = first_at.get(message.thread_id)
        if at is None or message.created_at < at:
            first_at[message.thread_id] = message.created_at
    created: list[str] = []
    saved = 0
    skipped = 0
    for start in range(0, len(parsed.messages), batch_size):
        batch: Sequence[MastraDBMessage] = parsed.messages[start : start + batch_size]
        for message in batch:
            spec = pending.pop(message.thread_id, None)
            if spec is not None:
                # A thread starts with its earliest message, so imported history keeps its dates.
                await memory.save_thread(
                    {
                        "id": spec.id,
                        "resource_id": spec.resource_id,
                        "title": spec.title,
                        "created_at": first_at[spec.id],
                        "updated_at": first_at[spec.id],
                    }
                )
                created.append(spec.id)
        try:
            result = await memory.save_messages(batch)
        except MastraMemoryError as exc:
            first, last = parsed.lines[start], parsed.lines[start + len(batch) - 1]
            before = f"lines before {first} are saved" if start else "nothing was saved"
            raise BatchError(
                f"{parsed.source}, lines {first}-{last}: {exc} ({before})",
                category=exc.category,
                details={**exc.details, "source": parsed.source, "first_line": first, "last_line": last},
            ) from exc
        saved += len(result.messages)
        skipped += len(batch) - len(result.messages)
        if advance is not None:
            advance(len(batch))
    return LoadReport(
        saved=saved,
        skipped=skipped,
        threads_created=created,
        threads_touched=list(parsed.threads),
    )
