"""``mastra-memory delete``: delete a thread, or every thread of a resource, with their messages and vectors.

It asks first (``--yes`` skips the question; no answer, as at the end of piped input, deletes nothing). With
``--thread`` and ``--resource`` the resource must own the thread. Deleting a resource's data deletes its
threads (archived too) and empties its working memory; the resource record itself stays, because the
storage contract has no resource delete (docs/spec.md §4.2).
"""

from __future__ import annotations

from typing import Annotated, Any

import click
import typer
from rich.console import Console
from rich.text import Text

from ..common import (
    DEFAULT_EMBEDDER,
    DbOption,
    JsonOption,
    StorageOption,
    VectorOption,
    existing,
    fail,
    open_memory,
    print_json,
    run_closing,
    stores,
    user_errors,
)
from .export import owned_threads
from .threads import _message_count


def delete_command(
    thread: Annotated[str | None, typer.Option("--thread", help="Delete this thread.")] = None,
    resource: Annotated[
        str | None,
        typer.Option(
            "--resource", help="Delete every thread of this resource (with --thread: it must own it)."
        ),
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", metavar="", help="Do not ask first.")] = False,
    db: DbOption = None,
    storage: StorageOption = None,
    vector: VectorOption = None,
    as_json: JsonOption = False,
) -> None:
    """Delete a thread, or a resource's threads and working memory (messages and vectors too).

    --thread ID deletes one thread; --resource ID every thread of the
    resource, archived too, and empties its working memory. Asks for
    confirmation unless --yes is given. Back up first with `export`.
    """
    with user_errors():
        where = existing(stores(db, storage, vector))
        memory = open_memory(where, DEFAULT_EMBEDDER, {})

        async def plan() -> tuple[list[Any], int, bool]:
            threads = await owned_threads(memory, thread, resource, where.label)
            count = sum([await _message_count(memory, t.id) for t in threads])
            record = await memory.get_resource_by_id(resource) if thread is None and resource else None
            return threads, count, bool(record is not None and record.working_memory)

        threads, messages, has_working_memory = run_closing(memory, plan())
        what = (
            f"thread {thread!r}"
            if thread is not None
            else f"{len(threads)} thread(s) of resource {resource!r}"
            + (" and its working memory" if has_working_memory else "")
        )
        if not threads and not has_working_memory:
            _report(as_json, thread, resource, 0, 0, False, f"Nothing to delete for resource {resource!r}.")
            return
        if not yes:
            question = f"Delete {what} ({messages} message(s)) from {where.label}?"
            try:
                confirmed = typer.confirm(question, err=True)
            except (typer.Abort, click.Abort):  # no answer (end of input, Ctrl-C): nothing happens
                confirmed = False
            if not confirmed:
                fail("nothing deleted (confirm, or pass --yes)")
        # A fresh Memory: the first one was closed with the event loop that listed the threads.
        memory = open_memory(where, DEFAULT_EMBEDDER, {})

        async def delete() -> None:
            for item in threads:
                await memory.delete_thread(item.id)
            if has_working_memory:
                assert resource is not None
                await memory.update_resource(resource, working_memory="")

        run_closing(memory, delete())
    _report(
        as_json,
        thread,
        resource,
        len(threads),
        messages,
        has_working_memory,
        f"Deleted {what} ({messages} message(s)).",
    )


def _report(
    as_json: bool,
    thread: str | None,
    resource: str | None,
    threads: int,
    messages: int,
    working_memory: bool,
    text: str,
) -> None:
    if as_json:
        print_json(
            {
                "thread_id": thread,
                "resource_id": resource,
                "threads_deleted": threads,
                "messages_deleted": messages,
                "working_memory_cleared": working_memory,
            }
        )
        return
    Console().print(Text(text))
