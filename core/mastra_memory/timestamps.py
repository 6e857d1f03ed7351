"""Canonical timestamps: timezone-aware UTC, millisecond precision, ``YYYY-MM-DDTHH:MM:SS.mmmZ``.

Also what converts into them (ISO-8601 text, epoch milliseconds) and :class:`StampClock`, which hands
out strictly increasing "now" stamps.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

from .errors import ValidationError

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS = timedelta(milliseconds=1)


def require_aware(value: datetime, what: str = "datetime") -> datetime:
    """Return ``value`` in UTC truncated to milliseconds; naive datetimes raise ValidationError."""
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise ValidationError(
            f"{what} must be timezone-aware (got naive {value.isoformat()}); "
            "use datetime.now(timezone.utc) or attach a tzinfo"
        )
    utc = value.astimezone(UTC)
    return utc.replace(microsecond=(utc.microsecond // 1000) * 1000)


def canonical_timestamp(value: datetime) -> str:
    """The canonical text form, e.g. ``2024-03-05T14:07:00.000Z``. Naive datetimes raise ValidationError."""
    utc = require_aware(value)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_timestamp(value: str | datetime, what: str = "timestamp") -> datetime:
    """Parse an ISO-8601 string (``Z`` or an offset required) or pass an aware datetime through."""
    if isinstance(value, datetime):
        return require_aware(value, what)
    if not isinstance(value, str):
        raise ValidationError(
            f"{what} must be an ISO-8601 string or an aware datetime, got {type(value).__name__}"
        )
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError as exc:
        raise ValidationError(f"{what} is not an ISO-8601 timestamp: {value!r}") from exc
    return require_aware(parsed, what)


def utc_now() -> datetime:
    """Now, in UTC, truncated to milliseconds."""
    return require_aware(datetime.now(UTC))


def next_after(previous: datetime | None, now: datetime | None = None) -> datetime:
    """``max(now, previous + 1 ms)``: strictly increasing stamps even within one millisecond."""
    current = now or utc_now()
    if previous is not None and current <= previous:
        return previous + _ONE_MS
    return current


class StampClock:
    """Hands out strictly increasing "now" stamps, 1 ms apart, across every call in the process.

    Two saves in the same millisecond would otherwise tie on ``created_at`` and order by random uuid.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: datetime | None = None

    def take(self, count: int) -> list[datetime]:
        with self._lock:
            first = next_after(self._last)
            stamps = [first + _ONE_MS * k for k in range(count)]
            if stamps:
                self._last = stamps[-1]
            return stamps

    def next(self) -> datetime:
        return self.take(1)[0]


def epoch_ms(value: datetime) -> int:
    """Milliseconds since the Unix epoch of an aware datetime (naive ones raise ValidationError)."""
    return (parse_timestamp(value) - _EPOCH) // _ONE_MS


def from_epoch_ms(value: int) -> datetime:
    """The aware UTC datetime of an epoch-milliseconds value."""
    return _EPOCH + _ONE_MS * value


def coerce_datetime(value: Any, what: str) -> datetime:
    """An aware UTC millisecond datetime from a datetime, an ISO-8601 string, or epoch milliseconds."""
    if isinstance(value, bool):
        raise ValidationError(f"{what} must be an aware datetime or an ISO-8601 string, got a bool")
    if isinstance(value, int):
        try:
            return from_epoch_ms(value)
        except OverflowError:  # beyond the years 1-9999 that datetime holds
            raise ValidationError(
                f"{what} of {value if abs(value) < 10**30 else 'so many'} epoch milliseconds is outside the "
                "years 1-9999; pass milliseconds since 1970 (e.g. 1700000000000), an ISO-8601 string or an "
                "aware datetime"
            ) from None
    if isinstance(value, datetime | str):
        try:
            return parse_timestamp(value, what)
        except OverflowError:  # e.g. 9999-12-31T23:00-05:00 is in the year 10000 in UTC
            raise ValidationError(
                f"{what} {value!s} is outside the years 1-9999 once converted to UTC"
            ) from None
    raise ValidationError(
        f"{what} must be an aware datetime or an ISO-8601 string, got {type(value).__name__}"
    )
