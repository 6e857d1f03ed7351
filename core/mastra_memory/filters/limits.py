"""Size limits of a filter (docs/spec.md §2.10), declared once, and the pre-check that enforces them.

:func:`limit_problems` runs first in :func:`~mastra_memory.filters.parse.parse`, before the recursive
parser, any translation and any I/O. It walks the filter with an explicit stack (so a filter nested
10,000 levels deep is a ``FilterError``, never a ``RecursionError``) and stops at the first limit
exceeded, so its own cost is bounded by the limits rather than by the size of the input — a list of
10 million values or a structure that shares one list a million times is refused after a few thousand
steps, and a cyclic structure is refused at the depth limit.

Why these numbers: each is far above what a hand-written or generated application filter needs, and
low enough that the most expensive store spends about a second on the largest accepted filter (measured
on SQLite and LanceDB with 200 records: 1,000 ``$or`` branches 0.35 s / 0.7 s, ``$in``/``$nin``/``$all``
of 1,000 values 0.01–0.6 s / 1.3–1.8 s; before the limits 10,000 branches took ~20 s and 100,000 ``$in``
values over 30 s, and LanceDB's planner grows exponentially with nested ``$not``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..metadata_limits import shown

#: Objects and lists nested inside one another; the filter itself is level 1. Real filters stay under
#: 10 (``$and`` → list → document → field → ``$elemMatch`` → field → ``$not`` → ``$in`` list is 8).
MAX_FILTER_DEPTH: Final = 32
#: Keys summed over every object of the filter: field names and operators alike.
MAX_FILTER_KEYS: Final = 1_000
#: Elements of one list: ``$in``, ``$nin``, ``$all``, a plain list, ``$and``/``$or``/``$nor``.
MAX_LIST_LENGTH: Final = 1_000
#: Keys plus list elements summed over the whole filter (e.g. ten ``$in`` lists of 1,000 values).
MAX_FILTER_ITEMS: Final = 10_000
#: Characters of all keys and string operands together (1,000 ids of 512 characters fit twice).
MAX_FILTER_CHARS: Final = 1_000_000
#: Characters of one ``$regex`` pattern.
MAX_REGEX_LENGTH: Final = 1_000
#: Groups ``( … )`` nested inside one another in one ``$regex`` pattern.
MAX_REGEX_NESTING: Final = 32

# A location is a linked list (parent, key) built in O(1) per step and spelled out only for a message.
_Loc = tuple[Any, str] | None


def _where(loc: _Loc) -> str:
    parts: list[str] = []
    while loc is not None:
        loc, key = loc
        parts.append(key)
    text = ".".join(reversed(parts)) or "<root>"
    return shown(text)  # printable even with lone surrogates


def limit_problems(filter: Mapping[Any, Any]) -> list[str]:
    """The first size limit ``filter`` exceeds, as a one-element problem list (empty if within all).

    Never recurses, and stops as soon as a limit is exceeded.
    """
    keys = items = chars = 0
    stack: list[tuple[Any, int, _Loc]] = [(filter, 1, None)]
    while stack:
        value, depth, loc = stack.pop()
        if depth > MAX_FILTER_DEPTH:
            return [
                f"Filter nested too deeply: more than {MAX_FILTER_DEPTH} levels of objects and lists at "
                f"{_where(loc)}; flatten it, e.g. one $and or $or list instead of nested ones"
            ]
        if isinstance(value, Mapping):
            keys += len(value)
            items += len(value)
            if keys > MAX_FILTER_KEYS:
                return [
                    f"Filter too large: more than {MAX_FILTER_KEYS:,} keys (field names and operators, "
                    "over all its objects); use $in for many values of one field, or split the query"
                ]
            for key, sub in value.items():
                label = key if isinstance(key, str) else f"<{type(key).__name__}>"
                chars += len(label)
                if isinstance(sub, str):
                    chars += len(sub)
                elif isinstance(sub, (Mapping, list, tuple)):
                    stack.append((sub, depth + 1, (loc, label)))
        elif isinstance(value, (list, tuple)):
            if len(value) > MAX_LIST_LENGTH:
                return [
                    f"List too long: {_where(loc)} has {len(value):,} elements (limit "
                    f"{MAX_LIST_LENGTH:,}); split the query into several"
                ]
            items += len(value)
            for index, sub in enumerate(value):
                if isinstance(sub, str):
                    chars += len(sub)
                elif isinstance(sub, (Mapping, list, tuple)):
                    stack.append((sub, depth + 1, (loc, str(index))))
        if items > MAX_FILTER_ITEMS:
            return [
                f"Filter too large: more than {MAX_FILTER_ITEMS:,} keys and list elements in total; "
                "split the query into several"
            ]
        if chars > MAX_FILTER_CHARS:
            return [
                f"Filter too large: more than {MAX_FILTER_CHARS:,} characters of keys and strings; "
                "filter on shorter values (e.g. ids or hashes) or split the query"
            ]
    return []
