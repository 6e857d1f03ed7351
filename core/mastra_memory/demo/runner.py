"""The demo: load the bundled conversations of one user, then ask questions only earlier threads answer.

The sample (``sample.jsonl``, package data) holds five conversations of the user ``alex`` over a few weeks
of February and March 2025: a trip to Kyoto, adopting a puppy, a home office, a half-marathon plan and a
book club. Each question is asked in a new thread of the same user; semantic recall in resource scope
finds the message that answers it in another thread. The questions are saved to the new thread after
they are asked, so later questions see them as history, and the recall filter leaves the question thread
out of the search (its messages are already in the history).

By default the demo keeps its database in the user data directory (:func:`default_demo_db`), never in the
working directory. Every run starts from the same state: an earlier demo database is replaced, and in a
store given by URL the demo's own threads are deleted first; messages have fixed ids, so nothing piles up.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import ValidationError
from ..memory import Memory, RecallResult
from ..plugins import create_vector
from ..storage import Thread
from .loader import Advance, MessageFile, load_messages, parse_lines
from .opening import memory_over

DEMO_DB = "demo.db"
"""The demo database's file name, in :func:`data_dir`."""
DEMO_RESOURCE = "alex"
QUESTION_THREAD = "catch-up"
QUESTION_THREAD_TITLE = "Catch-up questions"
SAMPLE = "sample.jsonl"
TOP_K = 3
MESSAGE_RANGE = 1
LAST_MESSAGES = 4


def data_dir() -> Path:
    """Where mastra-memory keeps its own files: ``$XDG_DATA_HOME/mastra-memory``, by default
    ``~/.local/share/mastra-memory`` (``%LOCALAPPDATA%\\mastra-memory`` on Windows)."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "mastra-memory"
    xdg = os.environ.get("XDG_DATA_HOME", "")
    # The XDG spec ignores a relative XDG_DATA_HOME.
    base_dir = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
    return base_dir / "mastra-memory"


def default_demo_db() -> Path:
    """The demo's SQLite file when no other store is given: :data:`DEMO_DB` in :func:`data_dir`."""
    return data_dir() / DEMO_DB


@dataclass(frozen=True, slots=True)
class DemoQuestion:
    """A question, the sample message that answers it, and the words of the answer."""

    text: str
    answer_id: str
    answer: str


QUESTIONS: tuple[DemoQuestion, ...] = (
    DemoQuestion("When do I check in at the hotel in Kyoto?", "kyoto-trip-07", "check-in April 3"),
    DemoQuestion("What did we name the puppy?", "puppy-05", "Miso"),
    DemoQuestion("Which monitor did I pick?", "home-office-07", "LG 27UP850"),
    DemoQuestion("What time is the vet appointment?", "puppy-09", "Tuesday 9:30"),
    DemoQuestion("What is my target pace for the half marathon?", "running-02", "9:09 per mile"),
    DemoQuestion("Which book are we reading next for book club?", "book-club-05", "The Remains of the Day"),
)


@dataclass(frozen=True, slots=True)
class Answer:
    """One question and what recall returned for it."""

    question: DemoQuestion
    result: RecallResult


@dataclass(frozen=True, slots=True)
class DemoReport:
    """Everything the demo did, for rendering and for tests."""

    db: Path | None  # the SQLite file, when the demo used one
    store: str  # where the demo stored everything, as printed
    embedder: str
    messages_loaded: int
    threads: dict[str, Thread]
    answers: list[Answer]
    elapsed: float

    @property
    def index_name(self) -> str | None:
        return next((a.result.index_name for a in self.answers if a.result.index_name), None)


def read_sample() -> MessageFile:
    """The bundled sample conversations, parsed and checked."""
    text = resources.files(__package__).joinpath(SAMPLE).read_text(encoding="utf-8")
    return parse_lines(text.split("\n"), SAMPLE)


def demo_options(mode: str = "auto") -> dict[str, Any]:
    """The Memory options of the demo: short history, resource-scoped recall of the 3 best matches,
    ranked in ``mode`` (``semanticRecall.mode``)."""
    return {
        "last_messages": LAST_MESSAGES,
        "semantic_recall": {
            "top_k": TOP_K,
            "message_range": MESSAGE_RANGE,
            "scope": "resource",
            "mode": mode,
            "filter": {"thread_id": {"$ne": QUESTION_THREAD}},
        },
    }


def _sqlite_files(db: Path) -> list[Path]:
    return [
        db,
        db.with_name(db.name + "-wal"),
        db.with_name(db.name + "-shm"),
        db.with_name(db.name + "-journal"),
    ]


