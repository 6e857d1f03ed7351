"""The Observer call on the chat-model protocol (docs/spec.md §5.14): request built by
:mod:`.prompts`, reply parsed there (``ModelOutputError`` with the reply when it holds no observations),
tokens reported in the result so each cycle's cost is observable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...messages import MastraDBMessage
from ...models import ChatModel, Usage, resolve_model
from .options import MASTRA_DEFAULT_MODEL, ModelSettings, UnsupportedOMOptionError
from .prompts import ObserverOutput, observer_messages, parse_output


@dataclass(frozen=True)
class AgentResult:
    """One Observer or Reflector call: what it wrote, the tokens it spent, the model that answered."""

    output: ObserverOutput
    usage: Usage
    model_id: str


def agent_model(spec: Any, settings: ModelSettings, role: str) -> ChatModel:
    """The chat model of the Observer or Reflector from its option (a model-router string, Mastra's
    ``{id, url, apiKey}`` or a ``ChatModel``), with ``model_settings`` as request options.

    Raises:
        UnsupportedOMOptionError: no model set, or Mastra's ``"default"`` (google/gemini-2.5-flash, which
            has no provider here) [Δ].
        ConfigError: a model the router cannot resolve.
    """
    if spec is None or spec == "default":
        raise UnsupportedOMOptionError(
            "model",
            f"the {role} needs a model: Mastra falls back to {MASTRA_DEFAULT_MODEL}, which has no provider "
            "here. Set observational_memory.model (e.g. 'openai/gpt-4o-mini', an OpenAI-compatible "
            "{'id': ..., 'url': ...} or a ChatModel)",
        )
    if isinstance(spec, ChatModel):
        return spec
    options: dict[str, Any] = {}
    if settings.temperature is not None:
        options["temperature"] = settings.temperature
    if settings.max_output_tokens is not None:
        options["max_tokens"] = settings.max_output_tokens
    return resolve_model(spec, options or None)


async def run_observer(
    model: ChatModel,
    existing: str,
    messages: Mapping[str, Sequence[MastraDBMessage]],
    instruction: str | None,
) -> AgentResult:
    """Ask the Observer for observations of ``messages`` (by thread), given the observations so far.

    Raises:
        ModelError: the call failed; ModelOutputError: the reply holds no observations.
    """
    reply = await model(observer_messages(existing, messages, instruction))
    output = parse_output(reply.text, model.model_id, "Observer")
    return AgentResult(output, reply.usage, reply.model_id or model.model_id)
