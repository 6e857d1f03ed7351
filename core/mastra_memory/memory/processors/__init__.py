"""Memory processors for agent turns (docs/spec.md §5.12), one module per processor.

``Memory.get_input_processors()`` returns ``MemoryInputFilter``, ``WorkingMemory``, ``MessageHistory``,
``SemanticRecall`` and, under ``message_history``, ``MemoryTokenLimiter`` (in that order) for a request;
``get_output_processors()`` returns ``MessageHistory`` (persist) then
``SemanticRecall`` (index). ``ToolCallFilter`` and ``TokenLimiter`` are added by the caller.
"""

from __future__ import annotations

from .context import MemoryContext
from .history import MessageHistory
from .history_budget import MemoryTokenLimiter, TokenBoundary
from .input_filter import MemoryInputFilter
from .token_limiter import TokenLimiter
from .tool_call_filter import ToolCallFilter
from .working_memory import UpdateWorkingMemoryTool, WorkingMemory, working_memory_instructions

__all__ = [
    "MemoryContext",
    "MemoryInputFilter",
    "MemoryTokenLimiter",
    "MessageHistory",
    "TokenBoundary",
    "TokenLimiter",
    "ToolCallFilter",
    "UpdateWorkingMemoryTool",
    "WorkingMemory",
    "working_memory_instructions",
]
