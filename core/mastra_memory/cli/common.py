"""What every ``mastra-memory`` command shares: options, the one error wrapper, running a coroutine,
progress bars, and opening the memory a command works on."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

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

from ..errors import MastraMemoryError, ValidationError

if TYPE_CHECKING:
    from ..memory import Memory
    from ..messages import MastraDBMessage

T = TypeVar("T")

DEFAULT_DB = Path("memory.db")
DEFAULT_EMBEDDER = "local/wordllama"

DbOption = Annotated[
    Path,
    typer.Option("--db", help="SQLite file holding messages and vectors (Mastra's default: ./memory.db)."),
]
EmbedderOption = Annotated[
    str,
    typer.Option(
        "--embedder",
        help="Embedder model string: local/wordllama (offline), hash/<dim>, "
        "openai/text-embedding-3-small, ...",
    ),
]


class Scope(StrEnum):
    """Where semantic recall searches."""

    thread = "thread"
    resource = "resource"


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


def run(awaitable: Awaitable[T]) -> T:
    async def main() -> T:
        return await awaitable

    return asyncio.run(main())


def progress_bar() -> Progress:
    return Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    )


def existing_db(db: Path) -> str:
    if not db.is_file():
        raise ValidationError(
            f"database {db} does not exist; load messages first with `mastra-memory ingest FILE --db {db}`"
        )
    return str(db)


def open_memory(db: str, embedder: str, options: Mapping[str, Any]) -> Memory:
    """A ``Memory`` over the SQLite file ``db`` (messages and vectors in one file), through the plugins."""
    from ..memory import Memory
    from ..plugins import create_storage, create_vector

    return Memory(
        create_storage("sqlite", url=db), create_vector("sqlite", url=db), embedder, options=options
    )


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
