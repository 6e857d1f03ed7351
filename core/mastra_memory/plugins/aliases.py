"""Other spellings of an adapter's settings fields (camelCase, Mastra's names), resolved in one place.

pydantic-settings reads a field that has a ``validation_alias`` from the environment under the alias
*without* the adapter's prefix, so an alias such as ``region`` would make a store read an unrelated
``REGION`` variable. Settings classes therefore keep plain field names (read only as
``<PREFIX><FIELD>``) and accept the other spellings as constructor keywords through
:func:`rename_aliases` in a ``mode="before"`` model validator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["rename_aliases"]


def rename_aliases(data: Any, aliases: Mapping[str, str]) -> Any:
    """``data`` with each key of ``aliases`` renamed to the field it names; other input unchanged.

    Raises ``ValueError`` (a pydantic validation error in a validator) when one field is given under two
    spellings with different values, rather than silently keeping one of them.
    """
    if not isinstance(data, Mapping):
        return data
    renamed: dict[str, Any] = {}
    for key, value in data.items():
        name = aliases.get(key, key)
        if name in renamed and renamed[name] != value:
            raise ValueError(f"{name} is given twice ({key!r} and another spelling)")
        renamed[name] = value
    return renamed
