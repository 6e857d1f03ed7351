"""``fastembed/<model>``: Qdrant's FastEmbed (ONNX) models, run in-process.

Needs the extra ``mastra-memory[fastembed]``. The first call may download the weights; concurrent first
calls wait for a single load. Bare ``fastembed`` means ``BAAI/bge-small-en-v1.5`` (384 dimensions).
"""

from __future__ import annotations

from typing import Any

from .local_model import InProcessEmbedder

PROVIDER = "fastembed"
EXTRA = "fastembed"
DEFAULT_MODEL = "BAAI/bge-small-en-v1.5"


class FastEmbedEmbedder(InProcessEmbedder):
    """Embeds with ``fastembed.TextEmbedding(model_name=model)`` in a worker thread.

    Options: ``cache_dir`` (where FastEmbed keeps downloaded models).

    Raises:
        ConfigError: at construction when ``fastembed`` is not installed (naming the extra).
    """

    provider = PROVIDER
    extra = EXTRA
    module = "fastembed"
    default_model = DEFAULT_MODEL
    option = "cache_dir"
    option_kind = "a path string"

    def _load(self, model: str, value: str | None) -> Any:
        return self._library(model).TextEmbedding(model_name=model, cache_dir=value)

    def _vectors(self, model: Any, texts: list[str], batch_size: int) -> Any:
        return list(model.embed(texts, batch_size=batch_size))
