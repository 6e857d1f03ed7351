"""``openrouter/<vendor>/<model>``: OpenRouter's OpenAI-shaped embeddings API (``OPENROUTER_API_KEY``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from .openai import OpenAIModels

#: OpenRouter names a vendor's model ``<vendor>/<model>``.
_VENDOR = "openai/"


class OpenRouterEmbedder(OpenAIModels):
    """Embedding models of many vendors through OpenRouter, e.g. ``openrouter/openai/text-embedding-3-small``.

    OpenRouter forwards to the vendor, so batches follow OpenAI's limits (2,048 inputs, 300,000 tokens).
    Optional attribution headers (``HTTP-Referer``, ``X-Title``) go in the ``headers`` option.
    """

    provider = "openrouter"
    default_base_url = "https://openrouter.ai/api/v1"
    api_key_env = ("OPENROUTER_API_KEY",)
    native_dimensions: ClassVar[Mapping[str, int]] = {
        _VENDOR + model: size for model, size in OpenAIModels.native_dimensions.items()
    }
    fixed_dimension_models = frozenset(_VENDOR + model for model in OpenAIModels.fixed_dimension_models)
