"""StoreSettings: keywords under any spelling first, then ``<env_prefix><FIELD>``, then the fallbacks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pytest
from pydantic import ValidationError
from pydantic_settings import SettingsConfigDict

from mastra_memory.plugins.settings import StoreSettings

PREFIX = "MASTRA_MEMORY_TESTSTORE_"


class Example(StoreSettings):
    model_config = SettingsConfigDict(env_prefix=PREFIX)
    spellings: ClassVar[Mapping[str, str]] = {"uri": "url"}
    env_fallbacks: ClassVar[Mapping[str, tuple[str, ...]]] = {"api_key": ("TESTSTORE_API_KEY",)}

    url: str | None = None
    api_key: str | None = None
    max_size: int = 3
    tags: tuple[str, ...] = ()


@pytest.fixture(autouse=True)
def no_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("URL", "URI", "API_KEY", "MAX_SIZE", "TAGS"):
        monkeypatch.delenv(PREFIX + name, raising=False)
    monkeypatch.delenv("TESTSTORE_API_KEY", raising=False)


def test_fields_come_from_prefixed_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PREFIX + "URL", "http://env")
    monkeypatch.setenv(PREFIX + "MAX_SIZE", "7")
    monkeypatch.setenv(PREFIX + "TAGS", '["a", "b"]')  # a complex field takes JSON
    monkeypatch.setenv(PREFIX + "API_KEY", "")  # empty: unset
    settings = Example()
    assert (settings.url, settings.max_size, settings.tags, settings.api_key) == (
        "http://env",
        7,
        ("a", "b"),
        None,
    )


def test_a_keyword_wins_under_any_spelling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PREFIX + "URL", "http://env")
    monkeypatch.setenv(PREFIX + "MAX_SIZE", "7")
    assert Example(uri="http://kw", maxSize=9).model_dump() == {  # type: ignore[call-arg]
        "url": "http://kw",
        "api_key": None,
        "max_size": 9,
        "tags": (),
    }
    assert Example(url=None).url is None  # given, even as None


def test_spellings_are_not_variable_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PREFIX + "URI", "http://wrong")
    monkeypatch.setenv("URL", "http://wrong")
    assert Example().url is None


def test_fallback_variables_are_read_in_order_when_the_prefixed_one_is_unset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TESTSTORE_API_KEY", "fallback")
    assert Example().api_key == "fallback"
    monkeypatch.setenv(PREFIX + "API_KEY", "prefixed")
    assert Example().api_key == "prefixed"
    assert Example(api_key="keyword").api_key == "keyword"


def test_one_field_under_two_spellings_and_unknown_keys_are_refused() -> None:
    with pytest.raises(ValidationError, match="url is given twice"):
        Example(url="a", uri="b")  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        Example(urls="a")  # type: ignore[call-arg]


def test_model_validate_reads_the_environment_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PREFIX + "URL", "http://env")
    assert Example.model_validate({"maxSize": 4}).model_dump() == {
        "url": "http://env",
        "api_key": None,
        "max_size": 4,
        "tags": (),
    }
    assert Example.model_validate({"uri": "http://kw"}).url == "http://kw"


def test_a_rule_drops_variables_that_do_not_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    class Ruled(Example):
        @classmethod
        def from_environment(cls, keywords: Mapping[str, Any], found: dict[str, Any]) -> dict[str, Any]:
            if keywords.get("max_size") is not None:
                found.pop("url", None)
            return found

    monkeypatch.setenv(PREFIX + "URL", "http://env")
    assert Ruled().url == "http://env"
    assert Ruled(max_size=1).url is None


def test_a_class_without_a_prefix_or_with_a_spelling_of_no_field_is_refused() -> None:
    with pytest.raises(TypeError, match="needs an env_prefix"):

        class NoPrefix(StoreSettings):
            url: str = ""

    with pytest.raises(TypeError, match="name no field: nowhere"):

        class Misspelt(StoreSettings):
            model_config = SettingsConfigDict(env_prefix=PREFIX)
            spellings: ClassVar[Mapping[str, str]] = {"x": "nowhere"}
