"""The system message that carries messages recalled from other threads (docs/spec.md §6.3, exact format).

The layout follows Mastra's (tuned on a long-memory benchmark); every date and time is rendered in UTC
with English month names, so the output does not depend on the machine's time zone or locale.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC

from ...messages import MastraDBMessage, render_text

HEADER = "Messages recalled from earlier conversations with this user:"
OPEN = "<remembered_from_other_conversation>"
CLOSE = "<end_remembered_from_other_conversation>"
DAY_PREFIX = "messages of "
FROM_PREVIOUS = "from previous conversation"

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_ROLE_RANK = {"system": 0, "user": 1, "assistant": 2, "tool": 3}


def _sort_key(msg: MastraDBMessage) -> tuple[object, ...]:
    return (msg.created_at, msg.thread_id or "", _ROLE_RANK.get(msg.role, 99), msg.id)


def format_cross_thread_messages(messages: Iterable[MastraDBMessage], current_thread_id: str | None) -> str:
    """Render recalled messages of other threads as the content of one system message."""
    body = ""
    previous_day: str | None = None
    for msg in sorted(messages, key=_sort_key):
        text = render_text(msg)
        if not text:
            continue
        at = msg.created_at.astimezone(UTC)
        day = f"{at.year:04d}, {_MONTHS[at.month - 1]}, {at.day}"
        time = f"{at.hour % 12 or 12}:{at.minute:02d} {'AM' if at.hour < 12 else 'PM'}"
        role = msg.role[:1].upper() + msg.role[1:]
        if day != previous_day:
            body += "\n" + DAY_PREFIX + day + "\n"
            previous_day = day
        origin = FROM_PREVIOUS if msg.thread_id and msg.thread_id != current_thread_id else ""
        body += f"Message {origin} at {time}: {role}: {text}"
    return HEADER + "\n" + OPEN + "\n" + body + "\n" + CLOSE
