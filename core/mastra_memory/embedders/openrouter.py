"""``openrouter/<vendor>/<model>``: OpenRouter's OpenAI-shaped embeddings API (``OPENROUTER_API_KEY``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from .openai_compatible import OpenAICompatibleEmbedder


class OpenRouterEmbedder(OpenAICompatibleEmbedder):
    """Embedding models of many vendors through OpenRouter, e.g. ``openrouter/openai/text-embedding-3-small``.

    OpenRouter forwards to the vendor, so batches follow OpenAI's limits (2,048 inputs, 300,000 tokens).
    Optional attribution headers (``HTTP-Referer``, ``X-Title``) go in the ``headers`` option.
    """

    provider = "openrouter"
    default_base_url = "https://openrouter.ai/api/v1"
    api_key_env = ("OPENROUTER_API_KEY",)
    api_key_required = True
    batch_limit = 2_048
    max_request_bytes = 300_000
    native_dimensions: ClassVar[Mapping[str, int]] = {
        "openai/text-embedding-3-small": 1536,
        "openai/text-embedding-3-large": 3072,
        "openai/text-embedding-ada-002": 1536,
    }
    fixed_dimension_models = frozenset({"openai/text-embedding-ada-002"})
