"""``mastra-memory ingest``: load messages from JSON Lines or a JSON array into storage (and vectors)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..common import (
    DEFAULT_EMBEDDER,
    DbOption,
    EmbedderOption,
    EmbedderOptionsOption,
    JsonOption,
    StorageOption,
    VectorOption,
    embedder_options,
    open_memory,
    print_json,
    progress_bar,
    run_closing,
    stores,
    user_errors,
)

if TYPE_CHECKING:
    from ...demo.loader import LoadReport


def ingest_command(
    file: Annotated[
        Path,
        typer.Argument(
            help="JSON Lines file (one message per line) or a JSON array of messages.",
            exists=True,
            dir_okay=False,
        ),
    ],
    db: DbOption = None,
    storage: StorageOption = None,
    vector: VectorOption = None,
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    embedder_option: EmbedderOptionsOption = None,
    no_embed: Annotated[
        bool,
        typer.Option(
            "--no-embed", metavar="", help="Store the messages only; build vectors later with `reindex`."
        ),
    ] = False,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, help="Messages per transaction.")] = 100,
    as_json: JsonOption = False,
) -> None:
    """Load messages from a JSON Lines file or a JSON array (storage, plus vectors for recall).

    One JSON object per line (or a JSON array of them), for example:

      {"id": "m1", "thread_id": "t1", "resource_id": "alex",
       "role": "user", "content": "We named the puppy Miso",
       "created_at": "2025-02-16T16:20:00.000Z", "thread_title": "Puppy"}

    Fields:
      thread_id     required; created on the fly if it does not exist
      resource_id   needed to create a thread (its owner); must match
                    the owner of an existing thread
      role          required: user or assistant (system: not stored)
      content       required: a string, or v2 content
                    {"format": 2, "parts": [{"type": "text", ...}]}
      id            optional (uuid when missing); a line with a stored
                    id replaces that message
      created_at    optional ISO-8601 time with a time zone, or "now"
                    (the default: the time of loading)
      thread_title  optional title of a thread this file creates
    camelCase (threadId, resourceId, createdAt, threadTitle) also works.

    The whole file is checked before anything is written: every invalid
    line is reported with its number and nothing is saved. Messages are
    then saved in batches, one transaction each.
    """
    from ...demo.loader import check_threads, load_messages, read_file

    options: dict[str, Any] = {"semantic_recall": not no_embed}
    with user_errors():
        extra = embedder_options(embedder_option)
        where = stores(db, storage, vector)
        parsed = read_file(file)  # every line checked before a store is opened
        memory = open_memory(where, embedder, options, extra)

        async def ingest() -> LoadReport:
            to_create = await check_threads(memory, parsed)  # before the progress bar starts
            with progress_bar() as progress:
                task = progress.add_task(f"Ingesting {escape(file.name)}", total=len(parsed.messages))
                return await load_messages(
                    memory,
                    parsed,
                    batch_size=batch_size,
                    advance=lambda n: progress.advance(task, n),
                    to_create=to_create,
                )

        report = run_closing(memory, ingest())
    if as_json:
        print_json(
            {
                "file": str(file),
                "saved": report.saved,
                "skipped": report.skipped,
                "threads_touched": report.threads_touched,
                "threads_created": report.threads_created,
                "stored_in": where.label,
                "embedder": None if no_embed else embedder,
            }
        )
        return
    console = Console()
    table = Table(title="Ingest complete", title_justify="left", show_header=False)
    table.add_column("What", style="bold")
    table.add_column("Value")
    table.add_row("File", Text(str(file)))
    table.add_row("Messages saved", str(report.saved))
    if report.skipped:
        table.add_row("Skipped", f"{report.skipped} (system messages are not stored)")
    table.add_row("Threads", f"{len(report.threads_touched)} ({len(report.threads_created)} new)")
    table.add_row("Stored in", Text(where.label))
    table.add_row("Vectors", "not built (--no-embed); run `mastra-memory reindex`" if no_embed else embedder)
    console.print(table)
