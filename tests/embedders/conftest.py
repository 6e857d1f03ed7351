"""Fixtures for the embedder tests: a stand-in provider server, no keys in the environment, a clean cache."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from mastra_memory.embedders import get_embedding_cache

from .embedding_server import EmbeddingServer

KEY_VARS = ("OPENAI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY", "OPENROUTER_API_KEY")


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    """A fresh stand-in embedding server for one test."""
    instance = EmbeddingServer()
    try:
        yield instance
    finally:
        instance.close()


@pytest.fixture
def closed_port_url() -> str:
    """A loopback URL where nothing listens (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests start with no provider key in the environment; each sets what it needs."""
    for name in KEY_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    """The process-wide embedding cache starts empty and at its default size in every test."""
    cache = get_embedding_cache()
    cache.clear()
    cache.resize(1_000)
    yield
    cache.clear()
