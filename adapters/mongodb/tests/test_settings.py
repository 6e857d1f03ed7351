"""Settings: Mastra's names, the environment, bounds."""

from __future__ import annotations

import pytest
from mastra_memory.plugins import create_storage, create_vector

from mastra_memory_mongodb import MongoDBSettings


def test_mastra_names_are_accepted() -> None:
    settings = MongoDBSettings(uri="mongodb://h:27017", dbName="app", timeoutMS=5000, searchMode="exact")  # type: ignore[call-arg]
    assert (settings.url, settings.db_name, settings.timeout_ms, settings.search_mode) == (
        "mongodb://h:27017",
        "app",
        5000,
        "exact",
    )


def test_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MASTRA_MEMORY_MONGODB_URI", "mongodb://env:1")
    monkeypatch.setenv("MASTRA_MEMORY_MONGODB_DB_NAME", "fromenv")
    settings = MongoDBSettings()
    assert (settings.url, settings.db_name) == ("mongodb://env:1", "fromenv")
    assert MongoDBSettings(url="mongodb://explicit:1").url == "mongodb://explicit:1"


def test_every_call_is_bounded() -> None:
    options = MongoDBSettings(url="mongodb://h").client_options()
    assert options["serverSelectionTimeoutMS"] > 0
    assert options["timeoutMS"] > 0
    assert options["connectTimeoutMS"] > 0


def test_missing_url_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MASTRA_MEMORY_MONGODB_URL", raising=False)
    monkeypatch.delenv("MASTRA_MEMORY_MONGODB_URI", raising=False)
    with pytest.raises(ValueError, match="MASTRA_MEMORY_MONGODB_URL"):
        MongoDBSettings()


def test_password_is_not_shown() -> None:
    assert "secret" not in MongoDBSettings(url="mongodb://user:secret@h:27017/").describe()


def test_plugin_by_url() -> None:
    vector = create_vector("mongodb://127.0.0.1:1/?directConnection=true", db_name="x")
    storage = create_storage("mongodb", url="mongodb://127.0.0.1:1", db_name="x")
    assert type(vector).__name__ == "MongoDBVector"
    assert type(storage).__name__ == "MongoDBStorage"
