"""The memory commands of ``mastra-memory``: ``demo``, ``ingest``, ``recall``, ``threads`` and ``reindex``.

:func:`register` adds them to the typer app. Every command works on one SQLite file that holds both the
messages and their vectors (``--db``, default ``./memory.db``; the demo uses its own file). Errors print
one line on stderr and exit with status 1; progress goes to stderr, results to stdout.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NoReturn, TypeVar

import typer
from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from .errors import MastraMemoryError, ThreadNotFoundError, ValidationError

if TYPE_CHECKING:
    from .demo.runner import DemoReport
    from .memory import Memory, RecallResult
    from .messages import MastraDBMessage

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

Kind = Literal["history", "hit", "context"]


class Scope(StrEnum):
    """Where semantic recall searches."""

    thread = "thread"
    resource = "resource"


# --------------------------------------------------------------------------------------- plumbing


@contextmanager
def _user_errors() -> Iterator[None]:
    """A mastra-memory error or an unreadable file becomes one red line on stderr and exit status 1."""
    try:
        yield
    except MastraMemoryError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))


def _fail(message: str) -> NoReturn:
    Console(stderr=True, soft_wrap=True).print(Text.assemble(("error: ", "bold red"), message))
    raise typer.Exit(1)


def _run(awaitable: Awaitable[T]) -> T:
    async def main() -> T:
        return await awaitable

    return asyncio.run(main())


def _progress() -> Progress:
    return Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    )


def _existing_db(db: Path) -> str:
    if not db.is_file():
        raise ValidationError(
            f"database {db} does not exist; load messages first with `mastra-memory ingest FILE --db {db}`"
        )
    return str(db)


def _memory(db: str, embedder: str, options: Mapping[str, Any]) -> Memory:
    from .memory import Memory
    from .stores.sqlite.storage import SQLiteStorage
    from .stores.sqlite.vector import SQLiteVector

    return Memory(SQLiteStorage(url=db), SQLiteVector(url=db), embedder, options=options)


def _when(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M")


def _text(message: MastraDBMessage, style: str = "") -> Text:
    """The message text as rich Text (never parsed as markup: stored text may contain brackets)."""
    from .messages import render_text

    text = render_text(message)
    return Text(text, style=style) if text else Text("(no text)", style="dim")


# ---------------------------------------------------------------------------------- recall views


@dataclass(frozen=True, slots=True)
class RecalledRow:
    """One message of a recall result, classified for display."""

    message: MastraDBMessage
    kind: Kind
    score: float | None  # hits only
    rank: int | None  # hits only: 1 for the best score
    group: int | None  # recalled messages only: hit windows that touch form one group


def classify(result: RecallResult, current_thread: str, message_range: int) -> list[RecalledRow]:
    """Sort a recall result into hits, the context around them, and the current thread's history.

    Recalled rows come first, grouped by their best hit (windows that touch merge into one group), each
    group in time order; then the history rows of the current thread in time order.
    """
    ordered = sorted(result.messages, key=lambda m: (m.created_at, m.id))
    order = {m.id: i for i, m in enumerate(ordered)}
    by_thread: dict[str, list[MastraDBMessage]] = {}
    for message in ordered:
        by_thread.setdefault(message.thread_id, []).append(message)
    position = {m.id: (tid, i) for tid, msgs in by_thread.items() for i, m in enumerate(msgs)}
    hits = sorted((h for h in result.hits if h.message_id in position), key=lambda h: -h.score)
    rank = {h.message_id: n for n, h in enumerate(hits, start=1)}
    score = {h.message_id: h.score for h in hits}
    group_of: dict[str, int] = {}
    groups: list[list[str]] = []
    for hit in hits:
        if hit.message_id in group_of:
            continue
        members: set[str] = set()
        pending = [hit.message_id]
        while pending:
            thread_id, at = position[pending.pop()]
            for message in by_thread[thread_id][max(0, at - message_range) : at + message_range + 1]:
                if message.id in group_of or message.id in members:
                    continue
                members.add(message.id)
                if message.id in rank:
                    pending.append(message.id)
        for message_id in members:
            group_of[message_id] = len(groups) + 1
        groups.append(sorted(members, key=order.__getitem__))
    by_id = {m.id: m for m in ordered}
    rows = [
        RecalledRow(
            by_id[mid], "hit" if mid in rank else "context", score.get(mid), rank.get(mid), group_of[mid]
        )
        for group in groups
        for mid in group
    ]
    for message in ordered:
        if message.id not in group_of:
            kind: Kind = "history" if message.thread_id == current_thread else "context"
            rows.append(RecalledRow(message, kind, None, None, None))
    return rows


def _history_view(rows: Sequence[RecalledRow], title: str) -> Table | Text:
    history = [r for r in rows if r.kind == "history"]
    if not history:
        return Text(f"{title}: no earlier messages", style="dim")
    table = Table(title=Text(title), title_justify="left", show_header=False, box=None, padding=(0, 1))
    table.add_column("When", style="dim", no_wrap=True)
    table.add_column("Role", style="cyan", no_wrap=True)
    table.add_column("Text")
    for row in history:
        table.add_row(_when(row.message.created_at), row.message.role, _text(row.message))
    return table


def _recalled_view(rows: Sequence[RecalledRow], titles: Mapping[str, str], caption: str) -> Table | Text:
    recalled = [r for r in rows if r.kind != "history"]
    if not recalled:
        return Text("Nothing recalled: no stored message matched the question.", style="yellow")
    table = Table(title="Recalled from memory", title_justify="left", caption=caption, caption_justify="left")
    table.add_column("Score", justify="right", no_wrap=True)
    table.add_column("Thread", style="magenta")
    table.add_column("Kind", no_wrap=True)
    table.add_column("When", style="dim", no_wrap=True)
    table.add_column("Role", style="cyan", no_wrap=True)
    table.add_column("Text", ratio=1)
    previous_group: int | None = None
    for row in recalled:
        if previous_group is not None and row.group != previous_group:
            table.add_section()
        previous_group = row.group
        is_hit = row.kind == "hit"
        table.add_row(
            f"{row.score:.3f}" if row.score is not None else "",
            Text(titles.get(row.message.thread_id) or row.message.thread_id),
            Text(f"hit #{row.rank}" if is_hit else "context", style="bold green" if is_hit else "dim"),
            _when(row.message.created_at),
            row.message.role,
            _text(row.message, "bold" if is_hit else ""),
        )
    return table


def render_recall(
    console: Console,
    *,
    question: str,
    thread_id: str,
    result: RecallResult,
    titles: Mapping[str, str],
    message_range: int,
    heading: str = "Question",
) -> None:
    """Print a question, the current thread's recent history, and the table of recalled messages."""
    rows = classify(result, thread_id, message_range)
    thread_name = titles.get(thread_id) or thread_id
    caption = (
        f"{len(result.hits)} hits (best score first), each with up to {message_range} message(s) of "
        f"context on either side; index {result.index_name or '-'}"
    )
    console.print()
    console.print(Panel(Text(question, style="bold"), title=heading, title_align="left", expand=False))
    console.print(
        Group(
            _history_view(rows, f"Recent history of “{thread_name}”"),
            Text(""),
            _recalled_view(rows, titles, caption),
        )
    )


