"""The built-in model-router providers, registered through the same hook as third-party plugins.

Each factory imports its provider module on first use, so loading the plugin costs nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..hookspecs import hookimpl
from .base import Embedder

if TYPE_CHECKING:
    from ..plugins.protocols import RegisterEmbedder


def openai(model: str, options: Mapping[str, Any]) -> Embedder:
    """``openai/<model>``."""
    from .openai import OpenAIEmbedder

    return OpenAIEmbedder(model, options)


def google(model: str, options: Mapping[str, Any]) -> Embedder:
    """``google/<model>``."""
    from .google import GoogleEmbedder

    return GoogleEmbedder(model, options)


def openrouter(model: str, options: Mapping[str, Any]) -> Embedder:
    """``openrouter/<vendor>/<model>``."""
    from .openrouter import OpenRouterEmbedder

    return OpenRouterEmbedder(model, options)


def ollama(model: str, options: Mapping[str, Any]) -> Embedder:
    """``ollama/<model>`` (default ``base_url`` ``http://localhost:11434/v1``)."""
    from .openai_compatible import OllamaEmbedder

    return OllamaEmbedder(model, options)


def openai_compatible(model: str, options: Mapping[str, Any]) -> Embedder:
    """``openai-compatible/<model>`` with ``base_url`` (vLLM, LM Studio, gateways)."""
    from .openai_compatible import OpenAICompatibleEmbedder

    return OpenAICompatibleEmbedder(model, options)


def local(model: str, options: Mapping[str, Any]) -> Embedder:
    """``local/wordllama`` (also bare ``local``) and ``local/all-minilm-l6-v2``."""
    if model.lower() == "all-minilm-l6-v2":
        from .minilm_local import MiniLMEmbedder

        return MiniLMEmbedder(options)
    from .wordllama_local import WordLlamaEmbedder

    return WordLlamaEmbedder(model or "wordllama", options)


def sentence_transformers(model: str, options: Mapping[str, Any]) -> Embedder:
    """``sentence-transformers/<model>``."""
    from .sentence_transformers_local import SentenceTransformersEmbedder

    return SentenceTransformersEmbedder(model, options)


def fastembed(model: str, options: Mapping[str, Any]) -> Embedder:
    """``fastembed/<model>`` (bare ``fastembed``: ``BAAI/bge-small-en-v1.5``)."""
    from .fastembed_local import FastEmbedEmbedder

    return FastEmbedEmbedder(model, options)


def hash_embedder(model: str, options: Mapping[str, Any]) -> Embedder:
    """``hash/<dim>`` (bare ``hash``: 64 dimensions)."""
    from .hash import HashEmbedder

    return HashEmbedder.from_model(model)


@hookimpl
def register_embedders(register: RegisterEmbedder) -> None:
    """Register the providers that ship with mastra-memory."""
    register("openai", openai)
    register("google", google)
    register("openrouter", openrouter)
    register("ollama", ollama)
    register("openai-compatible", openai_compatible)
    register("local", local)
    register("sentence-transformers", sentence_transformers)
    register("fastembed", fastembed)
    register("hash", hash_embedder)
