"""What every ``mastra-memory`` command shares: options, the one error wrapper, running a coroutine,
progress bars, and opening the memory a command works on."""

from __future__ import annotations

import asyncio
import json
import shlex
from collections.abc import Awaitable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar
from urllib.parse import urlsplit, urlunsplit

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

from ..errors import MastraMemoryError, ValidationError

if TYPE_CHECKING:
    from ..memory import Memory
    from ..messages import MastraDBMessage

T = TypeVar("T")

#: auto layout: below this terminal width a table squeezes every column, so text is printed instead.
TABLE_MIN_WIDTH = 100
DEFAULT_DB = Path("memory.db")
DEFAULT_EMBEDDER = "local/wordllama"

#: Below these scores a hit is marked weak. Measured on the demo sample (docs/memory.md "Thresholds"):
#: with local/wordllama the answering message scored 0.378-0.693 and every message of an unrelated thread
#: at most 0.230; with local/all-minilm-l6-v2 0.590-0.783 and at most 0.328. Scores stay cosine in every
#: recall mode, so one level per embedder holds for all. hash/<dim> has no such level (it measures shared
#: words), so its hits are never marked.
WEAK_SCORES = {"local/wordllama": 0.3, "local/all-minilm-l6-v2": 0.45}

DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db",
        metavar="PATH",
        help="SQLite file holding messages and vectors (default ./memory.db, as in Mastra); "
        "short for --storage sqlite:///PATH.",
    ),
]
StorageOption = Annotated[
    str | None,
    typer.Option(
        "--storage",
        metavar="URL",
        help="Message storage by URL or plugin name instead of --db: sqlite:///memory.db, "
        "pgvector://user:pw@host/db, ... (`mastra-memory plugins` lists what is installed).",
    ),
]
VectorOption = Annotated[
    str | None,
    typer.Option(
        "--vector",
        metavar="URL",
        help="Vector store by URL or plugin name: sqlite:///memory.db, lancedb:///path/to/dir, "
        "qdrant://host:6333, ...; default: the storage's own (same file or URL).",
    ),
]
EmbedderOption = Annotated[
    str,
    typer.Option(
        "--embedder",
        help="Embedder model string: local/wordllama (offline), hash/<dim>, "
        "openai/text-embedding-3-small, ollama/<model>, any provider/model of an OpenAI-compatible server "
        "with --embedder-option base_url=URL, ...",
    ),
]
EmbedderOptionsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--embedder-option",
        metavar="KEY=VALUE",
        help="An option for the embedder (repeatable), as embedder_options in Python: "
        "base_url=http://localhost:8000/v1, dimensions=256, ... VALUE is read as JSON when it is JSON "
        "(numbers, true, false, objects), else as text. An API key is better set in the provider's "
        "environment variable (OPENAI_API_KEY, ...) than on a command line.",
    ),
]
# metavar="": typer's help would show "<bool>" as if the flag took a value ("--json true" is refused).
JsonOption = Annotated[
    bool, typer.Option("--json", metavar="", help="Print JSON instead of tables (a flag).")
]


class Layout(StrEnum):
    """How results are printed: tables, compact text, or chosen from the terminal."""

    auto = "auto"
    table = "table"
    text = "text"


LayoutOption = Annotated[
    Layout,
    typer.Option(
        "--layout",
        help="table: wide tables; text: compact text, one block per message; auto: tables on a terminal "
        f"of at least {TABLE_MIN_WIDTH} columns, text otherwise (narrow terminals, pipes, files).",
    ),
]


class Scope(StrEnum):
    """Where semantic recall searches."""

    thread = "thread"
    resource = "resource"


class Mode(StrEnum):
    """How semantic recall ranks (``semanticRecall.mode``, docs/memory.md "Which embedder and mode to
    pick")."""

    auto = "auto"
    vector = "vector"
    hybrid = "hybrid"


ModeOption = Annotated[
    Mode,
    typer.Option(
        "--mode",
        help="auto: vectors fused with the store's lexical index where it has one (the embedded SQLite "
        "store does), vectors alone elsewhere; vector: vectors alone; hybrid: fused, refused by a store "
        "without a lexical index.",
    ),
]


def _untyped_flags(params: list[Any]) -> list[Any]:
    # typer 0.29 prints a type ("<bool>") for every flag, the help option included, as if it took a value
    # ("--json true" is refused): an empty metavar leaves that column blank.
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    return params


class Command(TyperCommand):
    """A typer command whose help shows no value type for flags."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _untyped_flags(super().get_params(ctx))


class Group(TyperGroup):
    """The typer group of ``mastra-memory``: no value type for its flags (``--version``, ``--help``)."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _untyped_flags(super().get_params(ctx))


def key_values(option: str, pairs: Sequence[str] | None, *, example: str, noun: str) -> dict[str, str]:
    """The ``KEY=VALUE`` pairs of the repeatable ``option``, in order. ValidationError, before any I/O, for
    a pair without ``=``, a blank key, or a key given twice (the message shows ``example`` and says to give
    each ``noun`` once)."""
    values: dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValidationError(f"{option} takes KEY=VALUE, such as {example}; got {pair!r}")
        if key in values:
            raise ValidationError(f"{option} {key} is given twice; give each {noun} once")
        values[key] = value
    return values


def embedder_options(pairs: Sequence[str] | None) -> dict[str, Any]:
    """The ``--embedder-option KEY=VALUE`` pairs as embedder options (a VALUE that parses as JSON is that
    value, else the text). ValidationError, before any I/O, for a malformed pair (:func:`key_values`)."""
    example = "base_url=http://localhost:8000/v1"
    options: dict[str, Any] = {}
    for key, raw in key_values("--embedder-option", pairs, example=example, noun="option").items():
        try:
            options[key] = json.loads(raw)
        except ValueError:
            options[key] = raw
    return options


