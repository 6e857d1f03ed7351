"""Converting memory between storages and layouts (docs/spec.md §4.7): :func:`migrate`, the engine of
``mastra-memory migrate``.

Every thread (archived ones too), every message of each and every resource the threads and messages name is
read from the source through the public API, then written to the destination in **one unit of work**
through the storage hooks (:mod:`.hooks`) rather than ``save_thread``/``save_messages``: those apply the
§4.5 ``updated_at`` bump, and a conversion must keep every record exactly as stored (ids, timestamps to the
millisecond, metadata, working memory). The hooks are what every ``MemoryStorage`` implements, so this works
on each storage built on the template (SQLite, LibSQL, pgvector and MongoDB in either layout). Because it
is one unit, a failure part-way leaves a transactional destination as it was (rolled back, not half-written).

The guard: the destination's own layout check refuses a database of the other layout before anything is
written (``StorageLayoutError``), and inside the unit, before the first write, a destination that already
holds any of the ids being written with a *different* record is refused with :class:`MigrationConflictError`,
so a conversion never overwrites a record. A record already there exactly as it would be written is left
alone and not written again: that is what an earlier run of the same conversion left, and it makes a rerun
complete a conversion that stopped part-way on a destination without transactions (MongoDB on a standalone
server or FerretDB, where the unit is a sequence of single-document writes).

Vectors are not copied: the two layouts key them differently (Mastra: a random uuid per chunk; this
project: ``<message id>#<chunk>``), so the destination's vectors are rebuilt from the converted messages with
the configured embedder (``mastra-memory reindex``, §4.7).

With ``dry_run`` the source is read, the destination is **not opened**, and the hooks run against a
recorder instead of a connection: the report lists the SQL statements (or, for MongoDB, the collection
operations) the destination would run, and nothing is written anywhere.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import StorageError
from ..messages import MastraDBMessage
from .base import MemoryStorage
from .records import Resource, Thread

__all__ = ["MigrationConflictError", "MigrationData", "MigrationReport", "migrate", "read_everything"]

#: Longest parameter list shown after a dry-run statement; the rest is elided (contents can be large).
_SHOWN_PARAMS = 160


class MigrationConflictError(StorageError):
    """The destination already holds records with the ids being converted; nothing was written."""


@dataclass(frozen=True, slots=True)
class MigrationData:
    """Everything a conversion carries: threads, their messages (ascending by ``(created_at, id)`` per
    thread) and the resources they name."""

    threads: tuple[Thread, ...]
    messages: tuple[MastraDBMessage, ...]
    resources: tuple[Resource, ...]


@dataclass(frozen=True, slots=True)
class MigrationReport:
    """What :func:`migrate` did (or, with ``dry_run``, would do)."""

    threads: int
    messages: int
    resources: int
    dry_run: bool
    #: The destination's SQL, in order, when ``dry_run`` (one line per statement, parameters as a comment),
    #: or a document store's operations (``threads.update_one(...)``); empty after a real run.
    statements: tuple[str, ...] = field(default=())
    #: Records (of those counted above) the destination already held exactly as they would be written --
    #: left by an earlier run of the same conversion -- and that were not written again (0 on a dry run).
    already_there: int = 0


async def read_everything(source: MemoryStorage) -> MigrationData:
    """Every thread (archived too), message and named resource of ``source``, as stored."""
    threads = (await source.list_threads(per_page=False, include_archived=True)).threads
    messages: list[MastraDBMessage] = []
    for thread in threads:
        page = await source.list_messages(thread.id, per_page=False, include_total=False)
        messages.extend(page.messages)
    resource_ids = dict.fromkeys(
        [t.resource_id for t in threads] + [m.resource_id for m in messages if m.resource_id]
    )
    resources = []
    for resource_id in resource_ids:
        resource = await source.get_resource_by_id(resource_id)
        if resource is not None:
            resources.append(resource)
    return MigrationData(tuple(threads), tuple(messages), tuple(resources))


async def migrate(
    source: MemoryStorage, destination: MemoryStorage, *, dry_run: bool = False
) -> MigrationReport:
    """Copy every thread, message and resource of ``source`` into ``destination``, losing nothing.

    Records keep their ids, timestamps (to the millisecond), metadata and working memory; no ``updated_at``
    is bumped. The destination is written in one unit of work: with transactions, a failure leaves it as it
    was; without (MongoDB on a standalone server or FerretDB) the records written so far stay, and running
    the same conversion again writes the rest. It must hold none of these ids with other contents (else
    :class:`MigrationConflictError`, nothing written; records already there unchanged are skipped and
    counted in ``already_there``) and be of its store's layout (else that store's ``StorageLayoutError``,
    nothing written). Vectors are not copied: rebuild them with
    ``Memory.reindex_thread`` / ``mastra-memory reindex`` over the destination.

    With ``dry_run=True`` the destination is not opened; the report's ``statements`` hold the SQL it would
    run. ``source`` and ``destination`` are left open; close them when done.
    """
    if source is destination:
        raise MigrationConflictError(
            "the source and the destination are the same storage; nothing to convert"
        )
    data = await read_everything(source)
    if dry_run:
        statements = await _recorded(destination, data)
        return MigrationReport(
            len(data.threads), len(data.messages), len(data.resources), True, tuple(statements)
        )
    # Encoded before any I/O: content the destination cannot hold fails here, not half-way.
    encoded = [(m, destination._encode_content(m)) for m in data.messages]
    _check_ids(destination, data)

    async def work(tx: Any) -> int:
        todo = await _refuse_existing(destination, tx, data)
        wanted = {m.id for m in todo.messages}
        await _write(destination, tx, todo, [(m, c) for m, c in encoded if m.id in wanted])
        return _count(data) - _count(todo)

    skipped = await destination._run_unit("MIGRATE", work, write=True, idempotent=False)
    return MigrationReport(
        len(data.threads), len(data.messages), len(data.resources), False, already_there=skipped
    )


def _count(data: MigrationData) -> int:
    return len(data.threads) + len(data.messages) + len(data.resources)


def _same(stored: Any, converted: Any) -> bool:
    """Whether a record the destination holds is the one the conversion would write (every field)."""
    return bool(stored.model_dump(mode="json") == converted.model_dump(mode="json"))


def _check_ids(destination: MemoryStorage, data: MigrationData) -> None:
    destination._check_text(
        "MIGRATE",
        *[(t.id, "thread id") for t in data.threads],
        *[(m.id, "message id") for m in data.messages],
        *[(r.id, "resource id") for r in data.resources],
    )


async def _refuse_existing(destination: MemoryStorage, tx: Any, data: MigrationData) -> MigrationData:
    """Inside the unit, before the first write: no id being written may hold a different record already
    (the guard). Returns what is left to write: ``data`` without the records already there unchanged."""
    found: list[str] = []
    threads: dict[str, Thread] = {}
    if data.threads:
        threads = await destination._load_threads(tx, sorted({t.id for t in data.threads}))
        found += [f"thread {t.id!r}" for t in data.threads if t.id in threads and not _same(threads[t.id], t)]
    messages: dict[str, MastraDBMessage] = {}
    if data.messages:
        messages = {m.id: m for m in await destination._find_by_id(tx, sorted({m.id for m in data.messages}))}
        found += [
            f"message {m.id!r}" for m in data.messages if m.id in messages and not _same(messages[m.id], m)
        ]
    resources: set[str] = set()
    for resource in data.resources:
        stored = await destination._load_resource(tx, resource.id)
        if stored is None:
            continue
        resources.add(resource.id)
        if not _same(stored, resource):
            found.append(f"resource {resource.id!r}")
    if found:
        shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
        raise MigrationConflictError(
            f"the destination already holds {shown} with other contents; convert into an empty database "
            "(nothing was written)",
            details={"conflicts": len(found)},
        )
    return MigrationData(
        tuple(t for t in data.threads if t.id not in threads),
        tuple(m for m in data.messages if m.id not in messages),
        tuple(r for r in data.resources if r.id not in resources),
    )


async def _write(
    destination: MemoryStorage,
    tx: Any,
    data: MigrationData,
    encoded: Sequence[tuple[MastraDBMessage, Any]],
) -> None:
    for thread in data.threads:
        await destination._write_thread(tx, thread)
    if encoded:
        await destination._write_messages(tx, encoded)
    for resource in data.resources:
        await destination._write_resource(tx, resource)


async def _recorded(destination: MemoryStorage, data: MigrationData) -> list[str]:
    """The destination's write statements for ``data``, recorded instead of run (no connection opens)."""
    encoded = [(m, destination._encode_content(m)) for m in data.messages]
    recorder = _Recorder()
    try:
        await _write(destination, recorder, data, encoded)
    except (AttributeError, TypeError):
        # A storage whose hooks do not take a DB-API style connection (a document store): no SQL to show.
        return []
    return recorder.lines


