"""``Memory`` and the ``SemanticRecall`` processor: message history plus semantic recall (docs/spec.md §5,
§6).

``from mastra_memory.memory import Memory`` is the entry point. The package, grouped by job:

* :mod:`.facade` -- ``Memory``; :mod:`.defaults` -- its storage and vector store by name, by URL or by
  default; :mod:`.config` -- ``MemoryConfig`` and the merge rules (§5.1, §5.2); :mod:`.arguments` -- the
  id checks every method makes before any I/O; :mod:`.results` -- what ``Memory`` returns;
* :mod:`.recall` -- reading: the one recall algorithm used by ``Memory.recall`` and the processor
  (``algorithm``, §5.3, §6.2), the semantic search it runs (``search``) and the cross-thread system
  message (``formatting``, §6.3);
* :mod:`.index` -- writing vectors: the single embedding write path and vector cleanup (``indexer``,
  §5.4-§5.6), what a store can hold (``indexability``), re-indexing (``reindex``), chunking (``chunking``);
* :mod:`.processors` -- ``SemanticRecall`` (§6), ``WorkingMemory``, ``MessageHistory``, ``ToolCallFilter``,
  ``TokenLimiter`` (§5.12), the request's memory context they read (``context``) and the chain ``Memory``
  builds of them (``chain``);
* :mod:`.stored_messages` -- what ``save_messages`` stores (§5.4 step 1); :mod:`.working_memory_store` --
  working memory's text in storage (§5.8); :mod:`.threads` -- clone, copy and move (§5.11); :mod:`.clones`
  -- clone lineage; :mod:`.llm_context` -- ``get_context``; :mod:`.retention` -- retention and ``prune()``;
  :mod:`.incomplete_tool_calls` -- ``filterIncompleteToolCalls`` on stored messages;
  :mod:`.background` -- background embedding and ``settled()``; :mod:`.titles` -- thread titles (§5.9);
  :mod:`.tokens` -- token counting; :mod:`.message_list` -- ``MessageList``; :mod:`.prompt_recall` --
  recall for a prompt that already holds part of the conversation (the agent-framework integrations);
* :mod:`.observational` -- observational memory (§5.14): options, the Observer and Reflector, the
  ``observational-memory`` processor, the observation index and the ``recall`` tool.
"""

from __future__ import annotations

from .clones import CloneMetadata
from .config import (
    DEFAULT_WORKING_MEMORY_TEMPLATE,
    FilterConfigError,
    MemoryConfig,
    MessageHistoryConfig,
    MessageRange,
    SemanticRecallConfig,
    ThreadsConfig,
    TitleConfig,
    UnsupportedOptionError,
    WorkingMemoryConfig,
    merge_config,
)
from .defaults import DEFAULT_EMBEDDER, DEFAULT_URL
from .facade import Memory
from .incomplete_tool_calls import filter_incomplete_tool_calls
from .index.chunking import DEFAULT_CHUNK_SIZE, chunk_text
from .index.indexer import MessageIndexer, default_index_name, vector_ids
from .llm_context import LLMContext
from .message_list import MessageList
from .observational.engine import CycleResult, OMUsage
from .observational.options import ObservationalMemoryOptions, UnsupportedOMOptionError
from .observational.processor import ObservationalMemory
from .observational.retrieval import ObservationSearchHit, RecallTool
from .processors import (
    MessageHistory,
    TokenLimiter,
    ToolCallFilter,
    UpdateWorkingMemoryTool,
    WorkingMemory,
)
from .processors.context import MEMORY_CONTEXT_KEY, request_memory_config
from .processors.semantic_recall import SemanticRecall
from .prompt_recall import recall_new_context
from .recall.formatting import format_cross_thread_messages
from .recall.search import MessageSearchHit, MessageSearchResult
from .results import RecallHit, RecallResult, ReindexResult, SaveResult, SkippedMessage, Usage
from .retention import PruneResult
from .stored_messages import WORKING_MEMORY_TOOL, strip_working_memory
from .threads import CloneThreadResult, CopyThreadResult
from .tokens import (
    ApproximateTokenCounter,
    TiktokenCounter,
    TokenCounter,
    default_token_counter,
    message_tokens,
)

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "DEFAULT_EMBEDDER",
    "DEFAULT_URL",
    "DEFAULT_WORKING_MEMORY_TEMPLATE",
    "MEMORY_CONTEXT_KEY",
    "WORKING_MEMORY_TOOL",
    "ApproximateTokenCounter",
    "CloneMetadata",
    "CloneThreadResult",
    "CopyThreadResult",
    "CycleResult",
    "FilterConfigError",
    "LLMContext",
    "Memory",
    "MemoryConfig",
    "MessageHistory",
    "MessageHistoryConfig",
    "MessageIndexer",
    "MessageList",
    "MessageRange",
    "MessageSearchHit",
    "MessageSearchResult",
    "OMUsage",
    "ObservationSearchHit",
    "ObservationalMemory",
    "ObservationalMemoryOptions",
    "PruneResult",
    "RecallHit",
    "RecallResult",
    "RecallTool",
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
    "UnsupportedOMOptionError",
    "UnsupportedOptionError",
    "UpdateWorkingMemoryTool",
    "Usage",
    "WorkingMemory",
    "WorkingMemoryConfig",
    "chunk_text",
    "default_index_name",
    "default_token_counter",
    "filter_incomplete_tool_calls",
    "format_cross_thread_messages",
    "merge_config",
    "message_tokens",
    "recall_new_context",
    "request_memory_config",
    "strip_working_memory",
    "vector_ids",
]