def recall_json(
    *,
    question: str,
    thread_id: str,
    resource_id: str | None,
    embedder: str,
    result: RecallResult,
    titles: Mapping[str, str],
    message_range: int,
) -> dict[str, Any]:
    """The machine-readable form of a recall: the hits, and every message with its kind and thread title."""
    from .timestamps import canonical_timestamp

    rows = {row.message.id: row for row in classify(result, thread_id, message_range)}
    return {
        "query": question,
        "thread_id": thread_id,
        "resource_id": resource_id,
        "embedder": embedder,
        "index_name": result.index_name,
        "total": result.total,
        "has_more": result.has_more,
        "hits": [h.model_dump() for h in result.hits],
        "messages": [
            {
                "id": m.id,
                "thread_id": m.thread_id,
                "thread_title": titles.get(m.thread_id, ""),
                "role": m.role,
                "created_at": canonical_timestamp(m.created_at),
                "kind": rows[m.id].kind,
                "score": rows[m.id].score,
                "text": _plain_text(m),
            }
            for m in result.messages
        ],
    }


def _plain_text(message: MastraDBMessage) -> str:
    from .messages import render_text

    return render_text(message)


async def _titles(memory: Memory, thread_ids: Sequence[str]) -> dict[str, str]:
    titles: dict[str, str] = {}
    for thread_id in dict.fromkeys(thread_ids):
        thread = await memory.get_thread_by_id(thread_id)
        if thread is not None:
            titles[thread_id] = thread.title
    return titles


