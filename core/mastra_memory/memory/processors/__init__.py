"""Memory processors for agent turns (docs/spec.md §5.12), one module per processor.

``Memory.get_input_processors()`` returns ``WorkingMemory``, ``MessageHistory`` and ``SemanticRecall`` (in
that order) for a request; ``get_output_processors()`` returns ``MessageHistory`` (persist) then
``SemanticRecall`` (index). ``ToolCallFilter`` and ``TokenLimiter`` are added by the caller.
"""

from __future__ import annotations

from .context import MemoryContext
from .history import MessageHistory
from .token_limiter import TokenLimiter
from .tool_call_filter import ToolCallFilter
from .working_memory import UpdateWorkingMemoryTool, WorkingMemory, working_memory_instructions

__all__ = [
    "MemoryContext",
    "MessageHistory",
    "TokenLimiter",
    "ToolCallFilter",
    "UpdateWorkingMemoryTool",
    "WorkingMemory",
    "working_memory_instructions",
]
