"""Google Gemini: ``batchEmbedContents`` with ``x-goog-api-key``."""

from __future__ import annotations

import pytest

from mastra_memory.embedders.google import GoogleEmbedder
from mastra_memory.errors import ConfigError, EmbeddingError

from .embedding_server import NO_WAIT, EmbeddingServer, server_vector

KEY = "AIza-test-key-0123456789"


def google(server: EmbeddingServer, **options: object) -> GoogleEmbedder:
    return GoogleEmbedder(
        "gemini-embedding-001", {"base_url": f"{server.url}/v1beta", "api_key": KEY, **NO_WAIT, **options}
    )


async def test_request_and_response_follow_the_gemini_format(server: EmbeddingServer) -> None:
    embedder = google(server)

    result = await embedder.embed_many(["alpha", "beta"])

    assert result.embeddings == [server_vector("alpha"), server_vector("beta")]
    assert result.usage_tokens is None  # Gemini reports no token usage
    assert embedder.dimension == 8
    (request,) = server.requests
    assert request.path == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    assert request.headers["x-goog-api-key"] == KEY
    assert "authorization" not in request.headers
    assert request.body == {
        "requests": [
            {"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "alpha"}]}},
            {"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "beta"}]}},
        ]
    }


async def test_dimensions_and_task_type_are_sent_per_request(server: EmbeddingServer) -> None:
    result = await google(server, dimensions=4, task_type="RETRIEVAL_DOCUMENT").embed_many(["a"])

    (item,) = server.requests[0].body["requests"]
    assert item["outputDimensionality"] == 4
    assert item["taskType"] == "RETRIEVAL_DOCUMENT"
    assert result.embeddings == [server_vector("a", 4)]


def test_dimensions_beyond_3072_fail_before_io(server: EmbeddingServer) -> None:
    with pytest.raises(ConfigError, match="exceeds the 3072 dimensions"):
        google(server, dimensions=4096)


async def test_models_prefix_is_accepted(server: EmbeddingServer) -> None:
    embedder = GoogleEmbedder(
        "models/gemini-embedding-001", {"base_url": f"{server.url}/v1beta", "api_key": KEY}
    )

    await embedder.embed_many(["a"])

    assert embedder.model_id == "google/gemini-embedding-001"
    assert server.requests[0].path == "/v1beta/models/gemini-embedding-001:batchEmbedContents"


async def test_batches_hold_at_most_100_requests(server: EmbeddingServer) -> None:
    texts = [f"text {i}" for i in range(250)]

    result = await google(server).embed_many(texts)

    assert [len(body["requests"]) for body in server.bodies()] == [100, 100, 50]
    assert result.embeddings == [server_vector(t) for t in texts]


async def test_key_from_google_api_key(server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "primary")
    monkeypatch.setenv("GOOGLE_GENERATIVE_AI_API_KEY", "fallback")

    await GoogleEmbedder("gemini-embedding-001", {"base_url": f"{server.url}/v1beta"}).embed_many(["a"])

    assert server.requests[0].headers["x-goog-api-key"] == "primary"


async def test_key_falls_back_to_google_generative_ai_api_key(
    server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_GENERATIVE_AI_API_KEY", "fallback")

    await GoogleEmbedder("gemini-embedding-001", {"base_url": f"{server.url}/v1beta"}).embed_many(["a"])

    assert server.requests[0].headers["x-goog-api-key"] == "fallback"


async def test_missing_key_names_both_variables(server: EmbeddingServer) -> None:
    embedder = GoogleEmbedder("gemini-embedding-001", {"base_url": f"{server.url}/v1beta"})

    with pytest.raises(ConfigError, match="GOOGLE_API_KEY or GOOGLE_GENERATIVE_AI_API_KEY"):
        await embedder.embed_many(["a"])
    assert server.requests == []


async def test_retries_on_500_then_succeeds(server: EmbeddingServer) -> None:
    server.then(500, {"error": {"code": 500, "message": "Internal error", "status": "INTERNAL"}})

    result = await google(server).embed_many(["a"])

    assert result.embeddings == [server_vector("a")]
    assert len(server.requests) == 2


async def test_quota_errors_exhaust_retries(server: EmbeddingServer) -> None:
    for _ in range(4):
        server.then(
            429, {"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}}
        )

    with pytest.raises(EmbeddingError, match="after 4 attempts, last: HTTP 429: Resource exhausted"):
        await google(server).embed_many(["a"])


async def test_invalid_key_error_is_reported_without_the_key(server: EmbeddingServer) -> None:
    server.then(
        400, {"error": {"code": 400, "message": f"API key not valid: {KEY}", "status": "INVALID_ARGUMENT"}}
    )

    with pytest.raises(EmbeddingError, match=r"HTTP 400: API key not valid: \*\*\*") as info:
        await google(server).embed_many(["a"])

    assert KEY not in str(info.value)
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({}, "no 'embeddings' list"),
        ({"embeddings": [{"values": [1.0]}]}, "1 embeddings for 2 inputs"),
        ({"embeddings": [{"values": [1.0]}, {"value": [1.0]}]}, "embedding 1 has no 'values' list"),
        ({"embeddings": [{"values": [1.0]}, {"values": [1.0, 2.0]}]}, "different lengths"),
    ],
)
async def test_malformed_responses_are_embedding_errors(
    server: EmbeddingServer, body: object, problem: str
) -> None:
    server.then(200, body)

    with pytest.raises(EmbeddingError, match=problem):
        await google(server).embed_many(["a", "b"])