# ------------------------------------------------------------------------------------------- demo


def demo_command(
    db: Annotated[
        Path,
        typer.Option("--db", help="Demo database file; removed and recreated on every run."),
    ] = Path("mastra-memory-demo.db"),
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
) -> None:
    """Show semantic recall at work, offline: load sample chats, then ask about them.

    The sample holds five conversations of one user: a trip to Kyoto, a new
    puppy, a home office, a half-marathon plan and a book club. Each question
    is asked in a new thread of the same user, and recall finds the answer in
    the earlier threads. The demo database is separate from ./memory.db.
    """
    from .demo.runner import (
        DEMO_RESOURCE,
        MESSAGE_RANGE,
        QUESTION_THREAD,
        QUESTIONS,
        TOP_K,
        read_sample,
        run_demo,
    )

    console = Console()
    with _user_errors():
        total = len(read_sample().messages)
        with _progress() as progress:
            loading = progress.add_task("Loading sample conversations", total=total)
            asking = progress.add_task("Asking questions", total=len(QUESTIONS))
            report = _run(
                run_demo(
                    db,
                    embedder,
                    loaded=lambda n: progress.advance(loading, n),
                    asked=lambda n: progress.advance(asking, n),
                )
            )
    titles = {thread_id: thread.title for thread_id, thread in report.threads.items()}
    sample_threads = sum(thread_id != QUESTION_THREAD for thread_id in report.threads)
    console.print(
        Panel(
            Text.assemble(
                ("Semantic recall demo\n", "bold"),
                f"Loaded {report.messages_loaded} messages of user '{DEMO_RESOURCE}' in {sample_threads} "
                "threads. Each question is asked in the new thread "
                f"“{titles.get(QUESTION_THREAD, QUESTION_THREAD)}”; recall searches every other thread of "
                f"the user (scope resource, top_k {TOP_K}, message_range {MESSAGE_RANGE}).",
            ),
            expand=False,
        )
    )
    for number, answer in enumerate(report.answers, start=1):
        render_recall(
            console,
            question=answer.question.text,
            thread_id=QUESTION_THREAD,
            result=answer.result,
            titles=titles,
            message_range=MESSAGE_RANGE,
            heading=f"Question {number} of {len(report.answers)}",
        )
    console.print()
    console.print(_demo_summary(report, titles))


def _demo_summary(report: DemoReport, titles: Mapping[str, str]) -> Group:
    answers = Table(title="Best match per question", title_justify="left")
    answers.add_column("Question")
    answers.add_column("Best match", ratio=1)
    answers.add_column("Thread", style="magenta")
    answers.add_column("Score", justify="right", no_wrap=True)
    for answer in report.answers:
        hits = sorted(answer.result.hits, key=lambda h: -h.score)
        top = hits[0] if hits else None
        message = next((m for m in answer.result.messages if top and m.id == top.message_id), None)
        answers.add_row(
            answer.question.text,
            _text(message) if message else "-",
            Text(titles.get(message.thread_id, message.thread_id)) if message else "-",
            f"{top.score:.3f}" if top else "-",
        )
    summary = Table(title="Summary", title_justify="left", show_header=False)
    summary.add_column("What", style="bold")
    summary.add_column("Value")
    summary.add_row("Messages loaded", str(report.messages_loaded))
    summary.add_row("Threads", Text(", ".join(sorted(titles.values()))))
    summary.add_row("Database", Text(str(report.db)))
    summary.add_row("Embedder", report.embedder)
    summary.add_row("Vector index", report.index_name or "-")
    summary.add_row("Elapsed", f"{report.elapsed:.2f} s")
    return Group(answers, Text(""), summary)


