"""``sentence-transformers/<model>``: any Sentence Transformers model, run in-process.

Needs the extra ``mastra-memory[sentence-transformers]``. The first call may download the weights from the
Hugging Face Hub; concurrent first calls wait for a single load. Bare ``sentence-transformers`` means
``all-MiniLM-L6-v2`` (384 dimensions).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import ConfigError
from .base import EmbedResult
from .local_model import require_extra, shared_model

PROVIDER = "sentence-transformers"
EXTRA = "sentence-transformers"
DEFAULT_MODEL = "all-MiniLM-L6-v2"


class SentenceTransformersEmbedder:
    """Embeds with ``sentence_transformers.SentenceTransformer(model)`` in a worker thread.

    Options: ``device`` (e.g. ``"cpu"``, ``"cuda"``; default: the library's choice).

    Raises:
        ConfigError: at construction when ``sentence-transformers`` is not installed (naming the extra).
    """

    max_batch_size = 256

    def __init__(self, model: str = "", options: Mapping[str, Any] | None = None) -> None:
        self.model = model or DEFAULT_MODEL
        self.model_id = f"{PROVIDER}/{self.model}"
        require_extra("sentence_transformers", EXTRA, self.model_id)
        device = (options or {}).get("device")
        if device is not None and not isinstance(device, str):
            raise ConfigError(f"device must be a string such as 'cpu', got {device!r}")
        self.dimension: int | None = None
        self._model = shared_model((PROVIDER, self.model, device), lambda: _load(self.model, device))

    async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
        """Embed ``texts`` in a worker thread (the first call also loads the model there)."""
        if not texts:
            return EmbedResult([], None)
        vectors = await asyncio.to_thread(self._encode, list(texts))
        self.dimension = int(vectors.shape[1])
        return EmbedResult(vectors.tolist(), None)

    def _encode(self, texts: list[str]) -> Any:
        model = self._model.get()
        encoded = model.encode(texts, batch_size=min(len(texts), 64), convert_to_numpy=True)
        return np.asarray(encoded, dtype=np.float64)


def _load(model: str, device: str | None) -> Any:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ConfigError(
            f"{PROVIDER}/{model} could not import sentence-transformers ({exc}); "
            f'reinstall: pip install "mastra-memory[{EXTRA}]"'
        ) from exc
    return SentenceTransformer(model, device=device)
