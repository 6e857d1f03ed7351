"""The version of the mastra-memory distribution (a leaf module: anything may import it)."""

__version__ = "0.1.0"
