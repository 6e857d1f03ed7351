"""mastra-memory-openai-agents: mastra-memory for the OpenAI Agents SDK.

* :class:`MemorySession` -- the SDK's ``Session`` protocol over a mastra-memory thread: every item is a
  stored message (the item verbatim, plus its text or tool invocation for Mastra and for recall).
* :class:`RecallInputFilter` -- a ``RunConfig.call_model_input_filter`` that recalls earlier messages of the
  user for the latest question and shows them to the model, without storing them.
"""

from __future__ import annotations

from .recall import RecallInputFilter
from .session import ITEM_PART_TYPE, MemorySession, item_text, message_items

__version__ = "0.1.0"
__all__ = [
    "ITEM_PART_TYPE",
    "MemorySession",
    "RecallInputFilter",
    "__version__",
    "item_text",
    "message_items",
]
