"""mastra-memory: Mastra-style agent memory (history + semantic recall) over any vector database.

The public API is importable from the package top::

    from mastra_memory import Memory, SemanticRecall, create_vector, create_storage, ValidationError

Importing the package is cheap: the errors are defined here, everything else is imported on first use
(``Memory`` brings pydantic and numpy, ``create_vector`` the plugin machinery), and no adapter or optional
dependency is ever imported by the package itself.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    CapabilityError,
    ConfigError,
    EmbeddingError,
    FilterError,
    IndexDimensionMismatchError,
    IndexingError,
    IndexNotFoundError,
    MastraMemoryError,
    PluginError,
    ResourceScopeError,
    SemanticRecallOffWarning,
    SettleTimeoutError,
    StorageError,
    ThreadNotFoundError,
    ThreadOwnershipError,
    TokenLimitError,
    UnsupportedFilterError,
    ValidationError,
    VectorStoreError,
)

if TYPE_CHECKING:
    from .filters import evaluate, parse
    from .memory import (
        Memory,
        MemoryConfig,
        MessageHistory,
        RecallResult,
        SemanticRecall,
        TokenLimiter,
        ToolCallFilter,
        WorkingMemory,
    )
    from .plugins import create_storage, create_vector
    from .storage import MemoryStorage
    from .sync import wrap
    from .vector import MastraVector, QueryResult

from .version import __version__

# Name -> the module that defines it, imported when the name is first looked up (PEP 562).
_LAZY = {
    "Memory": "memory",
    "MemoryConfig": "memory",
    "RecallResult": "memory",
    "SemanticRecall": "memory",
    "MessageHistory": "memory",
    "WorkingMemory": "memory",
    "ToolCallFilter": "memory",
    "TokenLimiter": "memory",
    "create_storage": "plugins",
    "create_vector": "plugins",
    "MemoryStorage": "storage",
    "MastraVector": "vector",
    "QueryResult": "vector",
    "parse": "filters",
    "evaluate": "filters",
    "wrap": "sync",
}

__all__ = [
    "CapabilityError",
    "ConfigError",
    "EmbeddingError",
    "FilterError",
    "IndexDimensionMismatchError",
    "IndexNotFoundError",
    "IndexingError",
    "MastraMemoryError",
    "MastraVector",
    "Memory",
    "MemoryConfig",
    "MemoryStorage",
    "MessageHistory",
    "PluginError",
    "QueryResult",
    "RecallResult",
    "ResourceScopeError",
    "SemanticRecall",
    "SemanticRecallOffWarning",
    "SettleTimeoutError",
    "StorageError",
    "ThreadNotFoundError",
    "ThreadOwnershipError",
    "TokenLimitError",
    "TokenLimiter",
    "ToolCallFilter",
    "UnsupportedFilterError",
    "ValidationError",
    "VectorStoreError",
    "WorkingMemory",
    "__version__",
    "create_storage",
    "create_vector",
    "evaluate",
    "parse",
    "wrap",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mastra_memory' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
