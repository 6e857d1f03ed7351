"""Legacy v1 message content — a string or an AI SDK part list — as format-2 part dicts (docs/spec.md §4.1).

What :class:`~mastra_memory.messages.MastraDBMessage` stores for v1 input, and the tool-call ids and
results that :func:`~mastra_memory.messages.normalize_messages` folds. Plain data in and out: a leaf that
:mod:`mastra_memory.messages` builds on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def tool_call_id(part: Mapping[str, Any]) -> Any:
    return part.get("tool_call_id", part.get("toolCallId"))


def provider_options(raw: Mapping[str, Any]) -> Any:
    """The AI SDK's ``providerOptions`` of a v1 message or part, which v2 (and Mastra) keeps as
    ``providerMetadata``; ``None`` when absent."""
    return raw.get("providerOptions", raw.get("provider_options"))


def _with_provider_metadata(part: dict[str, Any], raw: Mapping[str, Any]) -> dict[str, Any]:
    options = provider_options(raw)
    if options is not None:
        part["provider_metadata"] = options
    return part


def v1_parts_to_v2(content: Any) -> list[dict[str, Any]]:
    """Convert v1 content (a string or an AI-SDK part list) to v2 part dicts.

    Tool results are folded into a call of the same id in this list; a result without one becomes a
    tool-invocation part of its own in state ``result``.
    """
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise ValueError("content must be a string, a list of parts, or a format-2 content object")
    parts: list[dict[str, Any]] = []
    calls: dict[Any, dict[str, Any]] = {}
    for raw in content:
        if not isinstance(raw, Mapping):
            raise ValueError(f"content parts must be objects, got {type(raw).__name__}")
        kind = raw.get("type")
        if kind == "tool-call":
            invocation = {
                "state": "call",
                "tool_call_id": tool_call_id(raw),
                "tool_name": raw.get("tool_name", raw.get("toolName")),
                "args": raw.get("args", raw.get("input", {})),
            }
            part = {"type": "tool-invocation", "tool_invocation": invocation}
            calls[invocation["tool_call_id"]] = invocation
            parts.append(_with_provider_metadata(part, raw))
        elif kind == "tool-result":
            result = raw.get("result", raw.get("output"))
            call = calls.get(tool_call_id(raw))
            if call is not None:
                call["state"] = "result"
                call["result"] = result
            else:
                parts.append(tool_result_part(raw))
        elif kind == "image":
            image = {
                "type": "file",
                "mime_type": raw.get("mime_type", raw.get("mimeType", "image/*")),
                "data": raw.get("image"),
            }
            parts.append(_with_provider_metadata(image, raw))
        elif kind == "reasoning" and "reasoning" not in raw and "text" in raw:
            parts.append({"type": "reasoning", "reasoning": raw["text"]})
        else:
            part = {k: v for k, v in raw.items() if k not in ("providerOptions", "provider_options")}
            parts.append(_with_provider_metadata(part, raw))
    return parts


def tool_result_part(raw: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "tool-invocation",
        "tool_invocation": {
            "state": "result",
            "tool_call_id": tool_call_id(raw),
            "tool_name": raw.get("tool_name", raw.get("toolName")),
            "args": {},
            "result": raw.get("result", raw.get("output")),
        },
    }
