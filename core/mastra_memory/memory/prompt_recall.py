"""Recall for a prompt that already holds part of the conversation: the semantic hits that are not in
the prompt yet, with the messages around them (docs/spec.md §5.3 through ``Memory.recall``); used by the
agent-framework integrations (integrations/), whose prompts are built by the framework.

Agent frameworks save the turn's user message before the model is called, so the best hit for the
question is usually the question itself, and the session's recent history is in the prompt too. Dropping
such hits after a top-k search would leave fewer than top-k new ones, so the search asks for
``top_k + len(present)`` hits without context, keeps the best ``top_k`` whose text is not in the prompt,
and then fetches their context windows.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

__all__ = ["recall_new_context"]

from ..messages import MastraDBMessage, render_text
from .config import MemoryConfig, merge_config
from .facade import Memory


async def recall_new_context(
    memory: Memory,
    thread_id: str,
    resource_id: str,
    query: str,
    present: Set[str],
    thread_config: MemoryConfig | Mapping[str, Any] | None,
) -> list[MastraDBMessage]:
    """The recalled messages (hits and their windows, oldest first) whose text is not in ``present``.

    Raises ``ThreadNotFoundError`` in thread scope when the thread does not exist yet.
    """
    config = memory.config(thread_config)
    recall = config.recall
    if recall is None:
        return []
    wider = merge_config(config, {"semanticRecall": {"topK": recall.top_k + len(present), "messageRange": 0}})
    found = await memory.recall(
        thread_id, resource_id=resource_id, vector_search_string=query, per_page=0, thread_config=wider
    )
    text = {m.id: render_text(m).strip() for m in found.messages}
    hits = [h for h in found.hits if text.get(h.message_id, "") not in present][: recall.top_k]
    if not hits:
        return []
    window = recall.message_range
    include = [
        {
            "id": hit.message_id,
            "threadId": hit.thread_id,
            "withPreviousMessages": window.before,
            "withNextMessages": window.after,
        }
        for hit in hits
    ]
    context = await memory.recall(
        thread_id, resource_id=resource_id, per_page=0, include=include, thread_config=config
    )
    return [m for m in context.messages if render_text(m).strip() not in present | {""}]
