"""``mastra-memory demo``: load the sample conversations, ask the questions, show what recall found."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ...errors import ValidationError
from ..common import (
    DEFAULT_EMBEDDER,
    EmbedderOption,
    EmbedderOptionsOption,
    JsonOption,
    Layout,
    LayoutOption,
    Mode,
    ModeOption,
    StorageOption,
    VectorOption,
    embedder_options,
    message_view,
    print_json,
    progress_bar,
    run,
    stores,
    user_errors,
)
from ..render import Weakness, indented, one_line, recall_json, render_recall, resolve_layout, text_legend

if TYPE_CHECKING:
    from ...demo.runner import DemoReport


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
    embedder_option: EmbedderOptionsOption = None,
    layout: LayoutOption = Layout.auto,
    as_json: JsonOption = False,
    mode: ModeOption = Mode.auto,
) -> None:
    """Show semantic recall at work, offline: load sample chats, then ask about them.

    The sample holds five conversations of one user: a trip to Kyoto, a new
    puppy, a home office, a half-marathon plan and a book club. Each question
    is asked in a new thread of the same user, and recall finds the answer in
    the earlier threads. The demo never writes to ./memory.db; with --storage
    it deletes its own earlier threads there first and refuses a store that
    holds other users' threads.
    """
    from ...demo.runner import (
        DEMO_RESOURCE,
        MESSAGE_RANGE,
        QUESTION_THREAD,
        QUESTIONS,
        TOP_K,
        default_demo_db,
        read_sample,
        run_demo,
    )

    # With --json, stdout carries the JSON document alone: the "using ..." line goes to stderr.
    console = Console(stderr=as_json)
    with user_errors():
        extra = embedder_options(embedder_option)
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
                    embedder_options=extra,
                    mode=mode.value,
                    loaded=lambda n: progress.advance(loading, n),
                    asked=lambda n: progress.advance(asking, n),
                )
            )
    titles = {thread_id: thread.title for thread_id, thread in report.threads.items()}
    if as_json:
        print_json(_demo_json(report, titles))
        return
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


def _demo_json(report: DemoReport, titles: Mapping[str, str]) -> dict[str, Any]:
    from ...demo.runner import DEMO_RESOURCE, MESSAGE_RANGE, QUESTION_THREAD

    return {
        "store": report.store,
        "embedder": report.embedder,
        "resource_id": DEMO_RESOURCE,
        "messages_loaded": report.messages_loaded,
        "threads": dict(titles),
        "index_name": report.index_name,
        "elapsed": report.elapsed,
        "answers": [
            {
                "expected_message_id": answer.question.answer_id,
                **recall_json(
                    question=answer.question.text,
                    thread_id=QUESTION_THREAD,
                    resource_id=DEMO_RESOURCE,
                    embedder=report.embedder,
                    result=answer.result,
                    titles=titles,
                    message_range=MESSAGE_RANGE,
                ),
            }
            for answer in report.answers
        ],
    }


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
