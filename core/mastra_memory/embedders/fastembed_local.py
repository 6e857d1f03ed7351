"""``fastembed/<model>``: Qdrant's FastEmbed (ONNX) models, run in-process.

Needs the extra ``mastra-memory[fastembed]``. The first call may download the weights; concurrent first
calls wait for a single load. Bare ``fastembed`` means ``BAAI/bge-small-en-v1.5`` (384 dimensions).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import ConfigError
from .base import EmbedResult
from .local_model import require_extra, shared_model

PROVIDER = "fastembed"
EXTRA = "fastembed"
DEFAULT_MODEL = "BAAI/bge-small-en-v1.5"


class FastEmbedEmbedder:
    """Embeds with ``fastembed.TextEmbedding(model_name=model)`` in a worker thread.

    Options: ``cache_dir`` (where FastEmbed keeps downloaded models).

    Raises:
        ConfigError: at construction when ``fastembed`` is not installed (naming the extra).
    """

    max_batch_size = 256

    def __init__(self, model: str = "", options: Mapping[str, Any] | None = None) -> None:
        self.model = model or DEFAULT_MODEL
        self.model_id = f"{PROVIDER}/{self.model}"
        require_extra("fastembed", EXTRA, self.model_id)
        cache_dir = (options or {}).get("cache_dir")
        if cache_dir is not None and not isinstance(cache_dir, str):
            raise ConfigError(f"cache_dir must be a path string, got {cache_dir!r}")
        self.dimension: int | None = None
        self._model = shared_model((PROVIDER, self.model, cache_dir), lambda: _load(self.model, cache_dir))

    async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
        """Embed ``texts`` in a worker thread (the first call also loads the model there)."""
        if not texts:
            return EmbedResult([], None)
        vectors = await asyncio.to_thread(self._encode, list(texts))
        self.dimension = int(vectors.shape[1])
        return EmbedResult(vectors.tolist(), None)

    def _encode(self, texts: list[str]) -> Any:
        model = self._model.get()
        return np.asarray(list(model.embed(texts, batch_size=min(len(texts), 64))), dtype=np.float64)


def _load(model: str, cache_dir: str | None) -> Any:
    try:
        from fastembed import TextEmbedding
    except ImportError as exc:
        raise ConfigError(
            f"{PROVIDER}/{model} could not import fastembed ({exc}); "
            f'reinstall: pip install "mastra-memory[{EXTRA}]"'
        ) from exc
    return TextEmbedding(model_name=model, cache_dir=cache_dir)
