"""``Memory`` and the ``SemanticRecall`` processor: message history plus semantic recall (docs/spec.md §5,
§6).

``from mastra_memory.memory import Memory`` is the entry point. The package, one module per job:

* :mod:`.facade` -- ``Memory``, the facade; :mod:`.defaults` -- its storage and vector store by name,
  by URL or by default; :mod:`.config` -- ``MemoryConfig`` and the merge rules (§5.1, §5.2);
* :mod:`.recall` -- the one recall algorithm, used by ``Memory.recall`` and the processor (§5.3, §6.2);
  :mod:`.search` -- the semantic search it runs; :mod:`.indexer` -- the single embedding write path and
  vector cleanup (§5.4-§5.6); :mod:`.chunking` -- how text is cut into embedding chunks;
* :mod:`.processor` -- ``SemanticRecall`` (§6); :mod:`.processors` -- ``WorkingMemory``,
  ``MessageHistory``, ``ToolCallFilter``, ``TokenLimiter`` (§5.12); :mod:`.tokens` -- token counting;
  :mod:`.message_list` -- ``MessageList``; :mod:`.prompt_recall` -- recall for a prompt that already
  holds part of the conversation (the agent-framework integrations);
  :mod:`.formatting` -- the cross-thread system message (§6.3);
* :mod:`.titles` -- thread titles (§5.9); :mod:`.working_memory` -- working memory (§5.8);
  :mod:`.results` -- what ``Memory`` returns; :mod:`.threads` -- clone, move and background work
  (§5.11; ``search_messages`` lives in :mod:`.search`).
"""

from __future__ import annotations

from .chunking import DEFAULT_CHUNK_SIZE, chunk_text
from .config import (
    DEFAULT_WORKING_MEMORY_TEMPLATE,
    FilterConfigError,
    MemoryConfig,
    MessageRange,
    SemanticRecallConfig,
    ThreadsConfig,
    TitleConfig,
    WorkingMemoryConfig,
    merge_config,
)
from .defaults import DEFAULT_EMBEDDER, DEFAULT_URL
from .facade import Memory
from .formatting import format_cross_thread_messages
from .indexer import MessageIndexer, default_index_name, vector_ids
from .message_list import MessageList
from .processor import MEMORY_CONTEXT_KEY, SemanticRecall, request_memory_config
from .processors import (
    MessageHistory,
    TokenLimiter,
    ToolCallFilter,
    UpdateWorkingMemoryTool,
    WorkingMemory,
)
from .prompt_recall import recall_new_context
from .results import RecallHit, RecallResult, ReindexResult, SaveResult, SkippedMessage, Usage
from .search import MessageSearchHit, MessageSearchResult
from .threads import CloneThreadResult
from .tokens import (
    ApproximateTokenCounter,
    TiktokenCounter,
    TokenCounter,
    default_token_counter,
    message_tokens,
)
from .working_memory import WORKING_MEMORY_TOOL, strip_working_memory

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "DEFAULT_EMBEDDER",
    "DEFAULT_URL",
    "DEFAULT_WORKING_MEMORY_TEMPLATE",
    "MEMORY_CONTEXT_KEY",
    "WORKING_MEMORY_TOOL",
    "ApproximateTokenCounter",
    "CloneThreadResult",
    "FilterConfigError",
    "Memory",
    "MemoryConfig",
    "MessageHistory",
    "MessageIndexer",
    "MessageList",
    "MessageRange",
    "MessageSearchHit",
    "MessageSearchResult",
    "RecallHit",
    "RecallResult",
    "ReindexResult",
    "SaveResult",
    "SemanticRecall",
    "SemanticRecallConfig",
    "SkippedMessage",
    "ThreadsConfig",
    "TiktokenCounter",
    "TitleConfig",
    "TokenCounter",
    "TokenLimiter",
    "ToolCallFilter",
    "UpdateWorkingMemoryTool",
    "Usage",
    "WorkingMemory",
    "WorkingMemoryConfig",
    "chunk_text",
    "default_index_name",
    "default_token_counter",
    "format_cross_thread_messages",
    "merge_config",
    "message_tokens",
    "recall_new_context",
    "request_memory_config",
    "strip_working_memory",
    "vector_ids",
]
