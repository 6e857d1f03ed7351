"""A scripted chat model for tests (docs/spec.md §5.13): replays the replies it was given, in order, and
records every request, so a test can check what a feature sent to its model without a network."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ModelError
from .protocol import ChatMessage, ModelReply, Usage, parse_structured

Script = str | ModelReply | BaseException | Callable[[Sequence[ChatMessage]], "str | ModelReply"]


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One call a :class:`ScriptedModel` received."""

    messages: tuple[dict[str, Any], ...]
    schema: Mapping[str, Any] | None = None
    tools: tuple[Mapping[str, Any], ...] = ()


class ScriptedModel:
    """A real :class:`ChatModel` whose replies are given in advance.

    Each call takes the next entry of ``replies``: a string (the reply text; usage counts one token per
    whitespace-separated word in and out), a :class:`ModelReply` (returned as is), an exception (raised,
    for failure tests), or a function of the messages returning either. When the script runs out, the
    last entry repeats if ``repeat_last`` is set, else the call raises ``ModelError``. A ``schema`` request
    is checked like a real model's (``ModelOutputError`` with the reply attached).
    """

    def __init__(
        self, replies: Sequence[Script], *, model_id: str = "scripted/model", repeat_last: bool = False
    ) -> None:
        self.model_id = model_id
        self.replies = list(replies)
        self.repeat_last = repeat_last
        self.requests: list[ModelRequest] = []

    def __repr__(self) -> str:
        return f"ScriptedModel({self.model_id!r}, {len(self.requests)} call(s))"

    async def __call__(
        self,
        messages: Sequence[ChatMessage],
        *,
        schema: Mapping[str, Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> ModelReply:
        """Record the request and play the next scripted reply."""
        self.requests.append(ModelRequest(tuple(dict(m) for m in messages), schema, tuple(tools or ())))
        index = len(self.requests) - 1
        if index >= len(self.replies):
            if not (self.repeat_last and self.replies):
                raise ModelError(
                    f"Model {self.model_id} ran out of scripted replies after {len(self.replies)} call(s)",
                    details={"model_id": self.model_id},
                )
            index = len(self.replies) - 1
        entry = self.replies[index]
        if isinstance(entry, BaseException):
            raise entry
        if callable(entry) and not isinstance(entry, ModelReply):
            entry = entry(messages)
        if isinstance(entry, ModelReply):
            reply = entry
        else:
            words_in = sum(len(str(m.get("content", "")).split()) for m in messages)
            reply = ModelReply(entry, Usage(words_in, len(entry.split())), self.model_id)
        if schema is not None:
            parsed = parse_structured(self.model_id, reply.text, schema)
            reply = ModelReply(
                reply.text, reply.usage, reply.model_id, reply.tool_calls, parsed, reply.finish_reason
            )
        return reply
