"""``mastra-memory threads`` and ``reindex``: list the stored threads, rebuild their messages' vectors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ...errors import ThreadNotFoundError, ValidationError
from ..common import (
    DEFAULT_EMBEDDER,
    DbOption,
    EmbedderOption,
    EmbedderOptionsOption,
    JsonOption,
    Layout,
    LayoutOption,
    StorageOption,
    VectorOption,
    embedder_options,
    existing,
    open_memory,
    print_json,
    progress_bar,
    run_closing,
    stores,
    user_errors,
    when,
)
from ..render import resolve_layout

if TYPE_CHECKING:
    from ...memory import Memory
    from ...storage import Thread


async def _threads_of(
    memory: Memory, resource: str | None, *, include_archived: bool = False
) -> list[Thread]:
    """Every thread, or only ``resource``'s, in the order ``list_threads`` gives them."""
    flt = {"resource_id": resource} if resource is not None else None
    page = await memory.list_threads(filter=flt, per_page=False, include_archived=include_archived)
    return list(page.threads)


async def _message_count(memory: Memory, thread_id: str) -> int:
    return (await memory.storage.list_messages(thread_id, per_page=1)).total or 0


def threads_command(
    resource: Annotated[str | None, typer.Option("--resource", help="Only this resource's threads.")] = None,
    db: DbOption = None,
    storage: StorageOption = None,
    as_json: JsonOption = False,
    layout: LayoutOption = Layout.auto,
) -> None:
    """List threads, newest first, with their message counts."""
    with user_errors():
        where = existing(stores(db, storage, None))
        memory = open_memory(where, DEFAULT_EMBEDDER, {})

        async def listing() -> list[tuple[Thread, int]]:
            return [
                (item, await _message_count(memory, item.id)) for item in await _threads_of(memory, resource)
            ]

        rows = run_closing(memory, listing())
    if as_json:
        print_json([{**item.model_dump(mode="json"), "message_count": count} for item, count in rows])
        return
    console = Console()
    if not rows:
        console.print(
            Text(f"No threads in {where.label}" + (f" for resource {resource!r}" if resource else "") + ".")
        )
        return
    title = f"Threads in {where.label}" + (f" of resource {resource}" if resource else "")
    if resolve_layout(console, layout) == "text":
        console.print(Text(title + ":", style="bold"))
        for item, count in rows:  # two short lines per thread: nothing wraps at 80 columns
            console.print(Text.assemble(f"  {item.id}  ", (item.title or "(untitled)", "magenta")))
            console.print(
                Text(
                    f"    resource {item.resource_id} · {count} message(s) · "
                    f"{when(item.created_at)} to {when(item.updated_at)}",
                    style="dim",
                )
            )
        return
    table = Table(title=Text(title), title_justify="left")
    table.add_column("Thread", no_wrap=True)
    table.add_column("Resource", no_wrap=True)
    table.add_column("Title")
    table.add_column("Created", no_wrap=True)
    table.add_column("Updated", no_wrap=True)
    table.add_column("Messages", justify="right")
    for item, count in rows:
        table.add_row(
            Text(item.id),
            Text(item.resource_id),
            Text(item.title),
            when(item.created_at),
            when(item.updated_at),
            str(count),
        )
    console.print(table)


def reindex_command(
    thread: Annotated[str | None, typer.Option("--thread", help="Only this thread.")] = None,
    resource: Annotated[str | None, typer.Option("--resource", help="Only this resource's threads.")] = None,
    db: DbOption = None,
    storage: StorageOption = None,
    vector: VectorOption = None,
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    embedder_option: EmbedderOptionsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Rebuild message vectors from storage (e.g. after switching embedders).

    Stored messages are never changed; vectors go to the index that recall
    uses for this embedder. Indexes of other embedders are kept: their
    vectors still match the stored text.
    """
    with user_errors():
        extra = embedder_options(embedder_option)
        if thread is not None and resource is not None:
            raise ValidationError("use --thread or --resource, not both")
        where = existing(stores(db, storage, vector))
        memory = open_memory(where, embedder, {"semantic_recall": True}, extra)

        async def reindex() -> tuple[int, int, str | None]:
            if thread is not None:
                found = await memory.get_thread_by_id(thread)
                if found is None:
                    raise ThreadNotFoundError(f"thread {thread!r} does not exist in {where.label}")
                threads = [found]
            else:
                threads = await _threads_of(memory, resource, include_archived=True)
            counts = [await _message_count(memory, t.id) for t in threads]
            indexed = 0
            with progress_bar() as progress:
                task = progress.add_task("Re-embedding messages", total=sum(counts))
                for item in threads:
                    done = await memory.reindex_thread(item.id)
                    indexed += done
                    progress.advance(task, done)
            dimension = memory.embedder.dimension
            index = memory.indexer().index_name_for(dimension) if indexed and dimension else None
            return indexed, len(threads), index

        indexed, thread_count, index = run_closing(memory, reindex())
    if as_json:
        print_json({"indexed": indexed, "threads": thread_count, "index": index, "embedder": embedder})
        return
    where_to = f" into index {index}" if index else ""
    Console().print(
        Text.assemble(
            "Indexed ",
            (str(indexed), "bold"),
            f" messages from {thread_count} thread(s){where_to} with {embedder}.",
        )
    )
