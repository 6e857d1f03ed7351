"""How an update merges into what is stored: metadata one level (docs/spec.md §4.2), message content one
level and its ``metadata`` one level deeper (§4.5).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic.alias_generators import to_camel

from ..messages import MastraDBMessage, MessageContentV2
from .arguments import parse_model

__all__ = ["merged_content", "merged_metadata"]

#: camelCase alias -> field name of MessageContentV2, so content patches may use either spelling.
_CONTENT_ALIASES = {to_camel(name): name for name in MessageContentV2.model_fields}


def merged_metadata(current: dict[str, Any] | None, patch: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Shallow-merge ``patch`` into stored metadata; ``None`` keeps what is stored (docs/spec.md §4.2)."""
    return current if patch is None else {**(current or {}), **patch}


def merged_content(
    current: MastraDBMessage, patch: Mapping[str, Any], *, store: str, operation: str
) -> MessageContentV2:
    """Merge a content patch one level deep, and ``metadata`` one level deeper (docs/spec.md §4.5);
    ValidationError if the result is not valid content."""
    merged = current.content.model_dump()
    for key, value in patch.items():
        name = _CONTENT_ALIASES.get(key, key)
        if name == "metadata" and isinstance(value, Mapping) and isinstance(merged.get("metadata"), Mapping):
            merged["metadata"] = {**merged["metadata"], **value}
        else:
            merged[name] = value
    return parse_model(
        MessageContentV2,
        merged,
        store=store,
        operation=operation,
        status="INVALID_ARGS",
        what=f"content of message {current.id}",
    )
