"""How a recall is shown: rows classified into hits, context and history, rich tables, and JSON."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from .common import message_view, when

if TYPE_CHECKING:
    from ..memory import RecallResult
    from ..messages import MastraDBMessage


Kind = Literal["history", "hit", "context"]


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
        table.add_row(when(row.message.created_at), row.message.role, message_view(row.message))
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
            when(row.message.created_at),
            row.message.role,
            message_view(row.message, "bold" if is_hit else ""),
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
        f"{len(result.hits)} hits ranked by score (hit #1 best); touching windows form one group, in time "
        f"order;\nup to {message_range} message(s) of context on either side; "
        f"index {result.index_name or '-'}"
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
    from ..timestamps import canonical_timestamp

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
                "text": plain_text(m),
            }
            for m in result.messages
        ],
    }


def plain_text(message: MastraDBMessage) -> str:
    from ..messages import render_text

    return render_text(message)
