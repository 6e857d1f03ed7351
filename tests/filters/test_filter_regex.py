"""The portable regex subset of docs/spec.md §2.5: what passes, what is rejected and how it is named."""

from __future__ import annotations

import pytest

from mastra_memory.errors import FilterError
from mastra_memory.filters import compile_regex, evaluate, parse, regex_problems
from mastra_memory.filters.regex import normalise_options, option_problems


@pytest.mark.parametrize(
    "pattern",
    [
        "",
        "abc",
        "a.c",
        "^a$",
        "a*b+c?",
        "a|b|",
        "(ab)+",
        "((a|b)c)*",
        "[a-z]",
        "[^0-9]",
        "[a-zA-Z_]+",
        "[.*+?|()]",
        "\\.",
        "\\*\\+\\?",
        "\\\\",
        "\\(x\\)",
        "\\[\\]\\{\\}",
        "\\^\\$\\|",
        "\\-\\/\\'",
        "[\\]a]",
        "[a\\-z]",
        "[\\\\]",
        "a]",
        "a}",
        "é+ü",
        "line\nbreak",
        "^Product [A-C]",
    ],
)
def test_portable_constructs_pass(pattern: str) -> None:
    assert regex_problems(pattern) == []
    assert parse({"s": {"$regex": pattern}}) is not None


@pytest.mark.parametrize(
    ("pattern", "construct"),
    [
        ("(?i)abc", "(?i)"),
        ("(?ims)abc", "(?ims)"),
        ("(?i:abc)", "(?i:"),
        ("(?:ab)+", "(?:"),
        ("a(?=b)", "(?="),
        ("a(?!b)", "(?!"),
        ("(?<=a)b", "(?<="),
        ("(?<!a)b", "(?<!"),
        ("(?P<name>a)", "(?P<name>"),
        ("(a)(?P=n)", "(?P=n)"),
        ("(?#comment)a", "(?#"),
        ("(?>a+)", "(?>"),
        ("(a)\\1", "\\1"),
        ("a{2}", "{2}"),
        ("a{2,3}", "{2,3}"),
        ("a{,3}", "{,3}"),
        ("a{2,}", "{2,}"),
        ("a{b", "{"),
        ("\\d+", "\\d"),
        ("\\D", "\\D"),
        ("\\w", "\\w"),
        ("\\W", "\\W"),
        ("\\s", "\\s"),
        ("\\S", "\\S"),
        ("\\bword", "\\b"),
        ("\\B", "\\B"),
        ("\\Astart", "\\A"),
        ("end\\Z", "\\Z"),
        ("\\n", "\\n"),
        ("\\t", "\\t"),
        ("\\x41", "\\x"),
        ("\\u00e9", "\\u"),
        ("\\0", "\\0"),
        ("a*?", "*?"),
        ("a+?", "+?"),
        ("a??", "??"),
        ("a*+", "*+"),
        ("a++", "++"),
        ("[\\d]", "\\d"),
        ("[a\\w]", "\\w"),
        ("[[:alpha:]]", "[:"),
        ("[]a]", "[]"),
        ("[^]a]", "[^]"),
        ("[a&&b]", "&&"),
        ("[a--b]", "--"),
        ("[a||b]", "||"),
        ("[a~~b]", "~~"),
    ],
)
def test_non_portable_constructs_are_named(pattern: str, construct: str) -> None:
    assert regex_problems(pattern) == [f"Unsupported regex construct: {construct}"]
    with pytest.raises(FilterError) as info:
        parse({"s": {"$regex": pattern}})
    assert info.value.problems == [f"Unsupported regex construct: {construct}"]


def test_every_construct_of_a_pattern_is_reported_once() -> None:
    assert regex_problems("(?i)\\d{2}\\d|(?:x)") == [
        "Unsupported regex construct: (?i)",
        "Unsupported regex construct: \\d",
        "Unsupported regex construct: {2}",
        "Unsupported regex construct: (?:",
    ]


@pytest.mark.parametrize("pattern", ["(ab", "ab)", "*a", "a**", "[a", "[z-a]", "a\\", "a|*"])
def test_patterns_that_do_not_compile_are_rejected(pattern: str) -> None:
    problems = regex_problems(pattern)
    assert len(problems) == 1
    assert problems[0].startswith(f"Unsupported regex construct: {pattern} (invalid regular expression: ")


@pytest.mark.parametrize("options", ["", "i", "m", "s", "ims", "smi", "ii"])
def test_options_i_m_s_are_accepted(options: str) -> None:
    assert option_problems(options) == []
    node = parse({"s": {"$regex": "a", "$options": options}})
    assert node is not None


@pytest.mark.parametrize(
    ("options", "problems"),
    [
        ("x", ["Unsupported regex option: x"]),
        ("u", ["Unsupported regex option: u"]),
        ("g", ["Unsupported regex option: g"]),
        ("I", ["Unsupported regex option: I"]),
        ("ixgx", ["Unsupported regex option: x", "Unsupported regex option: g"]),
    ],
)
def test_other_options_are_rejected(options: str, problems: list[str]) -> None:
    assert option_problems(options) == problems
    with pytest.raises(FilterError) as info:
        parse({"s": {"$regex": "a", "$options": options}})
    assert info.value.problems == problems


@pytest.mark.parametrize(("options", "canonical"), [("", ""), ("smi", "ims"), ("ii", "i"), ("ms", "ms")])
def test_options_are_normalised(options: str, canonical: str) -> None:
    assert normalise_options(options) == canonical


@pytest.mark.parametrize(
    ("flt", "value", "expected"),
    [
        ({"$regex": "an"}, "Banana", True),
        ({"$regex": "^an"}, "Banana", False),  # unanchored search, but ^ still anchors
        ({"$regex": "BAN"}, "Banana", False),
        ({"$regex": "BAN", "$options": "i"}, "Banana", True),
        ({"$regex": "^b$"}, "a\nb", False),
        ({"$regex": "^b$", "$options": "m"}, "a\nb", True),
        ({"$regex": "a.b"}, "a\nb", False),  # . does not match a newline (pg's does: adapters must not)
        ({"$regex": "a.b", "$options": "s"}, "a\nb", True),
        ({"$regex": "é"}, "café", True),
        ({"$regex": "\\."}, "a.b", True),
        ({"$regex": "\\."}, "ab", False),
        ({"$regex": "[^0-9]"}, "123", False),
    ],
)
def test_regex_semantics_are_pythons(flt: dict[str, str], value: str, expected: bool) -> None:
    assert evaluate({"s": flt}, {"s": value}) is expected


def test_compiled_patterns_are_cached() -> None:
    first = compile_regex("b[a-z]+", "i")
    assert compile_regex("b[a-z]+", "i") is first
    assert compile_regex("b[a-z]+", "") is not first


def test_hand_built_nodes_with_bad_options_are_rejected() -> None:
    with pytest.raises(FilterError) as info:
        compile_regex("a", "x")
    assert info.value.problems == ["Unsupported regex option: x"]
