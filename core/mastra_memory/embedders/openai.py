"""``openai/<model>``: OpenAI's embeddings API (``OPENAI_API_KEY``).

:class:`OpenAIModels` holds OpenAI's models and request limits once, for every provider that serves them
(OpenAI itself, and OpenRouter, which forwards ``openai/<model>`` to OpenAI).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from .openai_compatible import OpenAICompatibleEmbedder


class OpenAIModels(OpenAICompatibleEmbedder):
    """OpenAI's embedding models: ``text-embedding-3-small`` (1536), ``-3-large`` (3072), ``ada-002`` (1536,
    which ``dimensions`` cannot shorten).

    A request holds at most 2,048 inputs and 300,000 tokens; batches are split to stay under both. A key
    is required.
    """

    api_key_required = True
    batch_limit = 2_048
    max_request_bytes = 300_000
    native_dimensions: ClassVar[Mapping[str, int]] = {
        "text-embedding-3-small": 1536,
        "text-embedding-3-large": 3072,
        "text-embedding-ada-002": 1536,
    }
    fixed_dimension_models = frozenset({"text-embedding-ada-002"})


class OpenAIEmbedder(OpenAIModels):
    """OpenAI's embedding models through OpenAI's own API (models and limits: :class:`OpenAIModels`)."""

    provider = "openai"
    default_base_url = "https://api.openai.com/v1"
    api_key_env = ("OPENAI_API_KEY",)