#: Embedder options that may carry a credential: never printed back.
_SECRET_OPTIONS = frozenset({"api_key", "headers"})


def embedder_flags(embedder: str, options: Mapping[str, Any]) -> str:
    """The command-line options that name this embedder again, for messages that suggest a command (an API
    key or headers masked)."""
    parts = [f"--embedder {shlex.quote(embedder)}"]
    for key, value in options.items():
        text = value if isinstance(value, str) else json.dumps(value)
        shown = "***" if key in _SECRET_OPTIONS else text
        parts.append(f"--embedder-option {shlex.quote(f'{key}={shown}')}")
    return " ".join(parts)


@contextmanager
def user_errors() -> Iterator[None]:
    """A mastra-memory error or an unreadable file becomes one red line on stderr and exit status 1."""
    try:
        yield
    except MastraMemoryError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))


def fail(message: str) -> NoReturn:
    Console(stderr=True, soft_wrap=True).print(Text.assemble(("error: ", "bold red"), message))
    raise typer.Exit(1)


def print_json(data: Any) -> None:
    """``--json`` output: one indented JSON document on stdout (progress and errors stay on stderr)."""
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


def run(awaitable: Awaitable[T]) -> T:
    async def main() -> T:
        return await awaitable

    return asyncio.run(main())


def run_closing(memory: Memory, awaitable: Awaitable[T]) -> T:
    """:func:`run` the command's work on ``memory``, then close ``memory``, also when the work failed."""

    async def closing() -> T:
        try:
            return await awaitable
        finally:
            await memory.close()

    return run(closing())


def progress_bar() -> Progress:
    return Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    )


@dataclass(frozen=True, slots=True)
class Stores:
    """Where a command keeps messages and vectors: an SQLite file (``--db``) or stores given by URL."""

    db: Path | None  # --db PATH: messages and vectors in this SQLite file (unless --vector)
    storage: str | None  # --storage URL or plugin name
    vector: str | None  # --vector URL or plugin name; None: the storage's own vector store

    @property
    def sqlite_file(self) -> Path | None:
        """The storage's SQLite file, when the storage is one (not ``:memory:``)."""
        if self.db is not None:
            return self.db
        if self.storage is None or not self.storage.lower().startswith(("sqlite:", "file:")):
            return None
        from ..stores.sqlite.connection import MEMORY, sqlite_path

        path = sqlite_path(self.storage)
        return None if path == MEMORY else Path(path)

    @property
    def label(self) -> str:
        """What messages call these stores (passwords masked)."""
        main = str(self.db) if self.db is not None else masked_url(self.storage or "")
        return main + (f" (vectors: {masked_url(self.vector)})" if self.vector is not None else "")

    def options(self) -> str:
        """The command-line options that name these stores again, for messages that suggest a command."""
        parts = [f"--db {self.db}" if self.db is not None else f"--storage {masked_url(self.storage or '')}"]
        if self.vector is not None:
            parts.append(f"--vector {masked_url(self.vector)}")
        return " ".join(parts)

    def missing(self) -> bool:
        """True when the storage is an SQLite file that does not exist (opening it would create it)."""
        path = self.sqlite_file
        return path is not None and not path.is_file()


def masked_url(url: str) -> str:
    """``url`` without its password, for printing."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@", 1)))


def stores(db: Path | None, storage: str | None, vector: str | None, *, default: Path = DEFAULT_DB) -> Stores:
    """The stores of ``--db PATH`` (default ``default``) or ``--storage URL``, plus ``--vector URL``.

    Raises ValidationError, before anything is opened, when both --db and --storage are given.
    """
    if db is not None and storage is not None:
        raise ValidationError(f"use --db or --storage, not both (--db {db} means --storage sqlite:///{db})")
    if storage is None:
        return Stores(db if db is not None else default, None, vector)
    return Stores(None, storage, vector)


def existing(where: Stores) -> Stores:
    """``where``, after checking that an SQLite storage file exists (ValidationError naming ingest if not)."""
    if where.missing():
        raise ValidationError(
            f"database {where.sqlite_file} does not exist; load messages first with "
            f"`mastra-memory ingest FILE {where.options()}`"
        )
    return where


def open_memory(
    where: Stores,
    embedder: str,
    options: Mapping[str, Any],
    embedder_options: Mapping[str, Any] | None = None,
) -> Memory:
    """A ``Memory`` over ``where``, built through the plugins (a bad URL or name is a typed error), with
    ``embedder_options`` for the embedder (``--embedder-option``); the demo opens its own the same way."""
    from ..demo.opening import memory_over  # the memory machinery loads when a command runs, not on --help
    from ..plugins import create_vector

    vector = create_vector(where.vector) if where.vector is not None else None
    return memory_over(where.db, where.storage, vector, embedder, options, embedder_options)


def when(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M")


def message_view(message: MastraDBMessage, style: str = "") -> Text:
    """The message text as rich Text (never parsed as markup: stored text may contain brackets)."""
    from ..messages import render_text

    text = render_text(message)
    return Text(text, style=style) if text else Text("(no text)", style="dim")


async def thread_titles(memory: Memory, thread_ids: Sequence[str]) -> dict[str, str]:
    titles: dict[str, str] = {}
    for thread_id in dict.fromkeys(thread_ids):
        thread = await memory.get_thread_by_id(thread_id)
        if thread is not None:
            titles[thread_id] = thread.title
    return titles
