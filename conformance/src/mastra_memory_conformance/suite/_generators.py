"""Hypothesis strategies of the differential domain: hostile metadata and filters a manifest declares.

:class:`Features` reads what a target supports from its manifest: the declared operators (native or
emulated) and the declared deviations that restrict what may be written (``string-list-only``,
``nested-flattened``, ``nul-character-rejected``, ``int64-range``) or filtered (``no-string-ranges``).
:func:`metadata` and :func:`filters` then build only records the target accepts and filters whose every
operator it declares, so each generated filter must match the reference evaluator exactly.

Field names and values are adversarial: quotes, backslashes, SQL (``'; --``), ``$`` inside a name,
brackets and wildcards, unicode (accents, emoji, right-to-left scripts), JSON fragments, a 200-character
key, a newline. Dots are path separators, so no key contains one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, TypeVar

from hypothesis import strategies as st

from mastra_memory.capabilities import AdapterCapabilities
from mastra_memory.filters.operators import RANGE

from . import INT64_MAX, declares

__all__ = [
    "HOSTILE",
    "KEYS",
    "PATTERNS",
    "PRODUCTS",
    "STRINGS",
    "Features",
    "Vocabulary",
    "filters",
    "metadata",
    "paths_in",
    "scalars",
    "values_in",
]

KEYS: Final = (
    "a",
    "b",
    "tags",
    "it'em",
    'qu"ote',
    "back\\slash",
    "'; DROP TABLE x; --",
    "d$ollar",
    "br[ack]et",
    "st*ar",
    "per%cent",
    "é",
    "😀",
    "שלום",
    "مرحبا",
    '{"a":1}',
    "k" * 200,
    "new\nline",
    "sp ace",
)
STRINGS: Final = (
    "",
    "a",
    "b",
    "A",
    "ab",
    "ba",
    "apple",
    "Ab",
    "'; DROP TABLE x; --",
    "' OR '1'='1",
    '{"a":1}',
    "[1, 2]",
    "null",
    "true",
    "é",
    "e\u0301",
    "😀",
    "שלום",
    'a"b',
    "back\\slash",
    "%",
    "_",
    "$x",
    "line\nbreak",
    "2024-01-01T00:00:00.000Z",
    "2024-06-01T12:30:00.000Z",
)
NUMBERS: Final = (-2, -1, 0, 1, 2, 3, 0.5, -1.5, 2.0, 1e300, -(2**53 - 1), 2**53 - 1, INT64_MAX)
#: Half the keys and values are drawn from these few, so filters and records meet often enough for most
#: filters to match some records and miss others.
COMMON_KEYS: Final = ("a", "it'em", "😀")
COMMON_VALUES: Final = (None, True, 1, 1.0, 2, "a", "b", "'; DROP TABLE x; --", "😀")
#: Values only a target without the matching declared deviation is given.
NUL_STRING: Final = "nul\x00char"
HUGE_INT: Final = 2**64 + 1
PATTERNS: Final = (
    "a",
    "^a",
    "b$",
    "a|b",
    "[a-c]",
    "[^a]",
    "^$",
    ".",
    "A",
    "\\\\",
    '"',
    "'",
    "é",
    "(ab)+",
    "^.*e$",
    "\\[",
    "😀",
)
_REGEX_OPTIONS: Final = ("", "i", "m", "s", "ims")


@dataclass(frozen=True)
class Vocabulary:
    """The keys, values and patterns generated records and filters are made of.

    Half the keys and values are drawn from the ``common_*`` few, so filters and records meet often
    enough for most filters to match some records and miss others. ``hostile`` adds a NUL string and
    integers beyond int64 where the target does not declare that it rejects them.
    """

    keys: tuple[str, ...]
    common_keys: tuple[str, ...]
    strings: tuple[str, ...]
    numbers: tuple[int | float, ...]
    common_values: tuple[Any, ...]
    patterns: tuple[str, ...]
    hostile: bool = False
    #: Filter paths to use instead of random dotted combinations of ``keys``.
    paths: tuple[str, ...] = ()
    #: Paths and scalars found in the records of the example (:meth:`meeting`), drawn besides the others.
    found_paths: tuple[str, ...] = ()
    found_values: tuple[Any, ...] = ()

    def meeting(self, records: Sequence[Mapping[str, Any]]) -> Vocabulary:
        """This vocabulary, with the paths (:func:`paths_in`) and scalars (:func:`values_in`) of
        ``records`` for filters to meet."""
        return replace(self, found_paths=paths_in(records), found_values=values_in(records))


def paths_in(records: Sequence[Mapping[str, Any]], depth: int = 3) -> tuple[str, ...]:
    """The dotted paths of up to ``depth`` segments that reach a value in some record, crossing lists of
    documents as docs/spec.md §2.4 does; sorted, so that a drawn path replays from its seed."""
    found: set[str] = set()

    def walk(value: Any, prefix: tuple[str, ...]) -> None:
        if isinstance(value, Mapping) and len(prefix) < depth:
            for key, inner in value.items():
                found.add(".".join((*prefix, key)))
                walk(inner, (*prefix, key))
        elif isinstance(value, list) and prefix:
            for element in value:
                if isinstance(element, Mapping):
                    walk(element, prefix)

    for record in records:
        walk(record, ())
    return tuple(sorted(found))


def values_in(records: Sequence[Mapping[str, Any]]) -> tuple[Any, ...]:
    """The distinct scalars of ``records`` in the order met (``1``, ``1.0`` and ``True`` all kept)."""
    found: dict[tuple[type, Any], Any] = {}
    pending: list[Any] = list(reversed(records))
    while pending:
        value = pending.pop()
        if isinstance(value, Mapping):
            pending.extend(reversed(list(value.values())))
        elif isinstance(value, list):
            pending.extend(reversed(value))
        else:
            found.setdefault((type(value), value), value)
    return tuple(found.values())


T = TypeVar("T")

#: Adversarial names and values for random records.
HOSTILE: Final = Vocabulary(KEYS, COMMON_KEYS, STRINGS, NUMBERS, COMMON_VALUES, PATTERNS, hostile=True)
#: The words of the §8.1 products, for random filters over D9 (docs/spec.md §8.4).
PRODUCTS: Final = Vocabulary(
    keys=(
        "name", "price", "rating", "category", "tags", "available", "description", "reviews", "score",
        "author",
    ),
    common_keys=("price", "category", "tags", "available"),
    strings=(
        "Product A", "Product H", "electronics", "home", "books", "test", "sale", "new", "premium",
        "featured", "luxury", "Classic novel", "novel", "user1", "user3", "",
    ),
    numbers=(0, 3, 4, 5, 10, 10.0, 25, 30, 4.5, 4.9, 50, 75, 100, 200, 4.95),
    common_values=(None, True, False, "home", "sale", 50, 4.5),
    patterns=("^Product [A-C]", "o", "^e", "s$", "NOV", "[0-9]", "user(1|3)", "^$", "."),
    paths=(
        "name", "price", "rating", "category", "tags", "available", "description", "reviews",
        "reviews.score", "reviews.author", "extra",
    ),
)  # fmt: skip


@dataclass(frozen=True)
class Features:
    """What a target accepts, read from its manifest."""

    operators: frozenset[str]
    nested_documents: bool
    non_string_lists: bool
    string_ranges: bool
    nul_strings: bool
    huge_integers: bool

    @classmethod
    def of(cls, capabilities: AdapterCapabilities) -> Features:
        return cls(
            operators=capabilities.supported_operators,
            nested_documents=not declares(capabilities, "nested-flattened"),
            non_string_lists=not declares(capabilities, "string-list-only"),
            string_ranges=not declares(capabilities, "no-string-ranges"),
            nul_strings=not declares(capabilities, "nul-character-rejected"),
            huge_integers=not declares(capabilities, "int64-range"),
        )

    def has(self, *operators: str) -> bool:
        return all(op in self.operators for op in operators)


def _one_of_found(found: tuple[T, ...]) -> st.SearchStrategy[T]:
    """``sampled_from(found)`` drawn by position: these are built per example, and hypothesis renders a
    strategy's repr (here the whole tuple, tens of kB across a filter strategy) as it draws."""
    return st.integers(0, len(found) - 1).map(found.__getitem__)


