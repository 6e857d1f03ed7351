"""How a recall is shown: rows classified into hits, context and history, rich tables, and JSON."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from rich.console import Console, Group
from rich.padding import Padding
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from .common import TABLE_MIN_WIDTH, WEAK_SCORES, Layout, message_view, when

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


def resolve_layout(console: Console, layout: Layout) -> Literal["table", "text"]:
    """``auto``: tables on a terminal at least :data:`TABLE_MIN_WIDTH` wide, compact text otherwise."""
    if layout is Layout.auto:
        return "table" if console.is_terminal and console.width >= TABLE_MIN_WIDTH else "text"
    return "table" if layout is Layout.table else "text"


@dataclass(frozen=True, slots=True)
class Weakness:
    """The score below which hits are marked weak for one embedder, or None when none is known."""

    embedder: str
    level: float | None

    @classmethod
    def of(cls, embedder: str) -> Weakness:
        return cls(embedder, WEAK_SCORES.get(embedder))

    def is_weak(self, score: float | None) -> bool:
        return self.level is not None and score is not None and score < self.level

    def note(self) -> str:
        if self.level is None:
            return f"hits are not marked weak: no weak level is known for {self.embedder}"
        return (
            f"weak: score below {self.level:.2f}, where {self.embedder} matched only unrelated messages "
            "when measured (docs/memory.md, Thresholds)"
        )


def _group_starts(rows: Sequence[RecalledRow]) -> Iterator[tuple[bool, RecalledRow]]:
    """Each row, with whether it starts a group after an earlier one (where a separator goes)."""
    previous: int | None = None
    for row in rows:
        yield previous is not None and row.group != previous, row
        previous = row.group


def _history_note(rows: Sequence[RecalledRow], thread_id: str, title: str, last: int | None) -> Text | None:
    """What to say about the current thread's history when it is not a plain list of messages.

    A history message inside a hit's window is shown once, as hit or context, so the history list can be
    empty although the thread has messages: say so instead of "no earlier messages".
    """
    history = [r for r in rows if r.kind == "history"]
    folded = sum(r.kind != "history" and r.message.thread_id == thread_id for r in rows)
    if last == 0:
        also = f"; {folded} of its message(s) were recalled, shown as hits or context" if folded else ""
        return Text(f"{title}: not requested (--last 0){also}", style="dim")
    if folded and not history:
        return Text(
            f"{title}: its {folded} message(s) in this recall are hits or context, shown under "
            "“Recalled from memory” and not repeated here",
            style="dim",
        )
    if folded:
        return Text(
            f"(+{folded} more of this thread under “Recalled from memory”: hits or context)", style="dim"
        )
    if not history:
        return Text(f"{title}: no earlier messages", style="dim")
    return None


def _history_view(rows: Sequence[RecalledRow], thread_id: str, title: str, last: int | None) -> Group:
    history = [r for r in rows if r.kind == "history"]
    note = _history_note(rows, thread_id, title, last)
    if not history:
        assert note is not None
        return Group(note)
    table = Table(title=Text(title), title_justify="left", show_header=False, box=None, padding=(0, 1))
    table.add_column("When", style="dim", no_wrap=True)
    table.add_column("Role", style="cyan", no_wrap=True)
    table.add_column("Text")
    for row in history:
        table.add_row(when(row.message.created_at), row.message.role, message_view(row.message))
    return Group(table, *([note] if note else []))


NOTHING = "Nothing recalled: no stored message matched the question."


def _kind_label(row: RecalledRow, weak: Weakness) -> Text:
    if row.kind != "hit":
        return Text("context", style="dim")
    if weak.is_weak(row.score):
        return Text(f"hit #{row.rank} weak", style="yellow")
    return Text(f"hit #{row.rank}", style="bold green")


def _recalled_view(
    rows: Sequence[RecalledRow], titles: Mapping[str, str], caption: str, weak: Weakness
) -> Table | Text:
    recalled = [r for r in rows if r.kind != "history"]
    if not recalled:
        return Text(NOTHING, style="yellow")
    table = Table(title="Recalled from memory", title_justify="left", caption=caption, caption_justify="left")
    table.add_column("Score", justify="right", no_wrap=True)
    table.add_column("Thread", style="magenta")
    table.add_column("Kind", no_wrap=True)
    table.add_column("When", style="dim", no_wrap=True)
    table.add_column("Role", style="cyan", no_wrap=True)
    table.add_column("Text", ratio=1)
    for new_group, row in _group_starts(recalled):
        if new_group:
            table.add_section()
        is_hit = row.kind == "hit"
        table.add_row(
            f"{row.score:.3f}" if row.score is not None else "",
            Text(titles.get(row.message.thread_id) or row.message.thread_id),
            _kind_label(row, weak),
            when(row.message.created_at),
            row.message.role,
            message_view(row.message, "bold" if is_hit else ""),
        )
    return table


def indented(console: Console, text: Text, indent: int) -> Text:
    """``text`` wrapped to the console width with every line indented (no trailing padding)."""
    pad = " " * indent
    width = max(console.width, indent + 20)
    wrapped = textwrap.fill(text.plain, width=width, initial_indent=pad, subsequent_indent=pad)
    return Text(wrapped, style=text.style)


def one_line(text: Text, indent: int = 4) -> Padding:
    """``text`` cut to one line of the console (ending in …), indented."""
    text.no_wrap = True
    text.overflow = "ellipsis"
    return Padding(text, (0, 0, 0, indent), expand=False)


def _text_view(
    console: Console,
    rows: Sequence[RecalledRow],
    thread_id: str,
    titles: Mapping[str, str],
    history_title: str,
    last: int | None,
    weak: Weakness,
    caption: str,
) -> None:
    """The compact layout: one header line per message, hits in full, context and history one line each."""
    history = [r for r in rows if r.kind == "history"]
    if history:
        console.print(Text(f"{history_title}:"))
        for row in history:
            line = Text.assemble((when(row.message.created_at), "dim"), " ", (row.message.role, "cyan"), " ")
            console.print(one_line(line.append_text(message_view(row.message)), 2))
    note = _history_note(rows, thread_id, history_title, last)
    if note is not None:
        console.print(note)
    recalled = [r for r in rows if r.kind != "history"]
    console.print()
    if not recalled:
        console.print(Text(NOTHING, style="yellow"))
        return
    console.print(Text("Recalled from memory:", style="bold"))
    for new_group, row in _group_starts(recalled):
        if new_group:
            console.print()
        where = Text.assemble(
            (titles.get(row.message.thread_id) or row.message.thread_id, "magenta"),
            " · ",
            (when(row.message.created_at), "dim"),
            " · ",
            (row.message.role, "cyan"),
        )
        score = f"{row.score:.3f}" if row.score is not None else ""
        header = Text.assemble("  ", _kind_label(row, weak), " ", score, "  " if score else " ", where)
        if row.kind == "hit":
            console.print(header)
            console.print(indented(console, message_view(row.message), 4))
        else:
            console.print(one_line(header.append(": ").append_text(message_view(row.message)), 0))
    console.print(Text(caption, style="dim"))


def _hits(result: RecallResult) -> str:
    return f"{len(result.hits)} hit" + ("" if len(result.hits) == 1 else "s")


def text_legend(message_range: int, weak: Weakness) -> str:
    """What the compact text layout shows, in one paragraph."""
    return (
        f"Each hit is shown with up to {message_range} message(s) of context on either side, one line each; "
        f"{weak.note()}."
    )


def render_recall(
    console: Console,
    *,
    question: str,
    thread_id: str,
    result: RecallResult,
    titles: Mapping[str, str],
    message_range: int,
    embedder: str,
    layout: Layout = Layout.auto,
    last: int | None = None,
    heading: str = "Question",
    legend: bool = True,
) -> None:
    """Print a question, the current thread's recent history, and the recalled messages.

    ``layout`` picks wide tables or the compact text layout (``auto``: from the console, see
    :func:`resolve_layout`); hits below the embedder's weak level (:data:`WEAK_SCORES`) are marked weak.
    ``legend=False`` leaves out what the text layout's marks mean (print :func:`text_legend` once instead).
    """
    rows = classify(result, thread_id, message_range)
    thread_name = titles.get(thread_id) or thread_id
    weak = Weakness.of(embedder)
    history_title = f"Recent history of “{thread_name}”"
    if resolve_layout(console, layout) == "text":
        caption = f"{_hits(result)} ranked by score (hit #1 best); index {result.index_name or '-'}"
        if legend:
            caption += "\n" + text_legend(message_range, weak)
        console.print()
        console.print(Rule(Text(heading), align="left", characters="─"))
        console.print(Text(question, style="bold"))
        _text_view(console, rows, thread_id, titles, history_title, last, weak, caption)
        return
    caption = (
        f"{_hits(result)} ranked by score (hit #1 best); touching windows form one group, in time "
        f"order;\nup to {message_range} message(s) of context on either side; {weak.note()};\n"
        f"index {result.index_name or '-'}"
    )
    console.print()
    console.print(Panel(Text(question, style="bold"), title=heading, title_align="left", expand=False))
    console.print(
        Group(
            _history_view(rows, thread_id, history_title, last),
            Text(""),
            _recalled_view(rows, titles, caption, weak),
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
