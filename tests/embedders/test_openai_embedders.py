"""OpenAI, OpenRouter, Ollama and other OpenAI-compatible servers: the OpenAI embeddings wire format."""

from __future__ import annotations

import logging

import pytest

from mastra_memory.embedders.openai import OpenAIEmbedder
from mastra_memory.embedders.openai_compatible import OllamaEmbedder, OpenAICompatibleEmbedder
from mastra_memory.embedders.openrouter import OpenRouterEmbedder
from mastra_memory.errors import ConfigError, EmbeddingError

from .embedding_server import NO_WAIT, EmbeddingServer, server_vector

KEY = "sk-test-0123456789abcdef"


def openai(
    server: EmbeddingServer, model: str = "text-embedding-3-small", **options: object
) -> OpenAIEmbedder:
    return OpenAIEmbedder(model, {"base_url": f"{server.url}/v1", "api_key": KEY, **NO_WAIT, **options})


async def test_request_and_response_follow_the_openai_format(server: EmbeddingServer) -> None:
    embedder = openai(server)

    result = await embedder.embed_many(["alpha bananas", "beta", "gamma delta epsilon"])

    assert result.embeddings == [server_vector(t) for t in ["alpha bananas", "beta", "gamma delta epsilon"]]
    assert result.usage_tokens == 6  # prompt_tokens as reported
    assert embedder.dimension == 8
    (request,) = server.requests
    assert request.path == "/v1/embeddings"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body == {
        "model": "text-embedding-3-small",
        "input": ["alpha bananas", "beta", "gamma delta epsilon"],
        "encoding_format": "float",
    }


async def test_key_comes_from_openai_api_key(
    server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    embedder = OpenAIEmbedder("text-embedding-3-small", {"base_url": f"{server.url}/v1"})

    await embedder.embed_many(["x"])

    assert server.requests[0].headers["authorization"] == "Bearer sk-from-env"


async def test_missing_key_is_a_config_error_at_first_use(server: EmbeddingServer) -> None:
    embedder = OpenAIEmbedder("text-embedding-3-small", {"base_url": f"{server.url}/v1"})  # no error yet

    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        await embedder.embed_many(["x"])
    assert server.requests == []


@pytest.mark.parametrize("where", ["construction", "call"])
async def test_dimensions_option_is_sent(server: EmbeddingServer, where: str) -> None:
    embedder = openai(server, dimensions=4) if where == "construction" else openai(server)

    result = await (
        embedder.embed_many(["a"]) if where == "construction" else embedder.embed_many(["a"], dimensions=4)
    )

    assert server.requests[0].body["dimensions"] == 4
    assert result.embeddings == [server_vector("a", 4)]
    assert embedder.dimension == 4


def test_dimensions_beyond_the_model_or_on_a_fixed_size_model_fail_before_io(server: EmbeddingServer) -> None:
    with pytest.raises(ConfigError, match="exceeds the 1536 dimensions"):
        openai(server, dimensions=2048)
    with pytest.raises(ConfigError, match="does not accept the dimensions option"):
        openai(server, model="text-embedding-ada-002", dimensions=512)
    with pytest.raises(ConfigError, match="positive integer"):
        openai(server, dimensions=0)
    assert server.requests == []


async def test_batches_hold_at_most_2048_inputs(server: EmbeddingServer) -> None:
    texts = [f"t{i}" for i in range(2050)]

    result = await openai(server).embed_many(texts)

    assert [len(body["input"]) for body in server.bodies()] == [2048, 2]
    assert result.embeddings == [server_vector(t) for t in texts]
    assert result.usage_tokens == 2050  # summed over both requests


async def test_batches_stay_under_the_per_request_token_budget(server: EmbeddingServer) -> None:
    texts = [("x" * 99_999) + str(i) for i in range(4)]  # 100,000 bytes each; the cap is 300,000 per request

    await openai(server).embed_many(texts)

    assert [len(body["input"]) for body in server.bodies()] == [3, 1]


async def test_max_batch_size_option_makes_smaller_batches(server: EmbeddingServer) -> None:
    embedder = openai(server, max_batch_size=2)

    await embedder.embed_many(list("abcde"))

    assert embedder.max_batch_size == 2
    assert [body["input"] for body in server.bodies()] == [["a", "b"], ["c", "d"], ["e"]]


async def test_retries_on_429_and_500_then_succeeds(
    server: EmbeddingServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.then(429).then(500)

    with caplog.at_level(logging.WARNING, logger="mastra_memory.embedders"):
        result = await openai(server).embed_many(["a"])

    assert result.embeddings == [server_vector("a")]
    assert len(server.requests) == 3
    assert [r.getMessage().split(";")[0] for r in caplog.records] == [
        "Embedder openai/text-embedding-3-small: HTTP 429: scripted failure 429",
        "Embedder openai/text-embedding-3-small: HTTP 500: scripted failure 500",
    ]


async def test_retry_after_ms_header_sets_the_wait(
    server: EmbeddingServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.then(429, headers={"retry-after-ms": "20"})

    with caplog.at_level(logging.WARNING, logger="mastra_memory.embedders"):
        await openai(server).embed_many(["a"])

    assert "retrying in 0.02s (attempt 2 of 4)" in caplog.records[0].getMessage()


async def test_retries_exhausted_is_an_embedding_error(server: EmbeddingServer) -> None:
    for _ in range(4):
        server.then(503, {"error": {"message": "The server is overloaded"}})

    with pytest.raises(EmbeddingError, match="failed after 4 attempts") as info:
        await openai(server).embed_many(["a"])

    assert "HTTP 503: The server is overloaded" in str(info.value)
    assert len(server.requests) == 4


async def test_max_retries_zero_sends_one_request(server: EmbeddingServer) -> None:
    server.then(500)

    with pytest.raises(EmbeddingError, match="after 1 attempts"):
        await openai(server, max_retries=0).embed_many(["a"])
    assert len(server.requests) == 1


async def test_connection_failures_are_retried_then_reported(closed_port_url: str) -> None:
    embedder = OpenAIEmbedder(
        "text-embedding-3-small", {"base_url": closed_port_url, "api_key": KEY, **NO_WAIT}
    )

    with pytest.raises(EmbeddingError, match=r"failed after 4 attempts, last: connection failed"):
        await embedder.embed_many(["a"])


async def test_rejected_request_is_not_retried_and_never_shows_the_key(server: EmbeddingServer) -> None:
    server.then(
        401, {"error": {"message": f"Incorrect API key provided: {KEY}.", "type": "invalid_request_error"}}
    )

    with pytest.raises(EmbeddingError) as info:
        await openai(server).embed_many(["a"])

    message = str(info.value)
    assert "HTTP 401: Incorrect API key provided: ***." in message
    assert "check the API key" in message
    assert KEY not in message
    assert KEY not in repr(info.value.details)
    assert len(server.requests) == 1


async def test_plain_text_error_bodies_are_reported(server: EmbeddingServer) -> None:
    server.then(400, b"bad input here")

    with pytest.raises(EmbeddingError, match="HTTP 400: bad input here"):
        await openai(server).embed_many(["a"])


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({}, "no 'data' list"),
        ({"data": []}, "0 embeddings for 2 inputs"),
        (
            {"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]},
            "index 0 appears twice",
        ),
        ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 5, "embedding": [1.0]}]}, "outside 0..1"),
        ({"data": [{"index": 0}, {"index": 1, "embedding": [1.0]}]}, "item 0 has no 'embedding'"),
        ({"data": [{"index": 0, "embedding": {"x": 1}}, {"index": 1, "embedding": [1.0]}]}, "not a list"),
        (
            {"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]},
            "different lengths",
        ),
        ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": ["x"]}]}, "non-numeric"),
        (b'{"data": [{"index": 0, "embedding": [NaN]}, {"index": 1, "embedding": [1.0]}]}', "non-finite"),
        (b"<html>gateway</html>", "not JSON"),
    ],
)
async def test_malformed_responses_are_embedding_errors(
    server: EmbeddingServer, body: object, problem: str
) -> None:
    server.then(200, body)

    with pytest.raises(EmbeddingError, match=problem):
        await openai(server).embed_many(["a", "b"])