# ----------------------------------------------------------------------------------------- ingest


def ingest_command(
    file: Annotated[
        Path,
        typer.Argument(help="JSON Lines file, one message per line.", exists=True, dir_okay=False),
    ],
    db: DbOption = DEFAULT_DB,
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    no_embed: Annotated[
        bool,
        typer.Option("--no-embed", help="Store the messages only; build vectors later with `reindex`."),
    ] = False,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, help="Messages per transaction.")] = 100,
) -> None:
    """Load messages from a JSON Lines file (storage, plus vectors for recall).

    One JSON object per line, for example:

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
      created_at    optional ISO-8601 time with a time zone ("now")
      thread_title  optional title of a thread this file creates
    camelCase (threadId, resourceId, createdAt, threadTitle) also works.

    The whole file is checked before anything is written: an invalid line
    is reported with its number and nothing is saved. Messages are then
    saved in batches, one transaction each.
    """
    from .demo.loader import check_threads, load_messages, read_file

    options: dict[str, Any] = {"semantic_recall": not no_embed}
    with _user_errors():
        parsed = read_file(file)
        memory = _memory(str(db), embedder, options)

        async def ingest() -> Any:
            try:
                to_create = await check_threads(memory, parsed)  # before the progress bar starts
                with _progress() as progress:
                    task = progress.add_task(f"Ingesting {escape(file.name)}", total=len(parsed.messages))
                    return await load_messages(
                        memory,
                        parsed,
                        batch_size=batch_size,
                        advance=lambda n: progress.advance(task, n),
                        to_create=to_create,
                    )
            finally:
                await memory.close()

        report = _run(ingest())
    console = Console()
    table = Table(title="Ingest complete", title_justify="left", show_header=False)
    table.add_column("What", style="bold")
    table.add_column("Value")
    table.add_row("File", Text(str(file)))
    table.add_row("Messages saved", str(report.saved))
    if report.skipped:
        table.add_row("Skipped", f"{report.skipped} (system messages are not stored)")
    table.add_row("Threads", f"{len(report.threads_touched)} ({len(report.threads_created)} new)")
    table.add_row("Database", Text(str(db)))
    table.add_row("Vectors", "not built (--no-embed); run `mastra-memory reindex`" if no_embed else embedder)
    console.print(table)


# ----------------------------------------------------------------------------------------- recall


