"""The span attributes of ``Memory.save_messages`` and ``Memory.recall`` (:mod:`mastra_memory.tracing`).

Ids, counts, index names and scores only; text (the saved messages' text, the recall query) goes through
``tracing.span``'s ``text`` or ``add_text``, which drop it unless the user turned text recording on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..tracing import AttributeValue, SpanLike, add_text

__all__ = ["recall_attributes", "recall_found", "save_after", "save_before"]


def _field(message: Any, *names: str) -> Any:
    for name in names:
        value = message.get(name) if isinstance(message, Mapping) else getattr(message, name, None)
        if value is not None:
            return value
    return None


def save_before(
    self: object, messages: Sequence[Any], *args: Any, background: bool = False, **kwargs: Any
) -> dict[str, AttributeValue | None]:
    threads = sorted({str(t) for m in messages if (t := _field(m, "thread_id", "threadId")) is not None})
    return {
        "mastra_memory.message_count": len(messages),
        "mastra_memory.thread_ids": threads,
        "mastra_memory.background": background,
    }


def save_after(result: Any, span: SpanLike) -> None:
    from ..messages import render_text

    span.set_attribute("mastra_memory.saved_count", len(result.messages))
    add_text(span, [render_text(m) for m in result.messages])


def recall_attributes(request: Any) -> dict[str, AttributeValue | None]:
    """From the validated ``RecallRequest``: ids, scope, whether a semantic search runs (not the query)."""
    return {
        "mastra_memory.thread_id": request.thread_id,
        "mastra_memory.resource_id": request.resource_id,
        "mastra_memory.recall.scope": str(request.scope),
        "mastra_memory.recall.semantic": request.query is not None,
    }


def recall_found(found: Any, span: SpanLike) -> None:
    """What recall found: counts, hit ids and scores, the index searched."""
    span.set_attribute("mastra_memory.recall.message_count", len(found.messages))
    span.set_attribute("mastra_memory.recall.hit_count", len(found.hits))
    span.set_attribute("mastra_memory.recall.hit_ids", [h.message_id for h in found.hits])
    span.set_attribute("mastra_memory.recall.scores", [float(h.score) for h in found.hits])
    if found.index_name:
        span.set_attribute("mastra_memory.vector.index", found.index_name)