def _strings(features: Features, vocabulary: Vocabulary) -> st.SearchStrategy[str]:
    extra = (NUL_STRING,) if vocabulary.hostile and features.nul_strings else ()
    return st.sampled_from((*vocabulary.strings, *extra))


def _numbers(features: Features, vocabulary: Vocabulary) -> st.SearchStrategy[int | float]:
    extra = (HUGE_INT, -HUGE_INT) if vocabulary.hostile and features.huge_integers else ()
    return st.sampled_from((*vocabulary.numbers, *extra))


def scalars(features: Features, vocabulary: Vocabulary = HOSTILE) -> st.SearchStrategy[Any]:
    """Null, booleans, numbers (ints and floats that are equal, 2^53 − 1, int64 bounds) and strings."""
    every = st.one_of(
        st.sampled_from((None, True, False)), _numbers(features, vocabulary), _strings(features, vocabulary)
    )
    if vocabulary.found_values:
        return st.one_of(
            st.sampled_from(vocabulary.common_values), _one_of_found(vocabulary.found_values), every
        )
    return st.one_of(st.sampled_from(vocabulary.common_values), every)


def _keys(features: Features, vocabulary: Vocabulary) -> st.SearchStrategy[str]:
    extra = ("nul\x00key",) if vocabulary.hostile and features.nul_strings else ()
    return st.one_of(st.sampled_from(vocabulary.common_keys), st.sampled_from((*vocabulary.keys, *extra)))


