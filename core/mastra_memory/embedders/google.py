"""``google/<model>``: the Gemini API's ``batchEmbedContents`` (``GOOGLE_API_KEY``).

Request: ``POST {base_url}/models/{model}:batchEmbedContents`` with header ``x-goog-api-key`` and
``{"requests": [{"model": "models/{model}", "content": {"parts": [{"text": ...}]},
"outputDimensionality"?, "taskType"?}]}``. Response: ``{"embeddings": [{"values": [...]}]}`` in request
order. At most 100 requests per batch. Token usage is not reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ..errors import ConfigError, EmbeddingError
from .http_embedder import HttpEmbedder, ProviderRequest


class GoogleEmbedder(HttpEmbedder):
    """Gemini embeddings, e.g. ``google/gemini-embedding-001`` (3072 dimensions; 768 or 1536 via the
    ``dimensions`` option). The key comes from ``GOOGLE_API_KEY``, else ``GOOGLE_GENERATIVE_AI_API_KEY``.

    Extra option: ``task_type`` (e.g. ``"RETRIEVAL_DOCUMENT"``, ``"SEMANTIC_SIMILARITY"``).
    """

    provider = "google"
    default_base_url = "https://generativelanguage.googleapis.com/v1beta"
    api_key_env = ("GOOGLE_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY")
    api_key_required = True
    batch_limit = 100
    native_dimensions: ClassVar[Mapping[str, int]] = {"gemini-embedding-001": 3072, "text-embedding-004": 768}

    def __init__(self, model: str, options: Mapping[str, Any] | None = None, *, provider: str | None = None):
        # Google names models "models/<name>"; accept either spelling.
        super().__init__(model.removeprefix("models/"), options, provider=provider)

    def _auth_headers(self, api_key: str | None) -> dict[str, str]:
        return {"x-goog-api-key": api_key} if api_key else {}

    async def _embed_batch(
        self, request: ProviderRequest, texts: list[str], dimensions: int | None, options: Mapping[str, Any]
    ) -> tuple[list[list[float]], int | None]:
        task_type = options.get("task_type")
        if task_type is not None and not isinstance(task_type, str):
            raise ConfigError(f"task_type must be a string such as 'RETRIEVAL_DOCUMENT', got {task_type!r}")
        requests = []
        for text in texts:
            item: dict[str, Any] = {"model": f"models/{self.model}", "content": {"parts": [{"text": text}]}}
            if dimensions is not None:
                item["outputDimensionality"] = dimensions
            if task_type:
                item["taskType"] = task_type
            requests.append(item)
        payload = await request.post(f"/models/{self.model}:batchEmbedContents", {"requests": requests})
        return self._parse(payload, len(texts)), None

    def _parse(self, payload: Any, count: int) -> list[list[float]]:
        embeddings = payload.get("embeddings") if isinstance(payload, dict) else None
        if not isinstance(embeddings, list):
            raise self._malformed("it has no 'embeddings' list")
        if len(embeddings) != count:
            raise self._malformed(f"it holds {len(embeddings)} embeddings for {count} inputs")
        vectors = []
        for position, item in enumerate(embeddings):
            values = item.get("values") if isinstance(item, dict) else None
            if not isinstance(values, list):
                raise self._malformed(f"embedding {position} has no 'values' list")
            vectors.append(values)
        return vectors

    def _malformed(self, problem: str) -> EmbeddingError:
        return EmbeddingError(
            f"Embedder {self.model_id} received a malformed batchEmbedContents response: {problem}. "
            "Check that base_url points at the Gemini API (.../v1beta).",
            details={"model_id": self.model_id},
        )
