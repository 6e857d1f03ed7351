"""Oracle comparisons: what a filter must return according to the reference evaluator, and assertions
whose failure message shows the filter, the expected ids and the returned ids.

The reference evaluator (`mastra_memory.filters.evaluate`) is the oracle (docs/spec.md §2.7): a
supported
operator must return exactly its matches, an undeclared one must raise ``UnsupportedFilterError``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Literal

from mastra_memory.capabilities import AdapterCapabilities
from mastra_memory.errors import UnsupportedFilterError
from mastra_memory.filters import matches, operators_used, parse

__all__ = [
    "Expected",
    "assert_same_ids",
    "assert_unsupported",
    "expected_outcome",
    "oracle_ids",
    "render_filter",
    "unsupported_operators",
]

Expected = Literal["supported", "unsupported"]


def _id_and_metadata(record: Any) -> tuple[str, Mapping[str, Any] | None]:
    if isinstance(record, tuple) and len(record) == 2:
        return str(record[0]), record[1]
    if isinstance(record, Mapping):
        return str(record["id"]), record.get("metadata")
    return str(record.id), record.metadata


def oracle_ids(records: Iterable[Any], flt: Any) -> set[str]:
    """The ids of ``records`` that ``flt`` matches according to the reference evaluator.

    A record is anything with ``id`` and ``metadata`` attributes (a dataset ``Record``, a ``QueryResult``),
    an ``(id, metadata)`` pair or a mapping with those keys. An invalid filter raises ``FilterError``.
    """
    node = parse(flt)
    out: set[str] = set()
    for record in records:
        record_id, metadata = _id_and_metadata(record)
        if matches(node, metadata):
            out.add(record_id)
    return out


def render_filter(flt: Any) -> str:
    """The filter as a Python literal (``repr``): exact about types (``1`` vs ``1.0`` vs ``True``)."""
    return repr(flt)


def _ids_of(returned: Iterable[Any]) -> list[str]:
    return [item if isinstance(item, str) else str(item.id) for item in returned]


def assert_same_ids(
    returned: Iterable[Any], expected: Iterable[str], *, filter: Any, target: str = "", note: str = ""
) -> None:
    """Assert the ids returned for ``filter`` are exactly ``expected`` (no missing, no extra, no duplicate).

    ``returned`` holds ids or hits with an ``id``. The AssertionError shows the filter, the expected ids,
    the returned ids and the difference, so a wrong translation is diagnosed from the message alone.
    """
    got = _ids_of(returned)
    want = set(expected)
    got_set = set(got)
    duplicates = sorted({i for i in got if got.count(i) > 1})
    if got_set == want and not duplicates:
        return
    where = f" on target {target}" if target else ""
    lines = [
        f"filter returned the wrong records{where}" + (f" ({note})" if note else ""),
        f"  filter:   {render_filter(filter)}",
        f"  expected: {sorted(want)} ({len(want)})",
        f"  returned: {sorted(got)} ({len(got)})",
        f"  missing:  {sorted(want - got_set)}",
        f"  extra:    {sorted(got_set - want)}",
    ]
    if duplicates:
        lines.append(f"  returned more than once: {duplicates}")
    raise AssertionError("\n".join(lines))


def unsupported_operators(capabilities: AdapterCapabilities, flt: Any) -> frozenset[str]:
    """The operators of ``flt`` that the manifest declares neither native nor emulated."""
    return operators_used(parse(flt)) - capabilities.supported_operators


def expected_outcome(
    capabilities: AdapterCapabilities, flt: Any, *, requires: Iterable[str] = ()
) -> Expected:
    """``supported`` when every operator of ``flt`` is native or emulated (and every boolean capability in
    ``requires``, such as ``implicit_array_traversal``, is true); ``unsupported`` otherwise, in which case
    the adapter must raise ``UnsupportedFilterError``. An invalid filter raises ``FilterError``.
    """
    if unsupported_operators(capabilities, flt):
        return "unsupported"
    for flag in requires:
        if getattr(capabilities, flag) is not True:
            return "unsupported"
    return "supported"


async def assert_unsupported(
    call: Callable[[], Awaitable[Any]], *, filter: Any, capabilities: AdapterCapabilities, target: str = ""
) -> UnsupportedFilterError:
    """Await ``call()`` and assert it raises ``UnsupportedFilterError`` for an undeclared operator.

    Returns the exception. The AssertionError of a call that returned (or raised something else) shows
    the filter and what happened instead, since a silently accepted filter is the failure the kit exists
    to catch.
    """
    where = f" on target {target}" if target else ""
    undeclared = unsupported_operators(capabilities, filter)
    try:
        result = await call()
    except UnsupportedFilterError as exc:
        if undeclared and exc.operator not in undeclared:
            raise AssertionError(
                f"UnsupportedFilterError{where} names {exc.operator}, which {capabilities.name} declares "
                f"supported; undeclared operators of {render_filter(filter)}: {sorted(undeclared)}"
            ) from exc
        return exc
    except Exception as exc:
        raise AssertionError(
            f"expected UnsupportedFilterError{where} for {render_filter(filter)} "
            f"(undeclared: {sorted(undeclared) or 'none'}), got {type(exc).__name__}: {exc}"
        ) from exc
    shown = _ids_of(result) if isinstance(result, list) else result
    raise AssertionError(
        f"{capabilities.name}{where} accepted {render_filter(filter)} although it declares no support for "
        f"{sorted(undeclared) or 'a capability it needs'}; it returned {shown!r} instead of raising "
        f"UnsupportedFilterError"
    )
