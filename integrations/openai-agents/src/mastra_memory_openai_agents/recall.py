"""``RecallInputFilter``: semantic recall for an Agents SDK run, as a ``RunConfig.call_model_input_filter``.

Why a model-input filter and not ``get_items``: the SDK asks the session for its history before it adds
the turn's new input, so ``get_items`` cannot know the question to recall for, and what a
``session_input_callback`` returns is saved to the session as new input. The model-input filter runs right
before each model call, sees the full input (history plus the new user message) and changes only what the
model receives: the recalled context is never stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.items import TResponseInputItem
from agents.run_config import CallModelData, ModelInputData
from mastra_memory.errors import ConfigError, ThreadNotFoundError
from mastra_memory.memory import MemoryConfig, format_cross_thread_messages, recall_new_context
from mastra_memory.messages import MastraDBMessage

from .session import MemorySession, item_text


class RecallInputFilter:
    """Recall from ``Memory`` for the latest user message of the model input and put what was found,
    with the messages around each hit, ahead of the input as one system message.

    Use it as ``RunConfig(call_model_input_filter=RecallInputFilter(session))``. The search runs in the
    ``Memory``'s semantic-recall options merged with ``thread_config`` (``{"semanticRecall": {"scope":
    "thread", "topK": 2}}``, docs/spec.md §5.2): scope ``resource`` (the default) searches every thread of
    the session's resource, ``thread`` only this session. Messages whose text is already in the input (the
    question itself, the history) are neither hits nor context: the ``topK`` best hits not in the input
    are taken, with ``messageRange`` messages around each; when there are none, the input goes to the model
    unchanged. The system message is
    the cross-thread format of docs/spec.md §6.3 (:func:`mastra_memory.memory.format_cross_thread_messages`).

    Raises ``ConfigError`` when built for a ``Memory`` whose semantic recall is off (after the merge).
    """

    def __init__(
        self, session: MemorySession, *, thread_config: MemoryConfig | Mapping[str, Any] | None = None
    ) -> None:
        config = session.memory.config(thread_config)  # invalid options fail here, before any I/O
        if config.recall is None:
            raise ConfigError(
                "RecallInputFilter needs semantic recall: build the Memory with "
                "options={'semanticRecall': True} (or a dict of options), or pass a thread_config "
                "that turns it on"
            )
        self.session = session
        self.thread_config = thread_config
        self.last_recalled: list[MastraDBMessage] = []
        """The messages put ahead of the input by the latest call (for logging and tests)."""

    async def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        """The model input with the recalled context ahead of it (or unchanged)."""
        model_data = data.model_data
        self.last_recalled = []
        query = _latest_user_text(model_data.input)
        if not query:
            return model_data
        session = self.session
        present = {item_text(item).strip() for item in model_data.input if isinstance(item, Mapping)}
        try:
            recalled = await recall_new_context(
                session.memory,
                session.session_id,
                session.resource_id,
                query,
                present - {""},
                self.thread_config,
            )
        except ThreadNotFoundError:  # thread scope before the session's first save: nothing to recall
            return model_data
        if not recalled:
            return model_data
        self.last_recalled = recalled
        context: TResponseInputItem = {
            "role": "system",
            "content": format_cross_thread_messages(recalled, session.session_id),
        }
        return ModelInputData(input=[context, *model_data.input], instructions=model_data.instructions)


def _latest_user_text(items: list[TResponseInputItem]) -> str:
    for item in reversed(items):
        if isinstance(item, Mapping) and item.get("role") == "user" and item.get("type") in (None, "message"):
            text = item_text(item)
            if text.strip():
                return text
    return ""
