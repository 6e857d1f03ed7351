"""Chat models for the memory features that need one (docs/spec.md §5.13).

:mod:`.protocol` -- the ``ChatModel`` protocol, replies, usage, structured-output checks;
:mod:`.openai` -- the OpenAI chat-completions client and the model-router strings;
:mod:`.scripted` -- ``ScriptedModel``, a replaying model for tests.
"""

from .openai import OpenAIChatModel, resolve_model
from .protocol import ChatMessage, ChatModel, ModelReply, ModelUsage, ToolCall, Usage
from .scripted import ModelRequest, ScriptedModel

__all__ = [
    "ChatMessage",
    "ChatModel",
    "ModelReply",
    "ModelRequest",
    "ModelUsage",
    "OpenAIChatModel",
    "ScriptedModel",
    "ToolCall",
    "Usage",
    "resolve_model",
]
