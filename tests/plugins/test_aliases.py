"""rename_aliases: the keyword spellings adapters' settings accept besides their field names."""

from __future__ import annotations

import pytest

from mastra_memory.plugins.aliases import rename_aliases

ALIASES = {"dbName": "db_name", "uri": "url"}


def test_aliases_are_renamed_and_other_keys_kept() -> None:
    assert rename_aliases({"dbName": "app", "uri": "mongodb://h", "timeout": 3}, ALIASES) == {
        "db_name": "app",
        "url": "mongodb://h",
        "timeout": 3,
    }


def test_the_same_value_under_two_spellings_is_accepted() -> None:
    assert rename_aliases({"url": "mongodb://h", "uri": "mongodb://h"}, ALIASES) == {"url": "mongodb://h"}


def test_two_values_for_one_field_are_refused_not_silently_resolved() -> None:
    with pytest.raises(ValueError, match=r"url is given twice \('uri' and another spelling\)"):
        rename_aliases({"url": "mongodb://a", "uri": "mongodb://b"}, ALIASES)


def test_input_that_is_not_a_mapping_is_left_to_pydantic() -> None:
    settings = object()
    assert rename_aliases(settings, ALIASES) is settings
