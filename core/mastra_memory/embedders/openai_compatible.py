"""The OpenAI embeddings wire format, spoken by OpenAI, OpenRouter, Ollama, vLLM and LM Studio.

Request: ``POST {base_url}/embeddings`` with ``{"model", "input": [...], "encoding_format": "float",
"dimensions"?}`` and ``Authorization: Bearer <key>`` when a key is set. Response: ``{"data": [{"embedding",
"index"}], "usage": {"prompt_tokens", "total_tokens"}}``; vectors are put back in order by ``index``.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import EmbeddingError
from .http_embedder import HttpEmbedder, ProviderRequest

OLLAMA_BASE_URL = "http://localhost:11434/v1"


class OpenAICompatibleEmbedder(HttpEmbedder):
    """Any server implementing ``POST /embeddings`` the OpenAI way; ``base_url`` is required, a key is not.

    This is what ``<provider>/<model>`` resolves to when the provider is not registered but
    ``embedder_options={"base_url": ...}`` is given (vLLM, LM Studio, a gateway, ...).
    """

    provider = "openai-compatible"
    api_key_required = False
    batch_limit = 512

    def _auth_headers(self, api_key: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}

    async def _embed_batch(
        self, request: ProviderRequest, texts: list[str], dimensions: int | None, options: Mapping[str, Any]
    ) -> tuple[list[list[float]], int | None]:
        body: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if dimensions is not None:
            body["dimensions"] = dimensions
        payload = await request.post("/embeddings", body)
        return parse_openai_response(self.model_id, payload, len(texts))


class OllamaEmbedder(OpenAICompatibleEmbedder):
    """``ollama/<model>``: a local Ollama server's OpenAI-compatible endpoint (default port 11434)."""

    provider = "ollama"
    default_base_url = OLLAMA_BASE_URL


def parse_openai_response(model_id: str, payload: Any, count: int) -> tuple[list[list[float]], int | None]:
    """Vectors in input order and ``usage.prompt_tokens`` from an OpenAI-format response.

    Raises:
        EmbeddingError: the response lacks ``data``, has the wrong number of items, or indexes that are
            not exactly ``0..count-1``.
    """
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise _malformed(model_id, "it has no 'data' list")
    if len(data) != count:
        raise _malformed(model_id, f"it holds {len(data)} embeddings for {count} inputs")
    ordered: list[list[float] | None] = [None] * count
    for position, item in enumerate(data):
        if not isinstance(item, dict) or "embedding" not in item:
            raise _malformed(model_id, f"item {position} has no 'embedding'")
        index = item.get("index", position)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise _malformed(model_id, f"item {position} has index {index!r}, outside 0..{count - 1}")
        if ordered[index] is not None:
            raise _malformed(model_id, f"index {index} appears twice")
        ordered[index] = _vector(model_id, item["embedding"], index)
    usage = payload.get("usage")
    tokens: object = None
    if isinstance(usage, dict):
        tokens = usage.get("prompt_tokens", usage.get("total_tokens"))
    reported = tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None
    return [vector for vector in ordered if vector is not None], reported


def _vector(model_id: str, value: Any, index: int) -> list[float]:
    if isinstance(value, str):
        # Some servers answer in base64 (little-endian float32) whatever encoding_format asked for.
        try:
            decoded: list[float] = np.frombuffer(base64.b64decode(value, validate=True), dtype="<f4").tolist()
            return decoded
        except ValueError:
            raise _malformed(model_id, f"embedding {index} is a string but not base64 float32") from None
    if not isinstance(value, list):
        raise _malformed(model_id, f"embedding {index} is {type(value).__name__}, not a list of numbers")
    return value


def _malformed(model_id: str, problem: str) -> EmbeddingError:
    return EmbeddingError(
        f"Embedder {model_id} received a malformed embeddings response: {problem}. "
        "Check that base_url points at an OpenAI-compatible /embeddings API.",
        details={"model_id": model_id},
    )