class _Done:
    """What a recorded call returns: awaitable (async drivers) and ignorable (sync drivers)."""

    def __await__(self) -> Generator[Any, None, _Done]:
        return self
        yield  # pragma: no cover - makes this a generator


class _Recorder:
    """Stands in for a connection: records ``execute``/``executemany`` (sync or awaited, or on a cursor)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def execute(self, sql: str, params: Any = None) -> _Done:
        self.lines.append(f"{_one_line(sql)};  -- {_shown(params)}")
        return _Done()

    def executemany(self, sql: str, rows: Sequence[Any]) -> _Done:
        rows = list(rows)
        self.lines.append(f"{_one_line(sql)};  -- {len(rows)} row(s): {_shown(rows)}")
        return _Done()

    def cursor(self) -> _Recorder:
        return self

    async def __aenter__(self) -> _Recorder:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def __getattr__(self, name: str) -> _Target:
        # A document store's hooks reach their collections as attributes of what they are given
        # (``tx.threads.update_one(...)``): each one is recorded as the operation it would run.
        if name.startswith("_"):
            raise AttributeError(name)
        return _Target(self.lines, name)


class _Target:
    """A collection (or other attribute) of a document store's unit, as the recorder hands it out: each
    method call is recorded as ``<attribute>.<method>(<arguments>)``; a ``session`` argument is left out."""

    def __init__(self, lines: list[str], name: str) -> None:
        self._lines, self._name = lines, name

    def __getattr__(self, method: str) -> Any:
        if method.startswith("_"):
            raise AttributeError(method)

        def record(*args: Any, **kwargs: Any) -> _Done:
            shown = [_shown(a) for a in args] + [
                f"{k}={_shown(v)}" for k, v in kwargs.items() if k != "session"
            ]
            self._lines.append(f"{self._name}.{method}({', '.join(shown)})")
            return _Done()

        return record


def _one_line(sql: str) -> str:
    return " ".join(sql.split())


def _shown(params: Any) -> str:
    text = repr(params)
    return text if len(text) <= _SHOWN_PARAMS else text[: _SHOWN_PARAMS - 3] + "..."