def metadata(features: Features, vocabulary: Vocabulary = HOSTILE) -> st.SearchStrategy[dict[str, Any]]:
    """Metadata documents of the kinds the target stores: scalars, lists, nested documents."""
    leaves = scalars(features, vocabulary)
    keys = _keys(features, vocabulary)

    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        options: list[st.SearchStrategy[Any]] = []
        if features.non_string_lists:
            options.append(st.lists(inner, max_size=3))
        else:
            options.append(st.lists(_strings(features, vocabulary), max_size=3))
        if features.nested_documents:
            options.append(st.dictionaries(keys, inner, max_size=3))
        if features.nested_documents and features.non_string_lists:
            # Lists of documents sharing the common keys, so that a path through them (docs/spec.md §2.4)
            # meets several elements with different values: there a negation decided per element and one
            # decided over the whole path differ (§8.2 #49). Random dictionaries alone rarely share keys.
            row_keys = st.sampled_from(vocabulary.common_keys)
            rows = st.dictionaries(row_keys, st.one_of(leaves, inner), min_size=1, max_size=2)
            options.append(st.lists(rows, min_size=2, max_size=3))
        return st.one_of(options)

    values = st.recursive(leaves, extend, max_leaves=8)
    return st.dictionaries(keys, values, min_size=2, max_size=5)


def _segments(vocabulary: Vocabulary) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(vocabulary.common_keys), st.sampled_from(vocabulary.keys))


def _paths(features: Features, vocabulary: Vocabulary) -> st.SearchStrategy[str]:
    if vocabulary.paths:
        return st.one_of(st.sampled_from(vocabulary.common_keys), st.sampled_from(vocabulary.paths))
    segments = _segments(vocabulary)
    if not (features.nested_documents or features.non_string_lists):
        drawn = segments
    else:
        drawn = st.one_of(segments, st.lists(segments, min_size=2, max_size=3).map(".".join))
    if vocabulary.found_paths:
        # Half the paths exist in the records: a random dotted path rarely reaches into a list of
        # documents, where the array rules of docs/spec.md §2.4 are decided.
        return st.one_of(drawn, _one_of_found(vocabulary.found_paths))
    return drawn


def _merge(documents: list[dict[str, Any]]) -> dict[str, Any]:
    return {k: v for d in documents for k, v in d.items()}


