"""The chat-model protocol (docs/spec.md §5.13): messages (+ an optional JSON schema or tools) in, a reply
with token usage out. Built once, for every memory feature that needs a model (thread titles, §5.9).

Messages use the OpenAI chat shape, ``{"role": "system" | "user" | "assistant" | "tool", "content": str}``,
because every provider here speaks it and Mastra's own prompts are built from those roles.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..errors import ModelOutputError

ChatMessage = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one model call consumed, as the provider reported them (0 when it reported nothing)."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the model asked for: the call id, the tool's name and its arguments (decoded JSON)."""

    id: str
    name: str
    arguments: Any


@dataclass(frozen=True, slots=True)
class ModelReply:
    """What one model call returned.

    ``text`` is the reply's text (``""`` when the model only called tools); ``parsed`` is the decoded JSON
    when a schema was requested (checked against it); ``usage`` the tokens spent.
    """

    text: str
    usage: Usage = field(default_factory=Usage)
    model_id: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    parsed: Any = None
    finish_reason: str | None = None


@runtime_checkable
class ChatModel(Protocol):
    """An async callable from messages to a :class:`ModelReply` (docs/spec.md §5.13).

    ``schema`` (a JSON schema) asks for JSON output: the reply's ``parsed`` holds it, and a reply that is
    not valid for the schema raises ``ModelOutputError`` with the reply attached. ``tools`` are OpenAI-shaped
    function definitions the model may call. Failures raise ``ModelError``.
    """

    model_id: str

    async def __call__(
        self,
        messages: Sequence[ChatMessage],
        *,
        schema: Mapping[str, Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> ModelReply: ...


@dataclass(slots=True)
class ModelUsage:
    """Running totals of a feature's model calls (e.g. ``Memory.title_usage``): calls made, calls that
    failed, and the tokens the successful ones reported."""

    calls: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, usage: Usage) -> None:
        """Count one successful call that spent ``usage``."""
        self.calls += 1
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens

    def fail(self) -> None:
        """Count one failed call."""
        self.calls += 1
        self.failures += 1


def parse_structured(model_id: str, text: str, schema: Mapping[str, Any]) -> Any:
    """Decode ``text`` as JSON and check it against ``schema`` (docs/spec.md §5.13: ``type``, ``required``,
    ``properties``, ``items``, ``enum``, ``additionalProperties: false``).

    Raises:
        ModelOutputError: the text is not JSON or not valid for the schema; ``reply`` holds ``text``.
    """
    candidate = text.strip()
    if candidate.startswith("```"):
        # Models often fence JSON even when asked not to; the fence is not part of the value.
        candidate = candidate.strip("`").removeprefix("json").strip()
    try:
        value = json.loads(candidate)
    except json.JSONDecodeError as exc:
        raise ModelOutputError(
            f"Model {model_id} was asked for JSON but replied with text that is not JSON ({exc.msg}); "
            "the reply is in .reply",
            reply=text,
            details={"model_id": model_id},
        ) from None
    problem = schema_problem(value, schema, "$")
    if problem is not None:
        raise ModelOutputError(
            f"Model {model_id} replied with JSON that does not match the requested schema: {problem}; "
            "the reply is in .reply",
            reply=text,
            details={"model_id": model_id, "problem": problem},
        )
    return value


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "null": (type(None),),
}


def schema_problem(value: Any, schema: Mapping[str, Any], where: str) -> str | None:
    """The first way ``value`` breaks ``schema`` (the JSON-schema subset structured output uses), or None."""
    expected = schema.get("type")
    if expected is not None:
        names = [expected] if isinstance(expected, str) else list(expected)
        if not any(_is_type(value, name) for name in names):
            return f"{where} is {type(value).__name__}, expected {' or '.join(names)}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where} is {value!r}, not one of {schema['enum']!r}"
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for name in schema.get("required") or ():
            if name not in value:
                return f"{where} lacks the required property {name!r}"
        for name, item in value.items():
            if name in properties:
                problem = schema_problem(item, properties[name], f"{where}.{name}")
                if problem is not None:
                    return problem
            elif schema.get("additionalProperties") is False:
                return f"{where} has the property {name!r}, which the schema does not allow"
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(value):
            problem = schema_problem(item, schema["items"], f"{where}[{index}]")
            if problem is not None:
                return problem
    return None


def _is_type(value: Any, name: str) -> bool:
    if name in ("number", "integer") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(name, (object,)))
