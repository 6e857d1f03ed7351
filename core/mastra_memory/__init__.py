"""mastra-memory: Mastra-style agent memory (history + semantic recall) over any vector database.

Importing the package is cheap: it pulls in no adapter and no optional dependency.
"""

from __future__ import annotations

__version__ = "0.1.0"