def _is_demo_database(db: Path) -> bool:
    """True when ``db`` is an empty file or an SQLite store whose threads all belong to the demo user.

    Reads the SQLite store's ``mastra_threads`` table directly, read-only, so nothing is created in a
    file that turns out not to be a demo database.
    """
    if db.stat().st_size == 0:
        return True
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return False
    try:
        rows = conn.execute("SELECT DISTINCT resource_id FROM mastra_threads").fetchall()
    except sqlite3.Error:
        return False
    finally:
        conn.close()
    return bool(rows) and all(row[0] == DEMO_RESOURCE for row in rows)


def reset_demo_database(db: Path) -> None:
    """Remove an earlier demo database at ``db``; refuse to remove anything else."""
    if db.exists():
        if not db.is_file() or not _is_demo_database(db):
            raise ValidationError(
                f"{db} exists and is not a demo database, so the demo will not replace it; "
                "pass another path with --db"
            )
        for path in _sqlite_files(db):
            path.unlink(missing_ok=True)


async def clear_demo_threads(memory: Memory) -> None:
    """Delete the demo's threads (messages and vectors) from a store that holds only demo data.

    Raises ValidationError, deleting nothing, when the store holds another user's threads.
    """
    page = await memory.list_threads(per_page=False)
    others = sorted({t.resource_id for t in page.threads if t.resource_id != DEMO_RESOURCE})
    if others:
        raise ValidationError(
            f"the store holds threads of other users ({', '.join(map(repr, others[:3]))}), so the demo "
            "will not write to it; give the demo a store of its own"
        )
    for thread in page.threads:
        await memory.delete_thread(thread.id)


async def run_demo(
    db: Path | None = None,
    embedder: str = "local/wordllama",
    *,
    storage: str | None = None,
    vector: str | None = None,
    embedder_options: Mapping[str, Any] | None = None,
    mode: str = "auto",
    loaded: Advance | None = None,
    asked: Advance | None = None,
) -> DemoReport:
    """Load the sample and ask every question of :data:`QUESTIONS`, starting from a clean demo state.

    The store is the SQLite file ``db`` (default :func:`default_demo_db`; an earlier demo database there
    is replaced, anything else is refused), or ``storage`` (a URL or plugin name; the demo's threads are
    deleted from it first). ``vector`` (a URL or plugin name) overrides where the vectors go;
    ``embedder_options`` go to the embedder (``Memory(embedder_options=...)``); ``mode`` is recall's
    ``semanticRecall.mode``. ``loaded`` is
    called with the number of messages saved per batch, ``asked`` with 1 per question.
    """
    started = time.perf_counter()
    sample = read_sample()
    if storage is not None and db is not None:
        raise ValidationError("give the demo a database file or a storage URL, not both")
    vector_store = create_vector(vector) if vector is not None else None  # a bad URL fails before the reset
    if storage is None:
        db = db if db is not None else default_demo_db()
        reset_demo_database(db)
    store = str(db if storage is None else storage) + (f" (vectors: {vector})" if vector is not None else "")
    memory = memory_over(db, storage, vector_store, embedder, demo_options(mode), embedder_options)
    try:
        await clear_demo_threads(memory)
        report = await load_messages(memory, sample, batch_size=16, advance=loaded)
        await memory.create_thread(DEMO_RESOURCE, QUESTION_THREAD, title=QUESTION_THREAD_TITLE)
        answers: list[Answer] = []
        for number, question in enumerate(QUESTIONS, start=1):
            result = await memory.recall(
                thread_id=QUESTION_THREAD, resource_id=DEMO_RESOURCE, vector_search_string=question.text
            )
            answers.append(Answer(question=question, result=result))
            await memory.save_messages(
                [
                    {
                        "id": f"{QUESTION_THREAD}-{number:02d}",  # fixed: a rerun replaces, never adds
                        "thread_id": QUESTION_THREAD,
                        "resource_id": DEMO_RESOURCE,
                        "role": "user",
                        "content": question.text,
                    }
                ]
            )
            if asked is not None:
                asked(1)
        page = await memory.list_threads(filter={"resource_id": DEMO_RESOURCE}, per_page=False)
        threads = {thread.id: thread for thread in page.threads}
    finally:
        await memory.close()
    return DemoReport(
        db=db,
        store=store,
        embedder=embedder,
        messages_loaded=report.saved,
        threads=threads,
        answers=answers,
        elapsed=time.perf_counter() - started,
    )
