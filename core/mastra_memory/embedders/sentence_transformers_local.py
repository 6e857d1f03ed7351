"""``sentence-transformers/<model>``: any Sentence Transformers model, run in-process.

Needs the extra ``mastra-memory[sentence-transformers]``. The first call may download the weights from the
Hugging Face Hub; concurrent first calls wait for a single load. Bare ``sentence-transformers`` means
``all-MiniLM-L6-v2`` (384 dimensions).
"""

from __future__ import annotations

from typing import Any

from .local_model import InProcessEmbedder

PROVIDER = "sentence-transformers"
EXTRA = "sentence-transformers"
DEFAULT_MODEL = "all-MiniLM-L6-v2"


class SentenceTransformersEmbedder(InProcessEmbedder):
    """Embeds with ``sentence_transformers.SentenceTransformer(model)`` in a worker thread.

    Options: ``device`` (e.g. ``"cpu"``, ``"cuda"``; default: the library's choice).

    Raises:
        ConfigError: at construction when ``sentence-transformers`` is not installed (naming the extra).
    """

    provider = PROVIDER
    extra = EXTRA
    module = "sentence_transformers"
    default_model = DEFAULT_MODEL
    option = "device"
    option_kind = "a string such as 'cpu'"

    def _load(self, model: str, value: str | None) -> Any:
        return self._library(model).SentenceTransformer(model, device=value)

    def _vectors(self, model: Any, texts: list[str], batch_size: int) -> Any:
        return model.encode(texts, batch_size=batch_size, convert_to_numpy=True)
