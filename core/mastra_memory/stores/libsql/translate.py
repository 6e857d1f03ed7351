"""Filters on the LibSQL store: the embedded store's SQL translator over Mastra's ``metadata`` JSON text,
and the binding of its parameters as the ``libsql`` driver takes them.

Mastra's per-index tables keep metadata as JSON text in a ``metadata`` column, exactly what the embedded
SQLite translator (``stores/sqlite/translate.py``) is written for, and libSQL is SQLite (3.45) with the
same JSON1 functions; so the same expression means the same thing here (docs/spec.md §2). Two things
differ, both in the driver rather than the engine:

* it cannot register SQL functions, so ``$regex`` (the translator's ``mastra_regexp``) is not offered:
  the manifest leaves it out and the translator refuses it with ``UnsupportedFilterError`` before any I/O,
  instead of weakening the filter (docs/spec.md §2.6);
* it binds positional parameters only, and an integer beyond 32 bits as a float: :func:`positional`
  rewrites a fragment's ``:name`` parameters to ``?`` and binds such an integer as its decimal text under
  ``CAST(? AS INTEGER)``, which SQLite converts exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..sqlite.translate import SqlFragment, SQLiteFilterTranslator
from .capabilities import LIBSQL_CAPABILITIES

__all__ = ["LibSQLFilterTranslator", "positional"]

#: What the driver binds as a 64-bit integer; wider integers go through text (see the module).
_INT32: Final = range(-(2**31), 2**31)


class LibSQLFilterTranslator(SQLiteFilterTranslator):
    """The SQLite translator under the LibSQL manifest: every operator but ``$regex`` (see the module)."""

    capabilities = LIBSQL_CAPABILITIES


def _bound(value: Any, out: list[Any]) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value not in _INT32:
        out.append(str(value))
        return "CAST(? AS INTEGER)"
    out.append(value)
    return "?"


def positional(sql: str, params: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """``sql`` with each ``:name`` parameter replaced by ``?`` and the values in order of appearance.

    Single-quoted SQL literals are copied as they are (the translator spells JSON paths inline there);
    a name not in ``params`` is left alone (it is no parameter of ours).
    """
    out: list[str] = []
    values: list[Any] = []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch == "'":
            end = i + 1
            while end < n:
                if sql[end] == "'":
                    if end + 1 < n and sql[end + 1] == "'":
                        end += 2
                        continue
                    break
                end += 1
            out.append(sql[i : end + 1])
            i = end + 1
            continue
        if ch == ":" and i + 1 < n and (sql[i + 1].isalpha() or sql[i + 1] == "_"):
            end = i + 1
            while end < n and (sql[end].isalnum() or sql[end] == "_"):
                end += 1
            name = sql[i + 1 : end]
            if name in params:
                out.append(_bound(params[name], values))
                i = end
                continue
        out.append(ch)
        i += 1
    return "".join(out), values


def fragment_sql(fragment: SqlFragment | None) -> tuple[str, list[Any]]:
    """A ``WHERE`` clause (empty for None) and its positional values."""
    if fragment is None:
        return "", []
    sql, values = positional(fragment.sql, fragment.params)
    return f"WHERE {sql}", values
