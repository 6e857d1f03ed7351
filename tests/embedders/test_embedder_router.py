"""Model-router resolution of every string form in docs/spec.md §5.7."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from mastra_memory.embedders import Embedder, EmbedderSpec, EmbedResult, parse_model_string, resolve_embedder
from mastra_memory.embedders.google import GoogleEmbedder
from mastra_memory.embedders.hash import HashEmbedder
from mastra_memory.embedders.openai import OpenAIEmbedder
from mastra_memory.embedders.openai_compatible import OllamaEmbedder, OpenAICompatibleEmbedder
from mastra_memory.embedders.openrouter import OpenRouterEmbedder
from mastra_memory.embedders.wordllama_local import WordLlamaEmbedder
from mastra_memory.errors import ConfigError, PluginError
from mastra_memory.hookspecs import hookimpl
from mastra_memory.plugins import embedder_providers, get_plugin_manager

from .embedding_server import EmbeddingServer, server_vector

BUILTIN = {"openai", "google", "openrouter", "ollama", "local", "sentence-transformers", "fastembed", "hash"}


def test_builtin_providers_are_registered_through_the_hook() -> None:
    assert set(embedder_providers()) >= BUILTIN


@pytest.mark.parametrize(
    ("spec", "kind", "model_id", "model"),
    [
        (
            "openai/text-embedding-3-small",
            OpenAIEmbedder,
            "openai/text-embedding-3-small",
            "text-embedding-3-small",
        ),
        (
            "openai/text-embedding-3-large",
            OpenAIEmbedder,
            "openai/text-embedding-3-large",
            "text-embedding-3-large",
        ),
        (
            "openai/text-embedding-ada-002",
            OpenAIEmbedder,
            "openai/text-embedding-ada-002",
            "text-embedding-ada-002",
        ),
        (
            "OpenAI/text-embedding-3-small",
            OpenAIEmbedder,
            "openai/text-embedding-3-small",
            "text-embedding-3-small",
        ),
        (
            "google/gemini-embedding-001",
            GoogleEmbedder,
            "google/gemini-embedding-001",
            "gemini-embedding-001",
        ),
        (
            "openrouter/openai/text-embedding-3-small",
            OpenRouterEmbedder,
            "openrouter/openai/text-embedding-3-small",
            "openai/text-embedding-3-small",
        ),
        (
            EmbedderSpec(provider_id="openrouter", model_id="openai/text-embedding-3-small"),
            OpenRouterEmbedder,
            "openrouter/openai/text-embedding-3-small",
            "openai/text-embedding-3-small",
        ),
        (
            {"providerId": "openrouter", "modelId": "openai/text-embedding-3-small"},
            OpenRouterEmbedder,
            "openrouter/openai/text-embedding-3-small",
            "openai/text-embedding-3-small",
        ),
        (
            EmbedderSpec.model_validate({"modelId": "google/gemini-embedding-001"}),
            GoogleEmbedder,
            "google/gemini-embedding-001",
            "gemini-embedding-001",
        ),
        ("ollama/nomic-embed-text", OllamaEmbedder, "ollama/nomic-embed-text", "nomic-embed-text"),
    ],
)
def test_http_providers(spec: Any, kind: type, model_id: str, model: str) -> None:
    embedder = resolve_embedder(spec)  # no key needed until the first call

    assert type(embedder) is kind
    assert embedder.model_id == model_id
    assert embedder.model == model  # type: ignore[attr-defined]
    assert embedder.dimension is None


@pytest.mark.parametrize(("spec", "dimension"), [("hash/64", 64), ("hash", 64), ("hash/1536", 1536)])
def test_hash_strings(spec: str, dimension: int) -> None:
    embedder = resolve_embedder(spec)

    assert isinstance(embedder, HashEmbedder)
    assert embedder.dimension == dimension


@pytest.mark.parametrize("spec", ["local/wordllama", "local"])
def test_local_strings(spec: str) -> None:
    embedder = resolve_embedder(spec)

    assert isinstance(embedder, WordLlamaEmbedder)
    assert embedder.model_id == "local/wordllama"


async def test_unknown_provider_with_base_url_is_an_openai_compatible_server(server: EmbeddingServer) -> None:
    embedder = resolve_embedder("vllm/BAAI/bge-m3", {"base_url": f"{server.url}/v1"})

    result = await embedder.embed_many(["a"])

    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert embedder.model_id == "vllm/BAAI/bge-m3"
    assert server.requests[0].body["model"] == "BAAI/bge-m3"
    assert result.embeddings == [server_vector("a")]


async def test_known_provider_honours_base_url(server: EmbeddingServer) -> None:
    embedder = resolve_embedder(
        "openai/text-embedding-3-small", {"base_url": f"{server.url}/v1", "api_key": "k"}
    )

    await embedder.embed_many(["a"])

    assert server.requests[0].path == "/v1/embeddings"


async def test_spec_connection_settings_reach_the_request(server: EmbeddingServer) -> None:
    spec = EmbedderSpec.model_validate(
        {
            "providerId": "openrouter",
            "modelId": "openai/text-embedding-3-small",
            "url": f"{server.url}/api/v1",
            "apiKey": "spec-key",
            "headers": {"X-Title": "mastra-memory tests"},
        }
    )

    await resolve_embedder(spec).embed_many(["a"])

    (request,) = server.requests
    assert request.path == "/api/v1/embeddings"
    assert request.headers["authorization"] == "Bearer spec-key"
    assert request.headers["x-title"] == "mastra-memory tests"


async def test_options_override_spec_settings(server: EmbeddingServer) -> None:
    spec = EmbedderSpec(
        provider_id="openai", model_id="text-embedding-3-small", base_url="http://127.0.0.1:9/v1"
    )

    await resolve_embedder(spec, {"base_url": f"{server.url}/v1", "api_key": "k"}).embed_many(["a"])

    assert len(server.requests) == 1


def test_spec_hides_its_key() -> None:
    spec = EmbedderSpec(provider_id="openai", model_id="m", api_key="sk-secret")

    assert "sk-secret" not in repr(spec)
    assert spec.connection_options()["api_key"] == "sk-secret"
    assert spec.url is None


def test_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="Unknown embedder provider 'nope'") as info:
        resolve_embedder("nope/model")

    for provider in BUILTIN:
        assert provider in str(info.value)
    assert "base_url" in str(info.value)


@pytest.mark.parametrize("spec", ["", "   ", "/model"])
def test_strings_without_a_provider_are_config_errors(spec: str) -> None:
    with pytest.raises(ConfigError, match="names no provider"):
        resolve_embedder(spec)


def test_model_is_required_for_http_providers() -> None:
    with pytest.raises(ConfigError, match="needs a model name"):
        resolve_embedder("openai")


def test_invalid_spec_dict_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="Invalid embedder spec"):
        resolve_embedder({"providerId": "openai"})


def test_non_embedder_objects_are_rejected() -> None:
    with pytest.raises(ConfigError, match="embed_many"):
        resolve_embedder(42)  # type: ignore[arg-type]


def test_parse_model_string_splits_at_the_first_slash() -> None:
    assert parse_model_string("openrouter/openai/text-embedding-3-small") == (
        "openrouter",
        "openai/text-embedding-3-small",
    )
    assert parse_model_string(" Hash ") == ("hash", "")


class CustomEmbedder:
    """A user's own embedder object."""

    model_id = "custom/model"
    dimension: int | None = 2
    max_batch_size = 8

    async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
        return EmbedResult([[1.0, 0.0] for _ in texts], None)


