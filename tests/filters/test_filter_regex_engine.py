"""The linear-time ``$regex`` engine answers exactly what ``re.search`` answers (docs/spec.md §2.5).

A differential test over generated portable patterns × strings (newlines, case variants, Unicode case
folding corners, lone surrogates) with every combination of ``$options``, plus fixed corner cases for
the anchors, empty loops and classes. The patterns stay small so that ``re`` itself — the oracle, and a
backtracking engine — finishes quickly on them.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from mastra_memory.errors import FilterError
from mastra_memory.filters import compile_regex, regex_problems
from mastra_memory.filters.regex import PortableRegex

_FLAG = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}
_OPTIONS = ["", "i", "m", "s", "im", "is", "ms", "ims"]

# Characters whose case folding is not plain ASCII: long s, Kelvin sign, dotless/dotted i, sharp s,
# final sigma, micro sign, plus an astral character and a lone surrogate.
_TEXT_CHARS = [
    "a", "b", "A", "B", "s", "S", "k", "K", "i", "I", "\u017f", "\u212a", "\u0131", "\u0130", "ß",
    "\u1e9e", "σ", "Σ", "ς", "µ", "μ", "é", "É", "\n", "\r", " ", "-", "]", ".", "😀", "\ud800",
]  # fmt: skip
_LITERALS = [
    "a", "b", "A", "s", "k", "K", "\u017f", "\u212a", "\u0131", "ß", "σ", "µ", "é", "\n", " ", "]", "}", "-",
    "😀", "\ud800",
]  # fmt: skip
_ESCAPES = [
    "\\.", "\\*", "\\\\", "\\(", "\\)", "\\[", "\\]", "\\{", "\\}", "\\|", "\\^", "\\$", "\\-",
    "\\ ", "\\\n", "\\+", "\\?",
]  # fmt: skip
_CLASS_ITEMS = [
    "a", "b", "A", "s", "K", "\u017f", "é", "\n", ".", "$", "^", "a-c", "A-Z", "A-z", "é-ê", "k-k",
    "\\]", "\\-", "\\\\", "-",
]  # fmt: skip

_class = st.builds(
    lambda negated, items: "[" + ("^" if negated else "") + "".join(items) + "]",
    st.booleans(),
    st.lists(st.sampled_from(_CLASS_ITEMS), min_size=1, max_size=3),
).filter(lambda c: not c.startswith(("[]", "[^]")))
_char_atom = st.one_of(st.sampled_from(_LITERALS), st.sampled_from(_ESCAPES), st.just("."), _class)
_quantifier = st.sampled_from(["", "", "*", "+", "?"])
_base = st.one_of(
    st.builds(lambda atom, q: atom + q, _char_atom, _quantifier),
    st.sampled_from(["^", "$", ""]),
)


def _extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.lists(children, min_size=2, max_size=4).map("".join),
        st.lists(children, min_size=2, max_size=3).map("|".join),
        st.builds(lambda inner, q: f"({inner}){q}", children, _quantifier),
    )


_patterns = st.recursive(_base, _extend, max_leaves=8)
_texts = st.lists(st.sampled_from(_TEXT_CHARS), max_size=10).map("".join)


def _flags(options: str) -> int:
    flags = 0
    for letter in options:
        flags |= _FLAG[letter]
    return flags


def _agrees(pattern: str, text: str, options: str) -> None:
    expected = re.search(pattern, text, _flags(options)) is not None
    assert (compile_regex(pattern, options).search(text) is not None) is expected, (pattern, text, options)


@settings(max_examples=10 * settings().max_examples)
@given(pattern=_patterns, texts=st.lists(_texts, min_size=1, max_size=5), options=st.sampled_from(_OPTIONS))
@example(pattern="(a+)+$", texts=["aaaa!", "aaaa", "aaaa\n", "\n"], options="")
@example(pattern="s", texts=["\u017f", "S"], options="i")
@example(pattern="[A-z]", texts=["\u212a", "_", "\u017f"], options="i")
@example(pattern="(^|a)+$", texts=["a\na", "b\n"], options="m")
@example(pattern="()*(|a)*b", texts=["ab", ""], options="")
def test_the_engine_agrees_with_re_search(pattern: str, texts: list[str], options: str) -> None:
    assume(regex_problems(pattern) == [])
    for text in texts:
        _agrees(pattern, text, options)


@pytest.mark.parametrize("options", _OPTIONS)
@pytest.mark.parametrize(
    "pattern",
    [
        "^", "$", "^$", "a$", "^a", "$a", "a^", "(^)*a", "(a|^)b", "b(a|$)", "x(^)?y", "($)+", "(^a|b)+c",
        ".$", "[^a]$", "^.*$", "(a*)*b", "(|a)+$", "a|", "|", "()", "(((a)))?$", "\\\n$", "ß", "[ß]",
        "\u0130", "[^\n]+",
    ],
)  # fmt: skip
@pytest.mark.parametrize(
    "text", ["", "a", "\n", "a\n", "\na", "a\n\n", "ab\nb", "ba\n", "xy", "SS", "ss", "i\u0307"]
)
def test_anchor_and_loop_corners_agree_with_re_search(pattern: str, text: str, options: str) -> None:
    _agrees(pattern, text, options)


def test_long_texts_agree_with_re_search_and_reuse_the_cache() -> None:
    text = ("spam and eggs\n" * 500) + "the end"
    for pattern in ["eggs$", "^the", "end$", "(spam|ham)+ and", "[^a-z \n]", "x|y|z", "^$"]:
        for options in _OPTIONS:
            _agrees(pattern, text, options)


def test_a_full_dfa_cache_starts_over_and_stays_exact() -> None:
    # (a|b)*a(a|b){12}: a DFA of 2**13 states, far above the cache bound, over a text that exercises them.
    pattern = "(a|b)*a" + "(a|b)" * 12 + "c"
    text = "".join("ab"[(i * 7919) % 31 % 2] for i in range(5_000))
    for candidate in (text, text + "c", text[:-13] + "a" * 13 + "c"):
        _agrees(pattern, candidate, "")


def test_compile_regex_returns_the_linear_engine_and_validates() -> None:
    assert isinstance(compile_regex("a+", "i"), PortableRegex)
    with pytest.raises(FilterError) as info:
        compile_regex("\\d")
    assert info.value.problems == ["Unsupported regex construct: \\d"]
    with pytest.raises(TypeError):
        compile_regex("a").search(b"a")  # type: ignore[arg-type]
