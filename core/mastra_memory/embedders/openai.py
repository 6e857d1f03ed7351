"""``openai/<model>``: OpenAI's embeddings API (``OPENAI_API_KEY``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from .openai_compatible import OpenAICompatibleEmbedder


class OpenAIEmbedder(OpenAICompatibleEmbedder):
    """OpenAI embeddings: ``text-embedding-3-small`` (1536), ``-3-large`` (3072), ``ada-002`` (1536).

    A request holds at most 2,048 inputs and 300,000 tokens; batches are split to stay under both.
    """

    provider = "openai"
    default_base_url = "https://api.openai.com/v1"
    api_key_env = ("OPENAI_API_KEY",)
    api_key_required = True
    batch_limit = 2_048
    max_request_bytes = 300_000
    native_dimensions: ClassVar[Mapping[str, int]] = {
        "text-embedding-3-small": 1536,
        "text-embedding-3-large": 3072,
        "text-embedding-ada-002": 1536,
    }
    fixed_dimension_models = frozenset({"text-embedding-ada-002"})
