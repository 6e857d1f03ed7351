"""Embedders: the `Embedder` protocol, model-router resolution, the shared cache, built-in providers.

Typical use: ``embedder = resolve_embedder("openai/text-embedding-3-small")``, then
``result = await embed_with_cache(embedder, texts)`` for vectors in input order.

Provider modules (HTTP clients, local models) are imported only when their provider is resolved.
"""

from __future__ import annotations

from .base import Embedder, EmbedderFactory, EmbedderSpec, EmbedResult
from .cache import CacheStats, EmbeddingCache, embed_with_cache, get_embedding_cache
from .router import parse_model_string, resolve_embedder

__all__ = [
    "CacheStats",
    "EmbedResult",
    "Embedder",
    "EmbedderFactory",
    "EmbedderSpec",
    "EmbeddingCache",
    "embed_with_cache",
    "get_embedding_cache",
    "parse_model_string",
    "resolve_embedder",
]
