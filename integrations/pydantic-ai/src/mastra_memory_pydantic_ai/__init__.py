"""mastra-memory-pydantic-ai: mastra-memory for PydanticAI.

* :class:`MemoryRecall` -- a history processor (``Agent(capabilities=[ProcessHistory(...)])``) that
  recalls earlier messages of the user for the latest prompt and shows them to the model ahead of the
  history.
* :func:`save_run_messages` -- store a run's ``result.new_messages()`` in a thread (embedded for recall);
  :func:`load_message_history` -- read them back as ``message_history``.
"""

from __future__ import annotations

from .history import MESSAGE_PART_TYPE, is_recall_part, load_message_history, save_run_messages
from .recall import MemoryRecall

__version__ = "0.1.0"
__all__ = [
    "MESSAGE_PART_TYPE",
    "MemoryRecall",
    "__version__",
    "is_recall_part",
    "load_message_history",
    "save_run_messages",
]