def test_protocol_objects_pass_through_unchanged() -> None:
    custom = CustomEmbedder()

    assert isinstance(custom, Embedder)
    assert resolve_embedder(custom) is custom


class AcmePlugin:
    """A third-party plugin providing the ``acme`` provider."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []

    @hookimpl
    def register_embedders(self, register: Any) -> None:
        def factory(model: str, options: Mapping[str, Any]) -> Any:
            self.seen.append((model, dict(options)))
            return CustomEmbedder() if model != "broken" else object()

        register("acme", factory)


@pytest.fixture
def acme() -> Iterator[AcmePlugin]:
    plugin = AcmePlugin()
    manager = get_plugin_manager()
    manager.register(plugin, name="acme-test-plugin")
    try:
        yield plugin
    finally:
        manager.unregister(name="acme-test-plugin")


def test_third_party_providers_resolve_through_the_plugin_manager(acme: AcmePlugin) -> None:
    embedder = resolve_embedder("acme/small-v1", {"dimensions": 2})

    assert isinstance(embedder, CustomEmbedder)
    assert acme.seen == [("small-v1", {"dimensions": 2})]


def test_a_factory_returning_a_non_embedder_is_a_plugin_error(acme: AcmePlugin) -> None:
    with pytest.raises(PluginError, match="'acme'"):
        resolve_embedder("acme/broken")