async def test_base64_embeddings_are_decoded(server: EmbeddingServer) -> None:
    server.base64 = True

    result = await openai(server).embed_many(["a", "b"])

    assert result.embeddings == [server_vector("a"), server_vector("b")]  # k/256 values are exact in float32


async def test_missing_usage_gives_none(server: EmbeddingServer) -> None:
    server.report_usage = False

    result = await openai(server).embed_many(["a"])

    assert result.usage_tokens is None


async def test_empty_input_makes_no_request(server: EmbeddingServer) -> None:
    result = await openai(server).embed_many([])

    assert result.embeddings == []
    assert server.requests == []


async def test_openrouter_uses_its_key_and_vendor_model_name(
    server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "or-key")
    embedder = OpenRouterEmbedder("openai/text-embedding-3-small", {"base_url": f"{server.url}/api/v1"})

    await embedder.embed_many(["a"])

    assert embedder.model_id == "openrouter/openai/text-embedding-3-small"
    (request,) = server.requests
    assert request.path == "/api/v1/embeddings"
    assert request.headers["authorization"] == "Bearer or-key"
    assert request.body["model"] == "openai/text-embedding-3-small"


async def test_openrouter_missing_key_names_its_variable() -> None:
    embedder = OpenRouterEmbedder("openai/text-embedding-3-small", {})

    with pytest.raises(ConfigError, match="OPENROUTER_API_KEY"):
        await embedder.embed_many(["a"])


def test_default_endpoints() -> None:
    assert OpenAIEmbedder.default_base_url == "https://api.openai.com/v1"
    assert OpenRouterEmbedder.default_base_url == "https://openrouter.ai/api/v1"
    assert OllamaEmbedder.default_base_url == "http://localhost:11434/v1"


async def test_ollama_needs_no_key(server: EmbeddingServer) -> None:
    embedder = OllamaEmbedder("nomic-embed-text", {"base_url": f"{server.url}/v1"})

    result = await embedder.embed_many(["a"])

    assert result.embeddings == [server_vector("a")]
    assert "authorization" not in server.requests[0].headers
    assert server.requests[0].body["model"] == "nomic-embed-text"


async def test_compatible_server_sends_key_and_headers_when_given(server: EmbeddingServer) -> None:
    embedder = OpenAICompatibleEmbedder(
        "BAAI/bge-m3",
        {"base_url": f"{server.url}/v1/", "api_key": "local-key", "headers": {"X-Title": "tests"}},
        provider="vllm",
    )

    await embedder.embed_many(["a"])

    assert embedder.model_id == "vllm/BAAI/bge-m3"
    (request,) = server.requests
    assert request.path == "/v1/embeddings"  # trailing slash of base_url handled
    assert request.headers["authorization"] == "Bearer local-key"
    assert request.headers["x-title"] == "tests"


def test_compatible_server_needs_a_base_url() -> None:
    with pytest.raises(ConfigError, match="base_url"):
        OpenAICompatibleEmbedder("some-model", {})
    with pytest.raises(ConfigError, match="http:// or https://"):
        OpenAICompatibleEmbedder("some-model", {"base_url": "localhost:8000"})


def test_a_model_name_is_required() -> None:
    with pytest.raises(ConfigError, match="needs a model name"):
        OpenAIEmbedder("", {})
