"""Fixtures for the model tests: a local chat-completions server, no provider keys in the environment."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .chat_server import ChatServer


@pytest.fixture
def server() -> Iterator[ChatServer]:
    """A fresh chat-completions server for one test."""
    instance = ChatServer()
    try:
        yield instance
    finally:
        instance.close()


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(name, raising=False)
