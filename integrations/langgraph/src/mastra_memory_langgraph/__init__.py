"""mastra-memory-langgraph: mastra-memory for LangGraph.

* :class:`MastraStore` -- a LangGraph ``BaseStore`` (``graph.compile(store=...)``,
  ``create_react_agent(..., store=...)``): items on any mastra-memory storage (the SQLite file by default),
  the semantic ``index`` on any vector store, search filters in mastra-memory's filter language, TTLs.
"""

from __future__ import annotations

from .store import MastraStore

__version__ = "0.1.0"
__all__ = ["MastraStore", "__version__"]
