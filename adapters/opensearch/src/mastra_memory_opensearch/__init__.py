"""mastra-memory-opensearch: the OpenSearch k-NN vector store adapter of mastra-memory.

Build a store with ``mastra_memory.create_vector("opensearch", url="http://localhost:9200")`` or
:class:`OpenSearchVector` directly; ``mastra_memory.sync.wrap(store)`` gives the blocking facade.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mastra_memory.plugins.store_plugin import exported_on_use

from .capabilities import OPENSEARCH_CAPABILITIES
from .settings import OpenSearchSettings

if TYPE_CHECKING:
    from .store import OpenSearchVector

__version__ = "0.1.0"
__all__ = ["OPENSEARCH_CAPABILITIES", "OpenSearchSettings", "OpenSearchVector", "__version__"]

# Imported on use: the store pulls in opensearch-py.
__getattr__ = exported_on_use(__name__, {"OpenSearchVector": ".store"})