def _operator_documents(
    features: Features, vocabulary: Vocabulary, documents: st.SearchStrategy[dict[str, Any]] | None
) -> st.SearchStrategy[dict[str, Any]]:
    """``{"$op": operand, ...}`` over one field, from the declared operators only."""
    values = scalars(features, vocabulary)
    lists = st.lists(values, max_size=4)
    numbers = _numbers(features, vocabulary)
    ranges = st.one_of(numbers, _strings(features, vocabulary)) if features.string_ranges else numbers
    builders: dict[str, st.SearchStrategy[dict[str, Any]]] = {
        "$eq": st.builds(lambda v: {"$eq": v}, values),
        "$ne": st.builds(lambda v: {"$ne": v}, values),
        "$in": st.builds(lambda v: {"$in": v}, lists),
        "$nin": st.builds(lambda v: {"$nin": v}, lists),
        "$all": st.builds(lambda v: {"$all": v}, lists),
        "$size": st.builds(lambda n: {"$size": n}, st.integers(0, 3)),
        "$exists": st.builds(lambda b: {"$exists": b}, st.booleans()),
        "$contains": st.builds(lambda v: {"$contains": v}, values),
        "$regex": st.builds(
            lambda p, o: {"$regex": p, "$options": o} if o else {"$regex": p},
            st.sampled_from(vocabulary.patterns),
            st.sampled_from(_REGEX_OPTIONS),
        ),
    }
    for op in sorted(RANGE):
        builders[op] = st.builds(lambda v, op=op: {op: v}, ranges)
    if documents is not None:
        builders["$elemMatch"] = st.builds(lambda d: {"$elemMatch": d}, documents.filter(_reads_as_document))
    single = st.one_of([s for op, s in builders.items() if features.has(op)] or [st.nothing()])
    forms = [single]
    if features.has("$and"):  # several operators on one field are an implicit AND
        forms.append(st.lists(single, min_size=2, max_size=2).map(_merge))
    value_form = st.one_of(forms)
    if features.has("$not"):
        return st.one_of(value_form, st.builds(lambda d: {"$not": d}, value_form))
    return value_form


def _reads_as_document(doc: Mapping[str, Any]) -> bool:
    """Whether ``$elemMatch`` reads ``doc`` as fields of object elements (a lone ``$not`` over operators
    would make it an operator document with a root ``$not``, which is invalid)."""
    if list(doc) != ["$not"]:
        return True
    return not all(k.startswith("$") for k in doc["$not"])


def filters(features: Features, vocabulary: Vocabulary = HOSTILE) -> st.SearchStrategy[dict[str, Any]]:
    """Random valid filters using only declared operators (and none at all when nothing is declared)."""
    values = scalars(features, vocabulary)
    paths = _paths(features, vocabulary)
    leaf_forms: list[st.SearchStrategy[Any]] = []
    if features.has("$eq"):
        leaf_forms.append(values)
    if features.has("$in"):
        leaf_forms.append(st.lists(values, max_size=4))
    no_documents: st.SearchStrategy[dict[str, Any]] | None = None
    leaf_forms.append(_operator_documents(features, vocabulary, no_documents))
    base = st.builds(lambda p, c: {p: c}, paths, st.one_of(leaf_forms))

    def extend(documents: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        condition = st.one_of(*leaf_forms, _operator_documents(features, vocabulary, documents))
        field = st.builds(lambda p, c: {p: c}, paths, condition)
        options: list[st.SearchStrategy[dict[str, Any]]] = [field]
        if features.nested_documents:
            options.append(st.builds(lambda a, b, c: {a: {b: c}}, _segments(vocabulary), paths, condition))
        if features.has("$and"):
            options.append(st.lists(field, min_size=2, max_size=3).map(_merge))
        children = st.lists(documents, min_size=1, max_size=3)
        for op in ("$and", "$or", "$nor"):
            if features.has(op):
                options.append(st.builds(_logical(op), children))
        if features.has("$not"):
            options.append(st.builds(lambda d: {"$not": d}, documents))
        return st.one_of(options)

    # Half the filters are one field condition, where one operator's mistake cannot hide behind others.
    single = st.builds(lambda p, c: {p: c}, paths, _operator_documents(features, vocabulary, base))
    return st.one_of(single, st.recursive(base, extend, max_leaves=6))


def _logical(op: str) -> Callable[[list[dict[str, Any]]], dict[str, Any]]:
    def build(children: list[dict[str, Any]]) -> dict[str, Any]:
        return {op: children}

    return build
