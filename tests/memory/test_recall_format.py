"""docs/spec.md §6.3: the cross-thread system message, character for character."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from mastra_memory.memory.recall.formatting import (
    CLOSE,
    DAY_PREFIX,
    FROM_PREVIOUS,
    HEADER,
    OPEN,
    format_cross_thread_messages,
)
from mastra_memory.messages import MastraDBMessage


def m(id: str, thread: str | None, text: Any, at: datetime, role: str = "user") -> MastraDBMessage:
    content: Any = (
        text
        if isinstance(text, dict)
        else {"format": 2, "content": text, "parts": [{"type": "text", "text": text}]}
    )
    return MastraDBMessage.model_validate(
        {"id": id, "thread_id": thread or "", "role": role, "content": content, "created_at": at}
    )


def wrap(body: str) -> str:
    return f"{HEADER}\n{OPEN}\n{body}\n{CLOSE}"


def test_constants() -> None:
    assert HEADER == "Messages recalled from earlier conversations with this user:"
    assert (OPEN, CLOSE) == (
        "<remembered_from_other_conversation>",
        "<end_remembered_from_other_conversation>",
    )
    assert DAY_PREFIX == "messages of "
    assert FROM_PREVIOUS == "from previous conversation"


def test_spec_example() -> None:
    msgs = [
        m("3", "t2", "Thanks, found it.", datetime(2024, 3, 6, 9, 30, tzinfo=UTC)),
        m("1", "t2", "Where is the invoice?", datetime(2024, 3, 5, 14, 7, tzinfo=UTC)),
        m("2", "t2", "It went out on Monday.", datetime(2024, 3, 5, 14, 8, tzinfo=UTC), role="assistant"),
    ]
    assert format_cross_thread_messages(msgs, "t1") == (
        "Messages recalled from earlier conversations with this user:\n"
        "<remembered_from_other_conversation>\n"
        "\n"
        "messages of 2024, Mar, 5\n"
        "Message from previous conversation at 2:07 PM: User: Where is the invoice?"
        "Message from previous conversation at 2:08 PM: Assistant: It went out on Monday.\n"
        "messages of 2024, Mar, 6\n"
        "Message from previous conversation at 9:30 AM: User: Thanks, found it.\n"
        "<end_remembered_from_other_conversation>"
    )


def test_same_thread_message_reads_with_two_spaces() -> None:
    out = format_cross_thread_messages([m("1", "t1", "hi", datetime(2024, 1, 1, 0, 5, tzinfo=UTC))], "t1")
    assert out == wrap("\nmessages of 2024, Jan, 1\nMessage  at 12:05 AM: User: hi")


def test_message_without_thread_is_not_from_previous() -> None:
    out = format_cross_thread_messages([m("1", None, "hi", datetime(2024, 1, 1, 12, 0, tzinfo=UTC))], "t1")
    assert out == wrap("\nmessages of 2024, Jan, 1\nMessage  at 12:00 PM: User: hi")


@pytest.mark.parametrize(
    ("hour", "minute", "expected"),
    [
        (0, 0, "12:00 AM"),
        (0, 9, "12:09 AM"),
        (11, 59, "11:59 AM"),
        (12, 0, "12:00 PM"),
        (13, 5, "1:05 PM"),
        (23, 59, "11:59 PM"),
    ],
)
def test_twelve_hour_clock(hour: int, minute: int, expected: str) -> None:
    out = format_cross_thread_messages(
        [m("1", "t2", "x", datetime(2024, 1, 1, hour, minute, tzinfo=UTC))], "t1"
    )
    assert f"Message from previous conversation at {expected}: User: x" in out


def test_every_month_and_unpadded_day() -> None:
    months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    msgs = [m(f"{n:02d}", "t2", f"text {n}", datetime(2024, n, 1 + n % 9, tzinfo=UTC)) for n in range(1, 13)]
    out = format_cross_thread_messages(msgs, "t1")
    days = [line for line in out.split("\n") if line.startswith(DAY_PREFIX)]
    assert days == [f"messages of 2024, {months[n - 1]}, {1 + n % 9}" for n in range(1, 13)]


def test_day_changes_start_a_new_group_and_same_day_runs_together() -> None:
    msgs = [
        m("1", "t2", "one", datetime(2024, 12, 31, 23, 59, tzinfo=UTC)),
        m("2", "t2", "two", datetime(2025, 1, 1, 0, 0, tzinfo=UTC)),
        m("3", "t3", "three", datetime(2025, 1, 1, 0, 1, tzinfo=UTC), role="assistant"),
    ]
    assert format_cross_thread_messages(msgs, "t1") == wrap(
        "\nmessages of 2024, Dec, 31\n"
        "Message from previous conversation at 11:59 PM: User: one"
        "\nmessages of 2025, Jan, 1\n"
        "Message from previous conversation at 12:00 AM: User: two"
        "Message from previous conversation at 12:01 AM: Assistant: three"
    )


def test_empty_text_messages_are_skipped_and_do_not_open_a_day() -> None:
    empty = m("e", "t2", {"format": 2, "parts": []}, datetime(2024, 1, 1, tzinfo=UTC))
    tool_only = m(
        "tool",
        "t2",
        {
            "format": 2,
            "parts": [
                {
                    "type": "tool-invocation",
                    "toolInvocation": {"state": "call", "toolCallId": "c", "toolName": "x", "args": {}},
                }
            ],
        },
        datetime(2024, 1, 2, tzinfo=UTC),
        role="assistant",
    )
    kept = m("k", "t2", "kept", datetime(2024, 1, 3, 8, 0, tzinfo=UTC))
    assert format_cross_thread_messages([empty, tool_only, kept], "t1") == wrap(
        "\nmessages of 2024, Jan, 3\nMessage from previous conversation at 8:00 AM: User: kept"
    )
    assert format_cross_thread_messages([empty], "t1") == wrap("")


def test_text_parts_are_joined_with_one_space() -> None:
    parts = {"format": 2, "parts": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]}
    out = format_cross_thread_messages([m("1", "t2", parts, datetime(2024, 1, 1, tzinfo=UTC))], "t1")
    assert out.endswith("User: first second\n" + CLOSE)


def test_ties_order_by_thread_then_role_rank_then_id() -> None:
    at = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    msgs = [
        m("z", "t3", "t3 user", at),
        m("b", "t2", "t2 assistant", at, role="assistant"),
        m("c", "t2", "t2 user c", at),
        m("a", "t2", "t2 user a", at),
        m("s", "t2", "t2 system", at, role="system"),
    ]
    prefix = "Message from previous conversation at 10:00 AM: "
    assert format_cross_thread_messages(msgs, "t1") == wrap(
        "\nmessages of 2024, May, 1\n"
        + "".join(
            prefix + line
            for line in [
                "System: t2 system",
                "User: t2 user a",
                "User: t2 user c",
                "Assistant: t2 assistant",
                "User: t3 user",
            ]
        )
    )


def test_roles_are_capitalised() -> None:
    out = format_cross_thread_messages(
        [m("1", "t2", "sig", datetime(2024, 1, 1, tzinfo=UTC), role="signal")], "t1"
    )
    assert "Signal: sig" in out


@pytest.fixture
def far_timezone() -> Iterator[None]:
    """The process runs in a time zone far from UTC (and back afterwards)."""
    if not hasattr(time, "tzset"):
        pytest.skip("time.tzset is not available on this platform")
    old = os.environ.get("TZ")
    os.environ["TZ"] = "Pacific/Kiritimati"  # UTC+14: local dates differ from UTC dates
    time.tzset()
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = old
        time.tzset()


@pytest.mark.usefixtures("far_timezone")
def test_rendering_is_utc_regardless_of_tz_and_input_offset() -> None:
    at = datetime(2024, 3, 5, 23, 30, tzinfo=timezone(timedelta(hours=-5)))  # 2024-03-06 04:30 UTC
    out = format_cross_thread_messages([m("1", "t2", "late", at)], "t1")
    assert out == wrap(
        "\nmessages of 2024, Mar, 6\nMessage from previous conversation at 4:30 AM: User: late"
    )