def recall_command(
    question: Annotated[str, typer.Argument(help="What to search the memory for.")],
    thread: Annotated[str, typer.Option("--thread", help="The current thread (it may be new).")],
    resource: Annotated[
        str | None,
        typer.Option("--resource", help="The user (resource) of the thread; default: the thread's owner."),
    ] = None,
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="Similar messages to retrieve.")] = 4,
    scope: Annotated[
        Scope, typer.Option("--scope", help="Search the current thread or every thread of the resource.")
    ] = Scope.resource,
    last: Annotated[
        int, typer.Option("--last", min=0, help="Newest messages of the thread returned as history.")
    ] = 10,
    message_range: Annotated[
        int, typer.Option("--message-range", min=0, help="Context messages on either side of each hit.")
    ] = 1,
    db: DbOption = DEFAULT_DB,
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Recall for a thread: recent history plus messages similar to QUESTION.

    Semantic hits come with their neighbours (--message-range). In resource
    scope the thread may be new: recall searches every thread of --resource.
    """
    options = {
        "last_messages": last,
        "semantic_recall": {"top_k": top_k, "message_range": message_range, "scope": scope.value},
    }
    with _user_errors():
        memory = _memory(_existing_db(db), embedder, options)

        async def recall() -> tuple[RecallResult, dict[str, str], str | None]:
            try:
                existing = await memory.get_thread_by_id(thread)
                if existing is None and (scope is Scope.thread or resource is None):
                    # Only resource-scoped recall may start from a thread that does not exist yet.
                    raise ThreadNotFoundError(
                        f"thread {thread!r} does not exist in {db}; a new thread can only be used with "
                        "--resource and --scope resource"
                    )
                # Without --resource, an existing thread's owner is the resource.
                owner = resource if resource is not None else existing.resource_id if existing else None
                result = await memory.recall(
                    thread_id=thread, resource_id=owner, vector_search_string=question
                )
                titles = await _titles(memory, [thread, *(m.thread_id for m in result.messages)])
                return result, titles, owner
            finally:
                await memory.close()

        result, titles, owner = _run(recall())
    if as_json:
        data = recall_json(
            question=question,
            thread_id=thread,
            resource_id=owner,
            embedder=embedder,
            result=result,
            titles=titles,
            message_range=message_range,
        )
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    render_recall(
        Console(),
        question=question,
        thread_id=thread,
        result=result,
        titles=titles,
        message_range=message_range,
    )


# ---------------------------------------------------------------------------------------- threads


def threads_command(
    resource: Annotated[str | None, typer.Option("--resource", help="Only this resource's threads.")] = None,
    db: DbOption = DEFAULT_DB,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List threads, newest first, with their message counts."""
    with _user_errors():
        memory = _memory(_existing_db(db), DEFAULT_EMBEDDER, {})

        async def listing() -> list[tuple[Any, int]]:
            try:
                flt = {"resource_id": resource} if resource is not None else None
                page = await memory.list_threads(filter=flt, per_page=False)
                counted = []
                for item in page.threads:
                    messages = await memory.storage.list_messages(item.id, per_page=1)
                    counted.append((item, messages.total or 0))
                return counted
            finally:
                await memory.close()

        rows = _run(listing())
    if as_json:
        data = [{**item.model_dump(mode="json"), "message_count": count} for item, count in rows]
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    title = f"Threads in {db}" + (f" of resource {resource}" if resource else "")
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
            _when(item.created_at),
            _when(item.updated_at),
            str(count),
        )
    console = Console()
    if rows:
        console.print(table)
    else:
        console.print(Text(f"No threads in {db}" + (f" for resource {resource!r}" if resource else "") + "."))


# ---------------------------------------------------------------------------------------- reindex


def reindex_command(
    thread: Annotated[str | None, typer.Option("--thread", help="Only this thread.")] = None,
    resource: Annotated[str | None, typer.Option("--resource", help="Only this resource's threads.")] = None,
    db: DbOption = DEFAULT_DB,
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
) -> None:
    """Rebuild message vectors from storage (e.g. after switching embedders).

    Stored messages are never changed; vectors go to the index that recall
    uses for this embedder.
    """
    with _user_errors():
        if thread is not None and resource is not None:
            raise ValidationError("use --thread or --resource, not both")
        memory = _memory(_existing_db(db), embedder, {"semantic_recall": True})

        async def reindex() -> tuple[int, int, str | None]:
            try:
                if thread is not None:
                    found = await memory.get_thread_by_id(thread)
                    if found is None:
                        raise ThreadNotFoundError(f"thread {thread!r} does not exist in {db}")
                    threads = [found]
                else:
                    flt = {"resource_id": resource} if resource is not None else None
                    threads = list((await memory.list_threads(filter=flt, per_page=False)).threads)
                counts = [(await memory.storage.list_messages(t.id, per_page=1)).total or 0 for t in threads]
                indexed = 0
                with _progress() as progress:
                    task = progress.add_task("Re-embedding messages", total=sum(counts))
                    for item in threads:
                        done = await memory.reindex_thread(item.id)
                        indexed += done
                        progress.advance(task, done)
                dimension = memory.embedder.dimension
                index = memory.indexer().index_name_for(dimension) if indexed and dimension else None
                return indexed, len(threads), index
            finally:
                await memory.close()

        indexed, thread_count, index = _run(reindex())
    where = f" into index {index}" if index else ""
    Console().print(
        Text.assemble(
            "Indexed ",
            (str(indexed), "bold"),
            f" messages from {thread_count} thread(s){where} with {embedder}.",
        )
    )


def register(app: typer.Typer) -> None:
    """Add ``demo``, ``ingest``, ``recall``, ``threads`` and ``reindex`` to ``app``."""
    app.command("demo")(demo_command)
    app.command("ingest")(ingest_command)
    app.command("recall")(recall_command)
    app.command("threads")(threads_command)
    app.command("reindex")(reindex_command)
