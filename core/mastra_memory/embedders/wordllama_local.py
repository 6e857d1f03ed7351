"""``local/wordllama``: the offline default embedder (WordLlama ``l2_supercat``, weights in the wheel).

WordLlama averages static token embeddings taken from a large language model: no network, no GPU, a
few milliseconds per batch. Vectors have 256 dimensions. The model is trained Matryoshka-style, so its
first 64 or 128 dimensions are a usable smaller embedding: ``dimensions=64`` or ``128`` truncates (then
re-normalises); the same model serves every size. Vectors are L2-normalised.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError, EmbeddingError
from .base import EmbedResult, cache_namespace
from .local_model import require_extra, shared_model

MODEL_ID = "local/wordllama"
FULL_DIMENSION = 256
SUPPORTED_DIMENSIONS = (64, 128, 256)
_CONFIG = "l2_supercat"


class WordLlamaEmbedder:
    """Embeds with the WordLlama model shipped in the ``wordllama`` package, loaded once per process.

    Options: ``dimensions`` (64, 128 or 256; default 256).

    Raises:
        ConfigError: at construction when the ``wordllama`` package is missing (naming the extra).
    """

    max_batch_size = 512

    def __init__(self, model: str = "wordllama", options: Mapping[str, Any] | None = None) -> None:
        if model not in ("", "wordllama"):
            raise ConfigError(
                f"Unknown local model 'local/{model}'; the built-in local models are 'local/wordllama' and "
                "'local/all-minilm-l6-v2'"
            )
        require_extra("wordllama", "wordllama", MODEL_ID)
        size = _dimension_option(options or {}, FULL_DIMENSION)
        self.model_id = MODEL_ID
        self.dimension: int | None = size
        self.cache_namespace = cache_namespace(
            MODEL_ID, {"dimensions": size} if size != FULL_DIMENSION else {}
        )
        self._model = shared_model(("wordllama", _CONFIG), _load)

    async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
        """Embed ``texts`` in a worker thread (the first call also loads the weights there).

        Raises:
            EmbeddingError: a text is empty (it has no tokens to average) or the weights cannot be loaded.
        """
        if not texts:
            return EmbedResult([], None)
        size = _dimension_option(options, self.dimension or FULL_DIMENSION)
        for position, text in enumerate(texts):
            if not text:
                raise EmbeddingError(
                    f"Embedder {MODEL_ID} cannot embed an empty text (input {position}); skip blank texts",
                    details={"model_id": MODEL_ID, "position": position},
                )
        vectors = await asyncio.to_thread(self._encode, list(texts), size)
        return EmbedResult(vectors.tolist(), None)

    def _encode(self, texts: list[str], size: int) -> npt.NDArray[np.float64]:
        model = self._model.get()
        pooled = np.asarray(model.embed(texts, norm=False, return_np=True), dtype=np.float64)[:, :size]
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.where(norms > 0, norms, 1.0)


def _dimension_option(options: Mapping[str, Any], default: int) -> int:
    value = options.get("dimensions", default)
    if value not in SUPPORTED_DIMENSIONS or isinstance(value, bool):
        raise ConfigError(
            f"{MODEL_ID} supports dimensions {', '.join(map(str, SUPPORTED_DIMENSIONS))}; got {value!r}"
        )
    return int(value)


def _load() -> Any:
    try:
        wordllama = _import_wordllama()
    except ImportError as exc:
        raise ConfigError(
            f"Embedder {MODEL_ID} could not import wordllama ({exc}); "
            'reinstall: pip install "mastra-memory[wordllama]"'
        ) from exc
    package_dir = Path(str(wordllama.__file__)).parent
    # WordLlama's lookup of its own bundled tokenizer points at "<package>/tokenizer/", but the file ships in
    # "<package>/tokenizers/" -- which is where it looks when cache_dir is the package directory. Downloads
    # are disabled so a broken install fails here instead of reaching for the network.
    try:
        return wordllama.WordLlama.load(
            config=_CONFIG, dim=FULL_DIMENSION, cache_dir=package_dir, disable_download=True
        )
    except (OSError, ValueError) as exc:
        raise EmbeddingError(
            f"Embedder {MODEL_ID} could not load the weights shipped with the wordllama package ({exc}); "
            'reinstall it: pip install --force-reinstall "mastra-memory[wordllama]"',
            details={"model_id": MODEL_ID},
        ) from exc


def _import_wordllama() -> ModuleType:
    # wordllama calls logging.basicConfig() on import, which would give the host application's root logger
    # a stderr handler at INFO. basicConfig does nothing when the root logger has a handler, so lend it one.
    root = logging.getLogger()
    guard = None if root.handlers else logging.NullHandler()
    if guard is not None:
        root.addHandler(guard)
    try:
        return importlib.import_module("wordllama")
    finally:
        if guard is not None:
            root.removeHandler(guard)
