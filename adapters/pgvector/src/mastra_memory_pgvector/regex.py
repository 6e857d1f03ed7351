"""Translate a portable ``$regex`` (docs/spec.md §2.5) into a PostgreSQL ARE that matches exactly what
``re.search``
matches.

PostgreSQL's ``~`` operator reads an Advanced Regular Expression whose defaults differ from Python's:
``.`` and ``[^a]`` match a newline in both, but ``.`` does not in Python; ``$`` in Python also matches
just before a final newline; ``m`` and ``s`` map to other switches; and ARE case-insensitivity follows
the database's collation instead of Python's simple case folding. So the pattern is parsed with Python's
own parser (``re._parser``, the parser ``re.compile`` uses) and written back out atom by atom:

* every character is written as a ``\\uXXXX`` / ``\\UXXXXXXXX`` escape (ASCII letters and digits as
  themselves), so no character of the input is ever read as ARE syntax;
* ``.`` becomes ``[^\\n]`` (or any character with ``s``); ``^`` and ``$`` become lookaround
  constraints with Python's meaning, with and without ``m``;
* with ``i``, each character or class becomes the exact set of characters Python's engine accepts for
  it: for the ~2,900 characters that take part in case folding the set is decided by compiling the atom
  with ``re.IGNORECASE`` and testing each one; every other character matches exactly when it matches
  without the flag. ARE's own case-insensitivity is never used.

PostgreSQL text never contains U+0000, so an atom that could only match it matches nothing here.
"""

from __future__ import annotations

import bisect
import importlib
import re
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any, Final

# Python's own regex parser and engine helpers (private, stable since 3.11: what `re.compile` uses).
sre_parse: Any = importlib.import_module("re._parser")
sre_constants: Any = importlib.import_module("re._constants")
_sre: Any = importlib.import_module("_sre")

__all__ = ["RegexTranslationError", "to_are"]

_MAX_CODE_POINT: Final = 0x10FFFF
_NEWLINE: Final = 0x0A
_NEVER: Final = "[^\\u0001-\\U0010ffff]"  # only U+0000, which PostgreSQL text cannot contain
_ANY: Final = "[\\u0001-\\U0010ffff]"

Ranges = tuple[tuple[int, int], ...]


class RegexTranslationError(ValueError):
    """The pattern uses a construct outside the portable subset (the core's validation should prevent it)."""


def _escape(code: int) -> str:
    char = chr(code)
    if char.isascii() and char.isalnum():
        return char
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _bracket(ranges: Iterable[tuple[int, int]], negate: bool) -> str:
    parts = [_escape(lo) if lo == hi else f"{_escape(lo)}-{_escape(hi)}" for lo, hi in ranges]
    if not parts:
        return _ANY if negate else _NEVER
    if len(parts) == 1 and not negate and "-" not in parts[0][1:]:
        return parts[0]
    return "[" + ("^" if negate else "") + "".join(parts) + "]"


