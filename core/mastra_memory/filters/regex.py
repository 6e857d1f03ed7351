"""The portable regular-expression subset of ``$regex`` (docs/spec.md §2.5) and its compiled-pattern cache.

Allowed: literal characters, escaped punctuation (``\\.`` ``\\*`` ``\\\\`` ...), ``.``, bracket classes
(``[a-z]``, ``[^0-9]``), ``^``, ``$``, the greedy quantifiers ``*`` ``+`` ``?``, alternation ``|`` and plain
groups ``( ... )``. Everything else is rejected because at least one backend reads it differently:
inline flags, lookaround, backreferences, named or non-capturing groups, counted repetition, shorthand
classes such as ``\\d``, lazy or possessive quantifiers, and nested set syntax inside brackets. Patterns
are also bounded (:mod:`.limits`): at most ``MAX_REGEX_LENGTH`` characters and ``MAX_REGEX_NESTING`` levels
of groups (deeper nesting makes ``re.compile`` itself raise ``RecursionError``).

The linear-time matcher that evaluates these patterns is :mod:`.regex_engine`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..errors import FilterError
from .limits import MAX_REGEX_LENGTH, MAX_REGEX_NESTING
from .regex_engine import PortableRegex

#: The letters ``$options`` may contain, in canonical order.
REGEX_OPTIONS = "ims"

_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}
_QUANTIFIERS = frozenset("*+?")
# Character pairs that Python reads as (future) nested set operations and Java/Lucene as intersection.
_SET_OPERATIONS = ("&&", "--", "||", "~~")


def _construct(text: str) -> str:
    return f"Unsupported regex construct: {text}"


def _group_extension(pattern: str, start: int) -> str:
    """The text of a ``(?...`` construct starting at ``start``, for the error message."""
    rest = pattern[start + 2 :]
    if rest[:1] in ("=", "!", ":", "#", ">", "|"):
        return pattern[start : start + 3]
    if rest[:2] in ("<=", "<!"):
        return pattern[start : start + 4]
    if rest[:1] in ("P", "<", "'"):
        end = min((i for i in (pattern.find(">", start), pattern.find(")", start)) if i != -1), default=-1)
        return pattern[start : end + 1] if end != -1 else pattern[start:]
    end = min((i for i in (pattern.find(")", start), pattern.find(":", start)) if i != -1), default=-1)
    return pattern[start : end + 1] if end != -1 else pattern[start:]


def _scan_class(pattern: str, start: int, problems: list[str]) -> int:
    """Check the bracket class opening at ``start``; return the index just after its closing ``]``."""
    i = start + 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):
        # ``[]a]`` is a class of ``]`` and ``a`` in Python and POSIX but an empty class in others.
        problems.append(_construct(pattern[start : i + 1]))
        i += 1
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "]":
            return i + 1
        if c == "\\":
            escaped = pattern[i + 1 : i + 2]
            if escaped.isalnum() or escaped == "":
                problems.append(_construct(pattern[i : i + 2]))
            i += 2
            continue
        if c == "[":
            # POSIX classes ([:alpha:]), equivalence classes and nested sets are not portable.
            problems.append(_construct(pattern[i : i + 2]))
        elif pattern[i : i + 2] in _SET_OPERATIONS:
            problems.append(_construct(pattern[i : i + 2]))
            i += 2
            continue
        i += 1
    return n  # unterminated: re.compile reports it


def regex_problems(pattern: str) -> list[str]:
    """Every reason ``pattern`` is outside the portable subset or does not compile (empty if fine)."""
    if len(pattern) > MAX_REGEX_LENGTH:
        return [
            f"Regex pattern too long: {len(pattern):,} characters (limit {MAX_REGEX_LENGTH:,}); "
            "use a shorter pattern"
        ]
    problems: list[str] = []
    depth = deepest = 0
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            escaped = pattern[i + 1 : i + 2]
            # Escaped punctuation is a literal everywhere; escaped letters and digits are shorthand
            # classes, anchors, backreferences or control escapes whose meaning differs per engine.
            if escaped.isalnum():
                problems.append(_construct(pattern[i : i + 2]))
            i += 2
            continue
        if c == "[":
            i = _scan_class(pattern, i, problems)
            continue
        if c == "(":
            if pattern.startswith("?", i + 1):
                text = _group_extension(pattern, i)
                problems.append(_construct(text))
                i += len(text)
                if text.endswith(")"):
                    continue  # a self-contained construct such as ``(?i)`` opens no group
            else:
                i += 1
            depth += 1
            deepest = max(deepest, depth)
            continue
        if c == ")":
            depth = max(depth - 1, 0)
        elif c == "{":
            end = pattern.find("}", i)
            problems.append(_construct(pattern[i : end + 1] if end != -1 else c))
            i = end + 1 if end != -1 else i + 1
            continue
        elif c in _QUANTIFIERS and pattern[i + 1 : i + 2] in ("?", "+"):
            problems.append(_construct(pattern[i : i + 2]))
            i += 2
            continue
        i += 1
    if deepest > MAX_REGEX_NESTING:
        problems.append(
            f"Regex nested too deeply: {deepest} levels of groups (limit {MAX_REGEX_NESTING}); "
            "remove redundant parentheses"
        )
    if not problems:
        try:
            re.compile(pattern)
        except re.error as exc:
            problems.append(_construct(f"{pattern} (invalid regular expression: {exc})"))
    return list(dict.fromkeys(problems))


def option_problems(options: str) -> list[str]:
    """One problem per distinct letter of ``options`` outside ``i``, ``m``, ``s``."""
    bad = dict.fromkeys(c for c in options if c not in REGEX_OPTIONS)
    return [f"Unsupported regex option: {c}" for c in bad]


def normalise_options(options: str) -> str:
    """The canonical spelling of valid options: each letter once, in the order ``ims``."""
    return "".join(c for c in REGEX_OPTIONS if c in options)


@lru_cache(maxsize=128)
def compile_regex(pattern: str, options: str = "") -> PortableRegex:
    """The compiled, linear-time pattern for a validated ``$regex``/``$options`` pair (cached).

    ``compile_regex(p, o).search(text) is not None`` equals ``re.search(p, text, flags(o)) is not None``.

    Raises:
        FilterError: for a pattern outside the portable subset or an option letter outside ``ims`` (a
            hand-built ``Regex`` node can carry either).
    """
    problems = option_problems(options) + regex_problems(pattern)
    if problems:
        raise FilterError(problems)
    return PortableRegex(pattern, normalise_options(options))
