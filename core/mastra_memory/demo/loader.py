"""Messages from JSON Lines or a JSON array: what ``mastra-memory ingest`` reads and the demo sample uses.

One JSON object per line (blank lines are skipped), or one JSON array of such objects::

    {"id": "m1", "thread_id": "t1", "resource_id": "alex", "role": "user",
     "content": "We named the puppy Miso", "created_at": "2025-02-16T16:20:00.000Z", "thread_title": "Puppy"}

* ``thread_id``, ``role`` (``user`` or ``assistant``; ``system`` lines are accepted but not stored) and
  ``content`` are required. ``content`` is a string, a v1 part list, or format-2 content
  (``{"format": 2, "parts": [...]}``).
* ``resource_id`` is required for a thread that does not exist yet: the thread is created for that
  resource. ``thread_title`` (optional) titles a thread created this way.
* ``id`` and ``created_at`` are optional: a missing id becomes a uuid, a missing timestamp (or the string
  ``"now"``) the current time, in line order. Re-loading a line with the same id replaces the stored
  message.
* camelCase spellings (``threadId``, ``resourceId``, ``createdAt``, ``threadTitle``) are accepted.

The whole file is read and checked before anything is written, so invalid lines (every one is reported,
with its line number) leave the database untouched. Messages are then saved in batches; each batch is one
transaction.
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
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line, problem) of every bad line

    def check(self) -> None:
        """Raise one ValidationError listing every problem found (nothing has been written yet)."""
        raise_problems(self.source, self.problems)


@dataclass(frozen=True, slots=True)
class LoadReport:
    """What :func:`load_messages` wrote."""

    saved: int
    skipped: int
    threads_created: list[str]
    threads_touched: list[str]


class _LineProblem(Exception):
    """One line's problem while checking a file (collected, then reported together)."""

    def __init__(self, line: int, problem: str) -> None:
        super().__init__(problem)
        self.line = line
        self.problem = problem


def _line_error(source: str, line: int, problem: str) -> _LineProblem:
    return _LineProblem(line, problem)


def raise_problems(source: str, problems: Sequence[tuple[int, str]]) -> None:
    """Raise ValidationError naming every bad line, if there is one; ``details["problems"]`` lists them."""
    if not problems:
        return
    ordered = sorted(problems)
    details = {"source": source, "problems": [{"line": n, "problem": p} for n, p in ordered]}
    if len(ordered) == 1:
        line, problem = ordered[0]
        raise ValidationError(f"{source}, line {line}: {problem} (nothing was saved)", details=details)
    listing = "\n".join(f"  line {n}: {p}" for n, p in ordered)
    raise ValidationError(
        f"{source}: {len(ordered)} invalid lines, nothing was saved:\n{listing}", details=details
    )


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


def _decode(raw: str, source: str, line: int) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise _line_error(source, line, f"invalid JSON: {exc.msg} at column {exc.colno}") from None


def _record(obj: Any, source: str, line: int) -> dict[str, Any]:
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
    created = data.get("created_at")
    if isinstance(created, str) and created.strip().lower() == "now":
        del data["created_at"]  # "now" is the default: the time of loading, in line order
    return data


def parse_lines(lines: Iterable[str], source: str) -> MessageFile:
    """Read and check JSON Lines (one object per line); raise ValidationError naming every bad line."""
    items: list[tuple[int, Any]] = []
    problems: list[tuple[int, str]] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            items.append((number, _decode(raw, source, number)))
        except _LineProblem as problem:
            problems.append((problem.line, problem.problem))
    parsed = parse_records(items, source, problems)
    parsed.check()
    return parsed


def parse_records(
    items: Iterable[tuple[int, Any]], source: str, problems: Sequence[tuple[int, str]] = ()
) -> MessageFile:
    """Check decoded records, each with its line number; every problem is collected in ``.problems``."""
    parsed = MessageFile(source=source, problems=list(problems))
    seen_ids: dict[str, int] = {}
    for number, obj in items:
        try:
            _add_record(parsed, seen_ids, obj, number)
        except _LineProblem as problem:
            parsed.problems.append((problem.line, problem.problem))
    return parsed


