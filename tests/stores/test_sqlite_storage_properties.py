"""Differential test: SQLite ``list_messages`` equals a literal Python reading of docs/spec.md §4.3 on random
data."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mastra_memory.messages import MastraDBMessage
from mastra_memory.storage import metadata_matches
from mastra_memory.stores.sqlite.storage import SQLiteStorage

T0 = datetime(2024, 1, 1, tzinfo=UTC)
THREADS = {"t0": "r0", "t1": "r0", "t2": "r1", "t3": "r1"}
VALUES = [None, True, False, 0, 1, 1.0, 2.5, "1", "x"]


@dataclass(frozen=True)
class Query:
    thread_ids: list[str]
    resource_id: str | None
    start: int | None
    end: int | None
    start_exclusive: bool
    end_exclusive: bool
    metadata: dict[str, Any] | None
    include: list[tuple[str, int, int]]
    per_page: int | bool | None
    page: int
    descending: bool
    include_total: bool

    def kwargs(self) -> dict[str, Any]:
        date_range: dict[str, Any] = {
            "start_exclusive": self.start_exclusive,
            "end_exclusive": self.end_exclusive,
        }
        if self.start is not None:
            date_range["start"] = T0 + timedelta(seconds=self.start)
        if self.end is not None:
            date_range["end"] = T0 + timedelta(seconds=self.end)
        return {
            "thread_id": self.thread_ids,
            "resource_id": self.resource_id,
            "filter": {"date_range": date_range, "metadata": self.metadata},
            "include": [
                {"id": i, "thread_id": "t0", "with_previous_messages": p, "with_next_messages": n}
                for i, p, n in self.include
            ]
            or None,
            "per_page": self.per_page,
            "page": self.page,
            "order_by": {"field": "created_at", "direction": "DESC" if self.descending else "ASC"},
            "include_total": self.include_total,
        }


def reference(messages: list[MastraDBMessage], q: Query) -> tuple[list[str], int | None, bool]:
    """docs/spec.md §4.3 steps 2–8, read literally, over a plain list."""

    def key(m: MastraDBMessage) -> tuple[datetime, str]:
        return (m.created_at, m.id)

    per_page = 40 if q.per_page is None else q.per_page
    by_id = {m.id: m for m in messages}

    windows: dict[str, MastraDBMessage] = {}
    for target_id, before, after in q.include:
        target = by_id.get(target_id)
        if target is None or (q.resource_id is not None and target.resource_id != q.resource_id):
            continue
        thread = sorted(
            (
                m
                for m in messages
                if m.thread_id == target.thread_id
                and (q.resource_id is None or m.resource_id == q.resource_id)
            ),
            key=key,
        )
        at = thread.index(target)
        for m in thread[max(0, at - before) : at + after + 1]:
            windows.setdefault(m.id, m)

    if per_page is not False and per_page == 0:
        ordered = sorted(windows.values(), key=key, reverse=q.descending)
        return [m.id for m in ordered], 0, False

    def in_base(m: MastraDBMessage) -> bool:
        ms = (m.created_at - T0) // timedelta(milliseconds=1)
        return (
            m.thread_id in q.thread_ids
            and (q.resource_id is None or m.resource_id == q.resource_id)
            and (q.start is None or (ms > q.start * 1000 if q.start_exclusive else ms >= q.start * 1000))
            and (q.end is None or (ms < q.end * 1000 if q.end_exclusive else ms <= q.end * 1000))
            and metadata_matches(q.metadata, m.content.metadata)
        )

    base = sorted((m for m in messages if in_base(m)), key=key, reverse=q.descending)
    total = len(base)
    offset = 0 if per_page is False else q.page * per_page
    page_rows = base[offset:] if per_page is False else base[offset : offset + per_page]
    merged = {m.id: m for m in page_rows}
    for message_id, message in windows.items():
        merged.setdefault(message_id, message)
    result = sorted(merged.values(), key=key, reverse=q.descending)
    has_more = False
    if per_page is not False:
        has_more = offset + len(page_rows) < total
        if q.include:
            has_more = has_more and sum(1 for m in result if m.thread_id in q.thread_ids) < total
    return [m.id for m in result], total if q.include_total else None, has_more


message_rows = st.lists(
    st.tuples(
        st.sampled_from(sorted(THREADS)),
        st.integers(0, 5),  # few distinct seconds, so (created_at, id) ties are common
        st.none() | st.dictionaries(st.sampled_from(["a", "b"]), st.sampled_from(VALUES), max_size=2),
    ),
    max_size=14,
)


@st.composite
def queries(draw: st.DrawFn, message_count: int) -> Query:
    per_page = draw(st.none() | st.just(False) | st.integers(0, 4))
    ids = [f"m{i:02d}" for i in range(message_count)] + ["ghost"]
    return Query(
        thread_ids=draw(st.lists(st.sampled_from(sorted(THREADS)), min_size=1, max_size=3)),
        resource_id=draw(st.sampled_from([None, "r0", "r1"])),
        start=draw(st.none() | st.integers(0, 5)),
        end=draw(st.none() | st.integers(0, 5)),
        start_exclusive=draw(st.booleans()),
        end_exclusive=draw(st.booleans()),
        metadata=draw(
            st.none() | st.dictionaries(st.sampled_from(["a", "b", "c"]), st.sampled_from(VALUES), max_size=2)
        ),
        include=draw(
            st.lists(st.tuples(st.sampled_from(ids), st.integers(0, 3), st.integers(0, 3)), max_size=3)
        ),
        per_page=per_page,
        page=0 if per_page is False else draw(st.integers(0, 3)),
        descending=draw(st.booleans()),
        include_total=draw(st.booleans()),
    )


async def run_case(rows: list[tuple[str, int, dict[str, Any] | None]], query_list: list[Query]) -> None:
    storage = SQLiteStorage(":memory:")
    try:
        for thread_id, resource_id in THREADS.items():
            await storage.save_thread({"id": thread_id, "resource_id": resource_id})
        saved = await storage.save_messages(
            [
                {
                    "id": f"m{i:02d}",
                    "thread_id": thread_id,
                    "role": "user",
                    "created_at": T0 + timedelta(seconds=second),
                    "content": {
                        "format": 2,
                        "parts": [{"type": "text", "text": str(i)}],
                        "metadata": metadata,
                    },
                }
                for i, (thread_id, second, metadata) in enumerate(rows)
            ]
        )
        for q in query_list:
            page = await storage.list_messages(**q.kwargs())
            assert ([m.id for m in page.messages], page.total, page.has_more) == reference(saved, q), q
    finally:
        await storage.close()


@settings(max_examples=60)
@given(data=st.data(), rows=message_rows)
def test_list_messages_matches_the_reference(data: st.DataObject, rows: list[Any]) -> None:
    query_list = data.draw(st.lists(queries(len(rows)), min_size=1, max_size=6))
    asyncio.run(run_case(rows, query_list))
