"""Settings: one mode out of url / path / edge_path, camelCase spellings, environment fallbacks."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from mastra_memory_qdrant.settings import QdrantSettings


def test_each_mode() -> None:
    assert QdrantSettings(url="http://localhost:6333").mode == "server"
    assert QdrantSettings(url=":memory:").mode == "memory"
    assert QdrantSettings(path="/tmp/q").mode == "local"
    assert QdrantSettings(edge_path="/tmp/e").mode == "edge"


def test_qdrant_scheme_is_http() -> None:
    assert QdrantSettings(url="qdrant://db:6333").server_url == "http://db:6333"
    assert QdrantSettings(url="qdrants://db:6333").server_url == "https://db:6333"
    assert QdrantSettings(url="https://x.cloud.qdrant.io").server_url == "https://x.cloud.qdrant.io"
    assert QdrantSettings(url=":memory:").server_url is None


def test_camel_case_spellings() -> None:
    settings = QdrantSettings.model_validate({"url": "http://h:6333", "apiKey": "k", "preferGrpc": True})
    assert settings.api_key is not None
    assert settings.api_key.get_secret_value() == "k"
    assert settings.prefer_grpc is True
    assert QdrantSettings.model_validate({"edgePath": "/tmp/e"}).edge_path == "/tmp/e"


@pytest.mark.parametrize(
    "given",
    [{}, {"url": ":memory:", "path": "/tmp/q"}, {"path": "/tmp/q", "edge_path": "/tmp/e"}],
)
def test_exactly_one_mode(given: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("URL", "PATH", "EDGE_PATH"):
        monkeypatch.delenv(f"MASTRA_MEMORY_QDRANT_{name}", raising=False)
    with pytest.raises(ValidationError, match="set exactly one of url"):
        QdrantSettings(**given)


def test_api_key_needs_a_server() -> None:
    with pytest.raises(ValidationError, match="api_key applies to a Qdrant server"):
        QdrantSettings(path="/tmp/q", api_key="k")


def test_environment_fills_in_when_nothing_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MASTRA_MEMORY_QDRANT_URL", "http://env:6333")
    monkeypatch.setenv("MASTRA_MEMORY_QDRANT_API_KEY", "secret")
    from_env = QdrantSettings()
    assert from_env.server_url == "http://env:6333"
    assert from_env.api_key is not None
    assert from_env.api_key.get_secret_value() == "secret"
    explicit = QdrantSettings(edge_path="/tmp/e")  # an explicit mode wins over the environment
    assert explicit.mode == "edge"
    assert explicit.api_key is None


def test_unknown_settings_are_refused() -> None:
    with pytest.raises(ValidationError):
        QdrantSettings.model_validate({"url": ":memory:", "collection": "x"})
