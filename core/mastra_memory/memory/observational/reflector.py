"""The Reflector call on the chat-model protocol (docs/spec.md §5.14): the observations (group tags
removed) in, a condensed rewrite out, parsed like the Observer's answer (``ModelOutputError`` with the
reply when it holds no observations)."""

from __future__ import annotations

from ...models import ChatModel
from .observer import AgentResult
from .prompts import parse_output, reflector_messages


async def run_reflector(model: ChatModel, observations: str, instruction: str | None) -> AgentResult:
    """Ask the Reflector for a condensed rewrite of ``observations`` (group tags removed).

    Raises:
        ModelError: the call failed; ModelOutputError: the reply holds no observations.
    """
    reply = await model(reflector_messages(observations, instruction))
    output = parse_output(reply.text, model.model_id, "Reflector")
    return AgentResult(output, reply.usage, reply.model_id or model.model_id)
