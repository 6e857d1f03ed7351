"""The demo: load the bundled conversations of one user, then ask questions only earlier threads answer.

The sample (``sample.jsonl``, package data) holds five conversations of the user ``alex`` over a few weeks
of February and March 2025: a trip to Kyoto, adopting a puppy, a home office, a half-marathon plan and a
book club. Each question is asked in a new thread of the same user; semantic recall in resource scope
finds the message that answers it in another thread. The questions are saved to the new thread after
they are asked, so later questions see them as history, and the recall filter leaves the question thread
out of the search (its messages are already in the history).
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import ValidationError
from ..memory import Memory, RecallResult
from ..storage import Thread
from ..stores.sqlite.storage import SQLiteStorage
from ..stores.sqlite.store import SQLiteVector
from .loader import Advance, MessageFile, load_messages, parse_lines

DEMO_DB = "mastra-memory-demo.db"
DEMO_RESOURCE = "alex"
QUESTION_THREAD = "catch-up"
QUESTION_THREAD_TITLE = "Catch-up questions"
SAMPLE = "sample.jsonl"
TOP_K = 3
MESSAGE_RANGE = 1
LAST_MESSAGES = 4


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

    db: Path
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


def demo_options() -> dict[str, Any]:
    """The Memory options of the demo: short history, resource-scoped recall of the 3 best matches."""
    return {
        "last_messages": LAST_MESSAGES,
        "semantic_recall": {
            "top_k": TOP_K,
            "message_range": MESSAGE_RANGE,
            "scope": "resource",
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


async def run_demo(
    db: Path,
    embedder: str = "local/wordllama",
    *,
    loaded: Advance | None = None,
    asked: Advance | None = None,
) -> DemoReport:
    """Recreate the demo database at ``db``, load the sample, and ask every question of :data:`QUESTIONS`.

    ``loaded`` is called with the number of messages saved per batch, ``asked`` with 1 per question.
    """
    started = time.perf_counter()
    sample = read_sample()
    reset_demo_database(db)
    url = str(db)
    memory = Memory(SQLiteStorage(url=url), SQLiteVector(url=url), embedder, options=demo_options())
    try:
        report = await load_messages(memory, sample, batch_size=16, advance=loaded)
        await memory.create_thread(DEMO_RESOURCE, QUESTION_THREAD, title=QUESTION_THREAD_TITLE)
        answers: list[Answer] = []
        for question in QUESTIONS:
            result = await memory.recall(
                thread_id=QUESTION_THREAD, resource_id=DEMO_RESOURCE, vector_search_string=question.text
            )
            answers.append(Answer(question=question, result=result))
            await memory.save_messages(
                [
                    {
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
        embedder=embedder,
        messages_loaded=report.saved,
        threads=threads,
        answers=answers,
        elapsed=time.perf_counter() - started,
    )