def _add_record(parsed: MessageFile, seen_ids: dict[str, int], obj: Any, number: int) -> None:
    source = parsed.source
    data = _record(obj, source, number)
    thread_id = _required_str(data, "thread_id", source, number)
    resource_id = _optional_str(data, "resource_id", source, number)
    title = data.pop("thread_title", None)
    if title is not None and not isinstance(title, str):
        raise _line_error(source, number, f"thread_title must be a string, got {title!r}")
    try:
        messages = normalize_messages([data])
    except ValidationError as exc:
        problem = str(exc).removeprefix("invalid message [0]: ").removeprefix("message [0]: ")
        raise _line_error(source, number, problem) from None
    for message in messages:
        if message.id in seen_ids:
            raise _line_error(
                source, number, f"message id {message.id!r} was already used on line {seen_ids[message.id]}"
            )
    # The line is valid on its own: now it may claim its thread's resource and title.
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
    for message in messages:
        seen_ids[message.id] = number
        parsed.messages.append(message)
        parsed.lines.append(number)


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _array_items(text: str, source: str) -> list[tuple[int, Any]]:
    """The elements of a JSON array document, each with the line it starts on."""
    decoder = json.JSONDecoder()
    items: list[tuple[int, Any]] = []
    at = _skip_space(text, _skip_space(text, 0) + 1)  # after "["
    try:
        if at < len(text) and text[at] == "]":
            at += 1
        else:
            while True:
                obj, end = decoder.raw_decode(text, at)
                items.append((text.count("\n", 0, at) + 1, obj))
                at = _skip_space(text, end)
                if at < len(text) and text[at] == ",":
                    at = _skip_space(text, at + 1)
                    continue
                if at < len(text) and text[at] == "]":
                    at += 1
                    break
                raise json.JSONDecodeError("expected ',' or ']' in the array", text, at)
        if _skip_space(text, at) != len(text):
            raise json.JSONDecodeError("extra data after the array", text, _skip_space(text, at))
    except json.JSONDecodeError as exc:
        raise_problems(
            source,
            [(exc.lineno, f"invalid JSON array: {exc.msg} at column {exc.colno}")],
        )
    return items


def read_file(path: Path) -> MessageFile:
    """Read and check a JSON Lines file or a JSON array (UTF-8); every bad line is reported by number."""
    source = str(path)
    lines: list[str] = []
    problems: list[tuple[int, str]] = []
    for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
        try:
            lines.append(raw.decode("utf-8-sig" if number == 1 else "utf-8"))  # tolerate a BOM
        except UnicodeDecodeError as exc:
            problems.append((number, f"not valid UTF-8 ({exc.reason} at byte {exc.start})"))
            lines.append("")
    raise_problems(source, problems)
    text = "\n".join(lines)
    if text.lstrip().startswith("["):
        parsed = parse_records(_array_items(text, source), source)
        parsed.check()
        return parsed
    return parse_lines(lines, source)


async def check_threads(memory: Memory, parsed: MessageFile) -> list[ThreadSpec]:
    """Check the file's threads against the database; return the threads that must be created.

    Raises one ValidationError naming every line where a new thread has no resource_id, or where the file
    gives an existing thread another resource than the stored one. Only reads the storage.
    """
    parsed.check()
    missing: list[ThreadSpec] = []
    problems: list[tuple[int, str]] = []
    for spec in parsed.threads.values():
        stored = await memory.get_thread_by_id(spec.id)
        if stored is None:
            if spec.resource_id is None:
                problems.append(
                    (
                        spec.line,
                        f"thread {spec.id!r} does not exist yet; give resource_id so it can be created",
                    )
                )
            missing.append(spec)
        elif spec.resource_id is not None and stored.resource_id != spec.resource_id:
            problems.append(
                (
                    spec.resource_line or spec.line,
                    f"thread {spec.id!r} already exists and belongs to another resource "
                    f"than {spec.resource_id!r}",
                )
            )
    raise_problems(parsed.source, problems)
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
