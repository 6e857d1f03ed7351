"""``mastra-memory export``: a resource's or a thread's threads, messages and working memory as JSON Lines.

The format (docs/cli.md "export"): one JSON object per line, each with a ``type``. First a header
``{"type": "export", "format": 1, ...}``, then the ``resource`` record (resource-scoped working memory and
metadata; absent when the resource has none), then each ``thread`` (thread-scoped working memory lives in
its metadata, as in Mastra) followed by its ``message`` lines, oldest first. Records are the stored models
in Mastra's camelCase JSON, timestamps ISO-8601 UTC to the millisecond.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer
from rich.console import Console
from rich.text import Text

from ...errors import ThreadNotFoundError, ThreadOwnershipError, ValidationError
from ..common import (
    DEFAULT_EMBEDDER,
    DbOption,
    JsonOption,
    StorageOption,
    existing,
    open_memory,
    print_json,
    run_closing,
    stores,
    user_errors,
)
from .threads import _threads_of

if TYPE_CHECKING:
    from ...memory import Memory
    from ...storage import Thread

#: The version of the export format; a reader refuses a higher one.
EXPORT_FORMAT = 1


async def owned_threads(memory: Memory, thread: str | None, resource: str | None, label: str) -> list[Thread]:
    """The threads a command acts on: ``thread`` (owned by ``resource`` when both are given) or every
    thread of ``resource``, archived ones included. Typed errors for a missing thread or a wrong owner."""
    if thread is None and resource is None:
        raise ValidationError("give --thread ID or --resource ID")
    if thread is None:
        assert resource is not None
        return await _threads_of(memory, resource, include_archived=True)
    found = await memory.get_thread_by_id(thread)
    if found is None:
        raise ThreadNotFoundError(f"thread {thread!r} does not exist in {label}")
    if resource is not None and found.resource_id != resource:
        # Name the thread and the resource given, never the owner (docs/spec.md §4.5).
        raise ThreadOwnershipError(f"thread {thread!r} does not belong to resource {resource!r}")
    return [found]


def _line(kind: str, record: Any) -> str:
    body = record.model_dump(mode="json", by_alias=True) if hasattr(record, "model_dump") else record
    return json.dumps({"type": kind, kind: body}, ensure_ascii=False)


def export_command(
    thread: Annotated[str | None, typer.Option("--thread", help="Export this thread.")] = None,
    resource: Annotated[
        str | None,
        typer.Option("--resource", help="Export every thread of this resource (with --thread: its owner)."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", metavar="FILE", help="Write to FILE (replaced atomically); default stdout."
        ),
    ] = None,
    db: DbOption = None,
    storage: StorageOption = None,
    as_json: JsonOption = False,
) -> None:
    """Back up threads, messages and working memory as JSON Lines.

    --resource ID exports the resource's working memory and every thread
    (archived too) with its messages; --thread ID one thread (and its
    owner's resource record). Without --output the lines go to stdout and
    the summary to stderr. The format is in docs/cli.md.
    """
    with user_errors():
        where = existing(stores(db, storage, None))
        memory = open_memory(where, DEFAULT_EMBEDDER, {})

        async def collect() -> tuple[list[str], dict[str, Any]]:
            threads = await owned_threads(memory, thread, resource, where.label)
            owner = resource if resource is not None else threads[0].resource_id if threads else None
            from ...version import __version__

            header = {
                "type": "export",
                "format": EXPORT_FORMAT,
                "mastra_memory": __version__,
                "resource_id": owner,
                "thread_id": thread,
            }
            lines = [json.dumps(header, ensure_ascii=False)]
            record = await memory.get_resource_by_id(owner) if owner is not None else None
            if record is not None:
                lines.append(_line("resource", record))
            messages = 0
            for item in threads:
                lines.append(_line("thread", item))
                page = await memory.storage.list_messages(item.id, per_page=False)
                lines.extend(_line("message", m) for m in page.messages)
                messages += len(page.messages)
            summary = {
                "resource_id": owner,
                "thread_id": thread,
                "threads": len(threads),
                "messages": messages,
                "resource_record": record is not None,
                "output": str(output) if output is not None else None,
            }
            return lines, summary

        lines, summary = run_closing(memory, collect())
        if output is None:
            _write(sys.stdout, lines)
        else:
            _write_file(output, lines)
    if as_json:
        if output is None:  # stdout holds the export itself
            Console(stderr=True, soft_wrap=True).print_json(json.dumps(summary))
        else:
            print_json(summary)
        return
    console = Console(stderr=output is None)
    console.print(
        Text.assemble(
            "Exported ",
            (f"{summary['threads']} thread(s), {summary['messages']} message(s)", "bold"),
            " and the resource record" if summary["resource_record"] else "",
            f" to {output}." if output is not None else ".",
        )
    )


def _write(stream: TextIO, lines: list[str]) -> None:
    for line in lines:
        stream.write(line + "\n")
    stream.flush()


def _write_file(path: Path, lines: list[str]) -> None:
    # A temporary file beside the target, renamed over it: a failed export never leaves half a backup.
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or Path("."))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            _write(handle, lines)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
