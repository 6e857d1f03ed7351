"""Mastra's processor entry points (``processInput``, ``processOutputResult``, docs/spec.md §5.12), written
once: a processor implements the step it does on an :class:`InputCall` or :class:`OutputCall`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...messages import MastraDBMessage, MessageInput
from ..message_list import MessageList


@dataclass(frozen=True)
class InputCall:
    """The arguments of one ``process_input`` call (Mastra's ``tracing_context`` is not read)."""

    messages: Sequence[MastraDBMessage | MessageInput]
    message_list: MessageList
    abort: Any
    request_context: Any


@dataclass(frozen=True)
class OutputCall:
    """The arguments of one ``process_output_result`` call; ``message_list`` is None when the host passes
    only the response (Mastra's ``tracing_context`` is not read)."""

    messages: Sequence[MastraDBMessage | MessageInput]
    message_list: MessageList | None
    abort: Any
    request_context: Any


class InputProcessor(ABC):
    """A processor that runs before the model call."""

    async def process_input(
        self,
        messages: Sequence[MastraDBMessage | MessageInput],
        message_list: MessageList,
        abort: Any = None,
        tracing_context: Any = None,
        request_context: Any = None,
    ) -> MessageList:
        """Mastra's ``processInput``: this processor's input step (the class docstring says what it does);
        returns the list."""
        return await self._process_input(InputCall(messages, message_list, abort, request_context))

    @abstractmethod
    async def _process_input(self, call: InputCall) -> MessageList: ...


class OutputProcessor(ABC):
    """A processor that runs on the model's response."""

    async def process_output_result(
        self,
        messages: Sequence[MastraDBMessage | MessageInput],
        message_list: MessageList | None = None,
        abort: Any = None,
        tracing_context: Any = None,
        request_context: Any = None,
    ) -> MessageList | list[MastraDBMessage]:
        """Mastra's ``processOutputResult``: this processor's output step (the class docstring says what it
        does); returns ``message_list``, or the response messages when there is no list."""
        return await self._process_output(OutputCall(messages, message_list, abort, request_context))

    @abstractmethod
    async def _process_output(self, call: OutputCall) -> MessageList | list[MastraDBMessage]: ...


class MemoryTool(ABC):
    """A tool memory gives the model (``updateWorkingMemory``, observational memory's ``recall``): its name,
    description and JSON-schema parameters, and `execute` for one call."""

    name: str
    description: str
    parameters: dict[str, Any]

    @property
    def definition(self) -> dict[str, Any]:
        """``{name, description, parameters}``."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    def openai_tool(self) -> dict[str, Any]:
        """The definition as an OpenAI chat-completions ``tools`` entry."""
        return {"type": "function", "function": self.definition}

    @abstractmethod
    async def execute(self, args: Mapping[str, Any] | str, request_context: Any = None) -> dict[str, Any]:
        """Run one call with the model's arguments (an object or its JSON text) for the request's
        thread/resource."""
