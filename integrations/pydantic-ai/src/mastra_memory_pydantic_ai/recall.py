"""``MemoryRecall``: a PydanticAI history processor that applies mastra-memory's semantic recall."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from mastra_memory.errors import ConfigError, ThreadNotFoundError, ValidationError
from mastra_memory.memory import Memory, MemoryConfig, format_cross_thread_messages, recall_new_context
from mastra_memory.messages import MastraDBMessage
from pydantic_ai import RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, SystemPromptPart, TextPart, UserPromptPart

from .history import require_id, user_text, without_recall


class MemoryRecall:
    """Recall what the user said before and show it to the model ahead of the history.

    It is a PydanticAI ``HistoryProcessor``; PydanticAI 2.x takes those as the ``ProcessHistory``
    capability: ``Agent(..., capabilities=[ProcessHistory(MemoryRecall(memory))])``. Before each model
    request it takes the latest user prompt, recalls similar messages with the messages around them from
    ``Memory`` (docs/spec.md §5.3) and puts them, in the cross-thread format of docs/spec.md §6.3, into one
    ``SystemPromptPart`` of the first request, after the agent's own system prompts. Messages whose text
    is already in the history (the history itself, the prompt) are neither hits nor context; when nothing
    new is found the history goes to the model unchanged. A later request of the same run replaces the
    part instead of adding another, and :func:`~mastra_memory_pydantic_ai.save_run_messages` never stores
    it.

    Which conversation: ``thread_id`` and ``resource_id`` given here, or else read per run from the run's
    ``deps`` (attributes or keys ``thread_id`` and ``resource_id``). Scope, ``topK``, ``messageRange`` and
    ``threshold`` are the ``Memory``'s semantic-recall options merged with ``thread_config``
    (docs/spec.md §5.2), e.g. ``{"semanticRecall": {"scope": "thread"}}``: ``resource`` (the default)
    searches every thread of the user, ``thread`` this one only.

    Raises ``ConfigError`` when built for a ``Memory`` whose semantic recall is off (after the merge).
    """

    def __init__(
        self,
        memory: Memory,
        *,
        thread_id: str | None = None,
        resource_id: str | None = None,
        thread_config: MemoryConfig | Mapping[str, Any] | None = None,
    ) -> None:
        if memory.config(thread_config).recall is None:  # invalid options fail here too, before any I/O
            raise ConfigError(
                "MemoryRecall needs semantic recall: build the Memory with options={'semanticRecall': True} "
                "(or a dict of options), or pass a thread_config that turns it on"
            )
        self.memory = memory
        self.thread_id = None if thread_id is None else require_id(thread_id, "thread_id")
        self.resource_id = None if resource_id is None else require_id(resource_id, "resource_id")
        self.thread_config = thread_config
        self.last_recalled: list[MastraDBMessage] = []
        """The messages injected by the latest call (for logging and tests)."""

    async def __call__(self, ctx: RunContext[Any], messages: list[ModelMessage]) -> list[ModelMessage]:
        """The history with the recalled context in its first request (or unchanged)."""
        thread_id = self.thread_id or _from_deps(ctx.deps, "thread_id")
        resource_id = self.resource_id or _from_deps(ctx.deps, "resource_id")
        history = without_recall(messages)  # an earlier request of this run injected one: replace it
        self.last_recalled = []
        query = _latest_prompt(history)
        if not query:
            return history
        try:
            recalled = await recall_new_context(
                self.memory, thread_id, resource_id, query, _texts(history), self.thread_config
            )
        except ThreadNotFoundError:  # thread scope before the conversation's first save
            return history
        if not recalled:
            return history
        self.last_recalled = recalled
        part = SystemPromptPart(format_cross_thread_messages(recalled, thread_id))
        first = history[0]
        if not isinstance(first, ModelRequest):
            return [ModelRequest(parts=[part]), *history]
        lead = 0
        while lead < len(first.parts) and isinstance(first.parts[lead], SystemPromptPart):
            lead += 1
        parts = [*first.parts[:lead], part, *first.parts[lead:]]
        return [dataclasses.replace(first, parts=parts), *history[1:]]


def _from_deps(deps: Any, name: str) -> str:
    value = deps.get(name) if isinstance(deps, Mapping) else getattr(deps, name, None)
    if value is None:
        raise ValidationError(
            f"MemoryRecall has no {name}: pass MemoryRecall(memory, {name}=...) or run the agent with deps "
            f"that have a {name!r} attribute or key"
        )
    return require_id(value, name)


def _latest_prompt(history: list[ModelMessage]) -> str:
    for message in reversed(history):
        if isinstance(message, ModelRequest):
            for part in reversed(message.parts):
                if isinstance(part, UserPromptPart) and user_text(part).strip():
                    return user_text(part)
    return ""


def _texts(history: list[ModelMessage]) -> set[str]:
    texts = set()
    for message in history:
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                texts.add(user_text(part).strip())
            elif isinstance(part, TextPart):
                texts.add(part.content.strip())
    return texts - {""}
