"""The memory commands of ``mastra-memory``: ``demo``, ``ingest``, ``recall``, ``threads`` and ``reindex``.

:func:`register` adds them to the typer app. By default a command works on one SQLite file that holds both
the messages and their vectors (``--db``, default ``./memory.db``; the demo uses its own file in the user
data directory); ``--storage URL`` and ``--vector URL`` point it at any registered store instead. Errors
print on stderr and exit with status 1; progress goes to stderr, results to stdout.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..errors import IndexNotFoundError, ThreadNotFoundError, ValidationError
from .common import (
    DEFAULT_EMBEDDER,
    DbOption,
    EmbedderOption,
    JsonOption,
    Layout,
    LayoutOption,
    Scope,
    StorageOption,
    Stores,
    VectorOption,
    existing,
    message_view,
    open_memory,
    progress_bar,
    run,
    stores,
    thread_titles,
    user_errors,
    when,
)
from .render import Weakness, indented, one_line, recall_json, render_recall, resolve_layout, text_legend

if TYPE_CHECKING:
    from ..demo.runner import DemoReport
    from ..memory import RecallResult


# ------------------------------------------------------------------------------------------- demo


def demo_command(
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            metavar="PATH",
            help="Demo database file (default: demo.db in the user data directory, "
            "$XDG_DATA_HOME/mastra-memory or ~/.local/share/mastra-memory); an earlier demo database "
            "there is replaced on every run.",
        ),
    ] = None,
    storage: StorageOption = None,
    vector: VectorOption = None,
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    layout: LayoutOption = Layout.auto,
) -> None:
    """Show semantic recall at work, offline: load sample chats, then ask about them.

    The sample holds five conversations of one user: a trip to Kyoto, a new
    puppy, a home office, a half-marathon plan and a book club. Each question
    is asked in a new thread of the same user, and recall finds the answer in
    the earlier threads. The demo never writes to ./memory.db; with --storage
    it deletes its own earlier threads there first and refuses a store that
    holds other users' threads.
    """
    from ..demo.runner import (
        DEMO_RESOURCE,
        MESSAGE_RANGE,
        QUESTION_THREAD,
        QUESTIONS,
        TOP_K,
        default_demo_db,
        read_sample,
        run_demo,
    )

    console = Console()
    with user_errors():
        if db is not None and storage is not None:
            raise ValidationError("use --db or --storage, not both")
        if storage is None:
            console.print(Text(f"using {db if db is not None else default_demo_db()}"))
        else:
            console.print(Text(f"using {stores(None, storage, None).label}"))
        total = len(read_sample().messages)
        with progress_bar() as progress:
            loading = progress.add_task("Loading sample conversations", total=total)
            asking = progress.add_task("Asking questions", total=len(QUESTIONS))
            report = run(
                run_demo(
                    db,
                    embedder,
                    storage=storage,
                    vector=vector,
                    loaded=lambda n: progress.advance(loading, n),
                    asked=lambda n: progress.advance(asking, n),
                )
            )
    titles = {thread_id: thread.title for thread_id, thread in report.threads.items()}
    sample_threads = sum(thread_id != QUESTION_THREAD for thread_id in report.threads)
    intro = (
        f"Loaded {report.messages_loaded} messages of user '{DEMO_RESOURCE}' in {sample_threads} "
        "threads. Each question is asked in the new thread "
        f"“{titles.get(QUESTION_THREAD, QUESTION_THREAD)}”; recall searches every other thread of "
        f"the user (scope resource, top_k {TOP_K}, message_range {MESSAGE_RANGE})."
    )
    text_layout = resolve_layout(console, layout) == "text"
    if text_layout:
        console.print(Text("Semantic recall demo", style="bold"))
        console.print(
            indented(console, Text(intro + " " + text_legend(MESSAGE_RANGE, Weakness.of(report.embedder))), 0)
        )
    else:
        console.print(Panel(Text.assemble(("Semantic recall demo\n", "bold"), intro), expand=False))
    for number, answer in enumerate(report.answers, start=1):
        render_recall(
            console,
            question=answer.question.text,
            thread_id=QUESTION_THREAD,
            result=answer.result,
            titles=titles,
            message_range=MESSAGE_RANGE,
            embedder=report.embedder,
            layout=layout,
            heading=f"Question {number} of {len(report.answers)}",
            legend=False,  # the intro says it once
        )
    console.print()
    if text_layout:
        _demo_summary_text(console, report, titles)
    else:
        console.print(_demo_summary(report, titles))


def _best(answer: Any) -> tuple[Any, Any]:
    """The best hit of an answer and its message (or None, None)."""
    hits = sorted(answer.result.hits, key=lambda h: -h.score)
    top = hits[0] if hits else None
    message = next((m for m in answer.result.messages if top and m.id == top.message_id), None)
    return top, message


def _summary_rows(report: DemoReport, titles: Mapping[str, str]) -> list[tuple[str, Text]]:
    return [
        ("Messages loaded", Text(str(report.messages_loaded))),
        ("Threads", Text(", ".join(sorted(titles.values())))),
        ("Stored in", Text(report.store)),
        ("Embedder", Text(report.embedder)),
        ("Vector index", Text(report.index_name or "-")),
        ("Elapsed", Text(f"{report.elapsed:.2f} s")),
    ]


def _demo_summary(report: DemoReport, titles: Mapping[str, str]) -> Group:
    answers = Table(title="Best match per question", title_justify="left")
    answers.add_column("Question")
    answers.add_column("Best match", ratio=1)
    answers.add_column("Thread", style="magenta")
    answers.add_column("Score", justify="right", no_wrap=True)
    for answer in report.answers:
        top, message = _best(answer)
        answers.add_row(
            answer.question.text,
            message_view(message) if message else "-",
            Text(titles.get(message.thread_id, message.thread_id)) if message else "-",
            f"{top.score:.3f}" if top else "-",
        )
    summary = Table(title="Summary", title_justify="left", show_header=False)
    summary.add_column("What", style="bold")
    summary.add_column("Value")
    for what, value in _summary_rows(report, titles):
        summary.add_row(what, value)
    return Group(answers, Text(""), summary)


def _demo_summary_text(console: Console, report: DemoReport, titles: Mapping[str, str]) -> None:
    console.print(Text("Best match per question:", style="bold"))
    for number, answer in enumerate(report.answers, start=1):
        top, message = _best(answer)
        console.print(Text(f"  Q{number} {answer.question.text}"))
        if message is None:
            console.print(Text("    -"))
            continue
        line = Text.assemble(
            f"{top.score:.3f} ", (titles.get(message.thread_id, message.thread_id), "magenta"), ": "
        )
        console.print(one_line(line.append_text(message_view(message))))
    console.print()
    console.print(Text("Summary:", style="bold"))
    for what, value in _summary_rows(report, titles):
        console.print(Text.assemble(f"  {what}: ", value))


# ----------------------------------------------------------------------------------------- ingest


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
    no_embed: Annotated[
        bool,
        typer.Option(
            "--no-embed", metavar="", help="Store the messages only; build vectors later with `reindex`."
        ),
    ] = False,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, help="Messages per transaction.")] = 100,
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
    from ..demo.loader import check_threads, load_messages, read_file

    options: dict[str, Any] = {"semantic_recall": not no_embed}
    with user_errors():
        where = stores(db, storage, vector)
        parsed = read_file(file)  # every line checked before a store is opened
        memory = open_memory(where, embedder, options)

        async def ingest() -> Any:
            try:
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
            finally:
                await memory.close()

        report = run(ingest())
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


# ----------------------------------------------------------------------------------------- recall


async def _check_index(memory: Any, question: str, where: Stores, embedder: str) -> None:
    """Raise IndexNotFoundError, before recall searches (and would create an empty index), when the store
    holds no vectors of this embedder: recall would find nothing, and only ``reindex`` can help."""
    indexer = memory.indexer()
    await indexer.embed([question])  # learns the dimension; recall reuses the cached embedding
    dimension = memory.embedder.dimension
    if not dimension:
        return
    name = indexer.index_name_for(dimension)
    indexes = await indexer.message_index_set()
    native = memory.vector.to_native_index_name(name)
    if native in indexes and (await memory.vector.describe_index(native)).count > 0:
        return
    others = [n for n in indexes if n != native]
    held = f"; the store has {', '.join(others)}, built with another embedder" if others else ""
    raise IndexNotFoundError(
        f"no vector index for embedder {embedder} in {where.label}: recall would search {name}, which "
        f"{'is empty' if native in indexes else 'was never built'}{held}. Build it with "
        f"`mastra-memory reindex {where.options()} --embedder {embedder}`, or recall with the embedder "
        "the messages were indexed with",
        details={"index_name": name, "indexes": indexes, "embedder": embedder},
    )


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
    db: DbOption = None,
    storage: StorageOption = None,
    vector: VectorOption = None,
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    as_json: JsonOption = False,
    layout: LayoutOption = Layout.auto,
) -> None:
    """Recall for a thread: recent history plus messages similar to QUESTION.

    Semantic hits come with their neighbours (--message-range). In resource
    scope the thread may be new: recall searches every thread of --resource.
    """
    options = {
        "last_messages": last,
        "semantic_recall": {"top_k": top_k, "message_range": message_range, "scope": scope.value},
    }
    with user_errors():
        where = existing(stores(db, storage, vector))
        memory = open_memory(where, embedder, options)

        async def recall() -> tuple[RecallResult, dict[str, str], str | None]:
            try:
                found = await memory.get_thread_by_id(thread)
                if found is None and (scope is Scope.thread or resource is None):
                    # Only resource-scoped recall may start from a thread that does not exist yet.
                    raise ThreadNotFoundError(
                        f"thread {thread!r} does not exist in {where.label}; a new thread can only be used "
                        "with --resource and --scope resource"
                    )
                # Without --resource, an existing thread's owner is the resource.
                owner = resource if resource is not None else found.resource_id if found else None
                await _check_index(memory, question, where, embedder)
                result = await memory.recall(
                    thread_id=thread, resource_id=owner, vector_search_string=question
                )
                titles = await thread_titles(memory, [thread, *(m.thread_id for m in result.messages)])
                return result, titles, owner
            finally:
                await memory.close()

        result, titles, owner = run(recall())
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
        embedder=embedder,
        layout=layout,
        last=last,
    )


# ---------------------------------------------------------------------------------------- threads


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

        rows = run(listing())
    if as_json:
        data = [{**item.model_dump(mode="json"), "message_count": count} for item, count in rows]
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
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


# ---------------------------------------------------------------------------------------- reindex


def reindex_command(
    thread: Annotated[str | None, typer.Option("--thread", help="Only this thread.")] = None,
    resource: Annotated[str | None, typer.Option("--resource", help="Only this resource's threads.")] = None,
    db: DbOption = None,
    storage: StorageOption = None,
    vector: VectorOption = None,
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
) -> None:
    """Rebuild message vectors from storage (e.g. after switching embedders).

    Stored messages are never changed; vectors go to the index that recall
    uses for this embedder.
    """
    with user_errors():
        if thread is not None and resource is not None:
            raise ValidationError("use --thread or --resource, not both")
        where = existing(stores(db, storage, vector))
        memory = open_memory(where, embedder, {"semantic_recall": True})

        async def reindex() -> tuple[int, int, str | None]:
            try:
                if thread is not None:
                    found = await memory.get_thread_by_id(thread)
                    if found is None:
                        raise ThreadNotFoundError(f"thread {thread!r} does not exist in {where.label}")
                    threads = [found]
                else:
                    flt = {"resource_id": resource} if resource is not None else None
                    page = await memory.list_threads(filter=flt, per_page=False, include_archived=True)
                    threads = list(page.threads)
                counts = [(await memory.storage.list_messages(t.id, per_page=1)).total or 0 for t in threads]
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
            finally:
                await memory.close()

        indexed, thread_count, index = run(reindex())
    where_to = f" into index {index}" if index else ""
    Console().print(
        Text.assemble(
            "Indexed ",
            (str(indexed), "bold"),
            f" messages from {thread_count} thread(s){where_to} with {embedder}.",
        )
    )


def register(app: typer.Typer) -> None:
    """Add ``demo``, ``ingest``, ``recall``, ``threads`` and ``reindex`` to ``app``."""
    app.command("demo")(demo_command)
    app.command("ingest")(ingest_command)
    app.command("recall")(recall_command)
    app.command("threads")(threads_command)
    app.command("reindex")(reindex_command)