def _normalise(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Sorted, merged ranges without U+0000."""
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        lo = max(lo, 1)
        if lo > hi:
            continue
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((lo, hi) for lo, hi in out)


def _without(ranges: Ranges, excluded: Sequence[int]) -> list[tuple[int, int]]:
    """``ranges`` minus the sorted code points ``excluded``."""
    out: list[tuple[int, int]] = []
    for lo, hi in ranges:
        start = lo
        first = bisect.bisect_left(excluded, lo)
        last = bisect.bisect_right(excluded, hi)
        for code in excluded[first:last]:
            if start <= code - 1:
                out.append((start, code - 1))
            start = code + 1
        if start <= hi:
            out.append((start, hi))
    return out


@cache
def _case_sensitive_points() -> tuple[int, ...]:
    """Every code point whose match under ``re.IGNORECASE`` may differ from its match without it.

    A character outside this set is not cased, is not the lower or upper case of a cased character and
    is not one of Python's extra case equivalences; for such a character Python's case-insensitive
    matching of any literal or class gives the same answer as case-sensitive matching.
    """
    extra: dict[int, tuple[int, ...]] = importlib.import_module("re._casefix")._EXTRA_CASES
    points: set[int] = set()
    for code in range(_MAX_CODE_POINT + 1):
        if _sre.unicode_iscased(code):
            upper = chr(code).upper()
            points.update((code, _sre.unicode_tolower(code), *(ord(c) for c in upper if len(upper) == 1)))
    for key, values in extra.items():
        points.add(key)
        points.update(values)
    return tuple(sorted(points))


def _contains(ranges: Ranges, code: int) -> bool:
    index = bisect.bisect_right(ranges, (code, _MAX_CODE_POINT + 1)) - 1
    return index >= 0 and ranges[index][0] <= code <= ranges[index][1]


@cache
def _ignorecase_bracket(ranges: Ranges, negate: bool) -> str:
    """The ARE bracket for the class ``ranges`` (negated if ``negate``) as Python matches it with ``i``."""
    python_class = (
        "["
        + ("^" if negate else "")
        + "".join(f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for lo, hi in ranges)
        + "]"
    )
    if not ranges:
        python_class = "[^\\x00-\\U0010ffff]" if not negate else "[\\x00-\\U0010ffff]"
    compiled = re.compile(python_class, re.IGNORECASE | re.DOTALL)
    sensitive = _case_sensitive_points()
    matching = [code for code in sensitive if compiled.fullmatch(chr(code))]
    if not negate:
        # (members that case folding cannot affect) + (sensitive characters Python accepts)
        kept = _without(ranges, sensitive)
        return _bracket(_normalise([*kept, *((c, c) for c in matching)]), negate=False)
    # Negated: refuse (members that folding cannot affect) + (sensitive characters Python refuses).
    accepted = set(matching)
    refused = [code for code in sensitive if code not in accepted]
    kept = _without(ranges, sensitive)
    return _bracket(_normalise([*kept, *((c, c) for c in refused)]), negate=True)


class _Writer:
    def __init__(self, options: str) -> None:
        self.ignorecase = "i" in options
        self.multiline = "m" in options
        self.dotall = "s" in options

    def sequence(self, items: Iterable[tuple[Any, Any]]) -> str:
        return "".join(self.item(op, av) for op, av in items)

    def item(self, op: Any, av: Any) -> str:
        c = sre_constants
        if op is c.LITERAL:
            return self.char_class(((av, av),), negate=False)
        if op is c.NOT_LITERAL:
            return self.char_class(((av, av),), negate=True)
        if op is c.ANY:
            return _ANY if self.dotall else _bracket([(_NEWLINE, _NEWLINE)], negate=True)
        if op is c.IN:
            return self.in_class(av)
        if op is c.BRANCH:
            return "(?:" + "|".join(self.sequence(branch) for branch in av[1]) + ")"
        if op is c.SUBPATTERN:
            _group, add_flags, del_flags, pattern = av
            if add_flags or del_flags:
                raise RegexTranslationError("inline flags are not portable")
            return "(?:" + self.sequence(pattern) + ")"
        if op is c.MAX_REPEAT:
            low, high, pattern = av
            return "(?:" + self.sequence(pattern) + ")" + self.quantifier(low, high)
        if op is c.AT:
            if av is c.AT_BEGINNING:
                return "(?:^|(?<=\\u000a))" if self.multiline else "^"
            if av is c.AT_END:
                return "(?=\\u000a|$)" if self.multiline else "(?=\\u000a?$)"
        raise RegexTranslationError(f"no portable translation for {op} {av!r}")

    @staticmethod
    def quantifier(low: int, high: int) -> str:
        unbounded = high is sre_constants.MAXREPEAT or high == sre_constants.MAXREPEAT
        if (low, unbounded) == (0, True):
            return "*"
        if (low, unbounded) == (1, True):
            return "+"
        if (low, high) == (0, 1):
            return "?"
        if unbounded:
            return f"{{{low},}}"
        return f"{{{low}}}" if low == high else f"{{{low},{high}}}"

    def in_class(self, items: Sequence[tuple[Any, Any]]) -> str:
        c = sre_constants
        negate = False
        ranges: list[tuple[int, int]] = []
        for op, av in items:
            if op is c.NEGATE:
                negate = True
            elif op is c.LITERAL:
                ranges.append((av, av))
            elif op is c.RANGE:
                ranges.append((av[0], av[1]))
            else:
                raise RegexTranslationError(f"no portable translation for the class item {op} {av!r}")
        return self.char_class(_normalise_keep_nul(ranges), negate)

    def char_class(self, ranges: Ranges, negate: bool) -> str:
        if self.ignorecase:
            return _ignorecase_bracket(_normalise(ranges), negate)
        return _bracket(_normalise(ranges), negate)


def _normalise_keep_nul(ranges: Iterable[tuple[int, int]]) -> Ranges:
    return tuple(sorted(ranges))


@cache
def to_are(pattern: str, options: str = "") -> str:
    """The ARE (for PostgreSQL's ``~``) that matches a string exactly when ``re.search`` does.

    ``pattern`` must already be in the portable subset (the core validated it) and ``options`` a
    subset of ``ims``. Raises RegexTranslationError for anything else.
    """
    try:
        parsed = sre_parse.parse(pattern, 0)
    except re.error as exc:
        raise RegexTranslationError(f"invalid regular expression: {exc}") from exc
    writer = _Writer(options)
    return writer.sequence(parsed)
