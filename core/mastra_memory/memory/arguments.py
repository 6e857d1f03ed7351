"""Id arguments of ``Memory``'s methods, checked before any I/O (docs/spec.md §5.3 step 2)."""

from __future__ import annotations

from typing import Any

from ..errors import ValidationError


def require_id(value: Any, what: str) -> str:
    """``value`` when it is a non-blank string; ValidationError otherwise (docs/spec.md §5.3 step 2)."""
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{what} must be a non-empty string, got {value!r}")
    return value


def optional_resource(resource_id: Any) -> str | None:
    """None, or a non-blank resource id; ``""`` is refused (docs/spec.md §5.3 step 2 **[Δ]**)."""
    if resource_id is None:
        return None
    if not isinstance(resource_id, str) or not resource_id.strip():
        # An empty string must never silently disable resource isolation.
        raise ValidationError(
            "resource_id must be a non-empty string or None (an empty string is not 'no resource')"
        )
    return resource_id
