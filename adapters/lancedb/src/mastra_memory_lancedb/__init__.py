"""LanceDB vector store adapter for mastra-memory: embedded directories or any LanceDB URI.

``create_vector("lancedb", url="./lancedb")`` (or ``Memory(vector="lancedb:///data/lance")``) builds a
:class:`~mastra_memory_lancedb.store.LanceDBVector` through the ``mastra_memory`` entry point.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
