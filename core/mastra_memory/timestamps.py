"""Canonical timestamps: timezone-aware UTC, millisecond precision, ``YYYY-MM-DDTHH:MM:SS.mmmZ``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from .errors import ValidationError

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
