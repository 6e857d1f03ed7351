"""The shared test data of docs/spec.md §8 and the filter examples of §2.2/§2.3, as importable Python data.

Every test in the project — core, adapters, the conformance kit — reads its products, fixed filter cases
and sample records from here, so a number written in the spec is written once in code.

The data is stored frozen. ``Record.metadata`` and ``FilterCase.filter`` return fresh plain ``dict``/``list``
copies on every access, so a store or translator that mutates what it is given cannot corrupt another test.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Literal

#: Vector dimension the products use unless a target asks for another (targets MAY use 4 or 8).
DEFAULT_DIMENSION: Final = 1536
#: Seed of the query vector of §8.1; with ``QUERY_TOP_K`` every query returns exactly the matching set.
QUERY_SEED: Final = 0
QUERY_TOP_K: Final = 10

Dataset = Literal["D8", "D9"]


def make_vector(seed: int, dim: int = DEFAULT_DIMENSION) -> list[float]:
    """The §8.1 vector: component ``i < min(10, dim)`` is ``(seed + 0.1·i) / 10``, others 0; L2-normalised."""
    if dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim}")
    vector = [(seed + 0.1 * i) / 10 if i < 10 else 0.0 for i in range(dim)]
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else vector


def query_vector(dim: int = DEFAULT_DIMENSION) -> list[float]:
    """The §8.1 query vector (seed 0)."""
    return make_vector(QUERY_SEED, dim)


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


@dataclass(frozen=True)
class Record:
    """One vector record of a dataset: an id, the seed of its vector, and its metadata."""

    id: str
    seed: int
    frozen_metadata: Mapping[str, Any]

    @property
    def metadata(self) -> dict[str, Any]:
        """A fresh, mutable copy of the metadata."""
        result: dict[str, Any] = _thaw(self.frozen_metadata)
        return result

    def vector(self, dim: int = DEFAULT_DIMENSION) -> list[float]:
        """The record's vector in ``dim`` dimensions (§8.1)."""
        return make_vector(self.seed, dim)


def _record(id: str, seed: int, metadata: Mapping[str, Any]) -> Record:
    return Record(id, seed, _freeze(metadata))


# --- §8.1 products -------------------------------------------------------------------------------


def _product(
    letter: str,
    price: float | None,
    rating: float | None,
    category: str,
    tags: list[str],
    available: bool | None,
    **extra: Any,
) -> Record:
    metadata: dict[str, Any] = {"name": f"Product {letter}", "price": price}
    if rating is not None:
        metadata["rating"] = rating
    metadata["category"] = category
    metadata["tags"] = tags
    if available is not None:
        metadata["available"] = available
    metadata.update(extra)
    return _record(letter, ord(letter) - ord("A") + 1, metadata)


#: D8 = products A–H (seeds 1–8).
PRODUCTS_D8: Final[tuple[Record, ...]] = (
    _product("A", 10, 4.5, "electronics", ["new", "sale"], True),
    _product("B", 25, 3.8, "electronics", ["featured"], True),
    _product("C", 50, 4.9, "home", ["premium", "sale"], False),
    _product("D", 100, 4.2, "home", ["premium"], True),
    _product("E", 15, 3.5, "books", ["new"], True),
    _product("F", 75, 4.7, "electronics", ["featured", "premium"], True),
    _product(
        "G",
        30,
        4.1,
        "books",
        ["sale"],
        False,
        description="Classic novel",
        reviews=[{"score": 3, "author": "user1"}, {"score": 5, "author": "user2"}],
    ),
    _product(
        "H",
        200,
        4.95,
        "home",
        ["premium", "luxury"],
        True,
        reviews=[
            {"score": 5, "author": "user3"},
            {"score": 4, "author": "user4"},
            {"score": 5, "author": "user5"},
        ],
    ),
)
#: D9 = D8 + product I: price null, no rating, category "test", no tags (empty list), no "available".
PRODUCTS_D9: Final[tuple[Record, ...]] = (*PRODUCTS_D8, _product("I", None, None, "test", [], None))

D8_IDS: Final[frozenset[str]] = frozenset(r.id for r in PRODUCTS_D8)
D9_IDS: Final[frozenset[str]] = frozenset(r.id for r in PRODUCTS_D9)


def products(dataset: Dataset = "D9") -> tuple[Record, ...]:
    """The records of ``D8`` or ``D9``."""
    return PRODUCTS_D8 if dataset == "D8" else PRODUCTS_D9


# --- §8.2 fixed filter cases ---------------------------------------------------------------------


class _FrozenFilter:
    """A case that keeps its filter frozen and hands out ``filter``, a fresh, mutable copy of it."""

    frozen_filter: Any

    @property
    def filter(self) -> Any:
        """A fresh, mutable copy of the filter as the spec writes it (``None``: no filter)."""
        return _thaw(self.frozen_filter)


@dataclass(frozen=True)
class FilterCase(_FrozenFilter):
    """One row of docs/spec.md §8.2 (rows with two filters, #23 and #47, are two cases: ``23a``/``23b``).

    ``d8``/``d9`` are the expected ids on each dataset, or ``None`` when the filter must raise
    ``FilterError`` before any I/O. ``requires`` names capabilities the case needs (a target without them
    must raise ``UnsupportedFilterError`` instead).
    """

    number: int
    label: str
    frozen_filter: Any
    d8: frozenset[str] | None
    d9: frozenset[str] | None
    note: str = ""
    requires: frozenset[str] = frozenset()

    @property
    def raises_filter_error(self) -> bool:
        """Whether the core must reject the filter with ``FilterError``."""
        return self.d8 is None

    def expected(self, dataset: Dataset) -> frozenset[str]:
        """The expected ids on ``dataset``; a ``ValueError`` for a case that must raise."""
        ids = self.d8 if dataset == "D8" else self.d9
        if ids is None:
            raise ValueError(f"case {self.label} must raise FilterError; it has no expected ids")
        return ids


def _ids(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _case(
    label: str,
    filter: Any,
    d8: str | None,
    d9: str | None = None,
    note: str = "",
    requires: frozenset[str] = frozenset(),
) -> FilterCase:
    """``d9=None`` with a ``d8`` means "same as D8"; ``d8=None`` means the filter raises."""
    number = int(label.rstrip("ab"))
    d8_ids = None if d8 is None else _ids(d8)
    d9_ids = d8_ids if d9 is None else _ids(d9)
    return FilterCase(number, label, _freeze(filter), d8_ids, d9_ids, note, requires)


_ALL_D8 = "A B C D E F G H"
_ALL_D9 = _ALL_D8 + " I"

#: Every row of docs/spec.md §8.2, in order.
FILTER_CASES: Final[tuple[FilterCase, ...]] = (
    _case("1", {"price": {"$gt": 50}}, "D F H"),
    _case("2", {"price": {"$gte": 50}}, "C D F H"),
    _case("3", {"price": {"$lt": 30}}, "A B E"),
    _case("4", {"price": {"$lte": 30}}, "A B E G"),
    _case("5", {"price": {"$gte": 20, "$lte": 80}}, "B C F G"),
    _case("6", {"rating": {"$gte": 4.5}}, "A C F H"),
    _case("7", {"category": {"$ne": "electronics"}}, "C D E G H", "C D E G H I"),
    _case("8", {"available": {"$ne": True}}, "C G", "C G I", "Δ missing field matches"),
    _case("9", {"price": {"$ne": 50}}, "A B D E F G H", "A B D E F G H I", "Δ null matches"),
    _case("10", {"price": {"$not": {"$gt": 50}}}, "A B C E G", "A B C E G I", "Δ null matches"),
    _case("11", {"category": {"$in": ["electronics", "books"]}}, "A B E F G"),
    _case("12", {"category": {"$nin": ["electronics", "books"]}}, "C D H", "C D H I"),
    _case("13", {"price": {"$in": [10, 25, 50]}}, "A B C"),
    _case("14", {"price": {"$in": [10.0]}}, "A", note="NEW int = float"),
    _case("15", {"tags": {"$all": ["premium", "sale"]}}, "C"),
    _case("16", {"tags": {"$in": ["luxury"]}}, "H"),
    _case("17", {"tags": "sale"}, "A C G", note="NEW list contains"),
    _case("18", {"tags": {"$nin": ["sale", "new"]}}, "B D F H", "B D F H I", "NEW"),
    _case("19", {"category": ["books"]}, "E G", note="NEW plain list"),
    _case("20", {"price": {"$gt": "50"}}, "", note="NEW no cross-type"),
    _case("21", {"description": {"$exists": True}}, "G"),
    _case("22", {"description": {"$exists": False}}, "A B C D E F H", "A B C D E F H I"),
    _case("23a", {"price": None}, "", "I"),
    _case("23b", {"price": {"$eq": None}}, "", "I"),
    _case("24", {"price": {"$ne": None}}, _ALL_D8, _ALL_D8),
    _case("25", {"rating": {"$exists": False}}, "", "I", "NEW"),
    _case("26", {"tags": {"$exists": True}}, _ALL_D8, _ALL_D9, "NEW ([] is present)"),
    _case("27", {"tags": {"$size": 0}}, "", "I", "NEW"),
    _case("28", {"name": {"$regex": "^Product [A-C]"}}, "A B C"),
    _case(
        "29",
        {"category": {"$regex": "ELECTRONICS", "$options": "i"}},
        "A B F",
        note="Δ replaces the inline-flag form",
    ),
    _case("30", {"category": {"$regex": "(?i)ELECTRONICS"}}, None, note="Δ inline flags not portable"),
    _case("31", {"description": {"$contains": "novel"}}, "G"),
    _case("32", {"description": {"$contains": "Novel"}}, "", note="Δ case-sensitive"),
    _case("33", {"$nor": [{"category": "electronics"}, {"category": "books"}]}, "C D H", "C D H I"),
    _case("34", {"$nor": []}, None, note="Δ empty logical list"),
    _case("35", {"category": {"$not": {"$in": ["electronics", "books"]}}}, "C D H", "C D H I"),
    _case("36", {"category": {"$not": {"$ne": "electronics"}}}, "A B F"),
    _case(
        "37",
        {"$not": {"category": "electronics", "available": True}},
        "C D E G H",
        "C D E G H I",
        "NEW NOT(AND)",
    ),
    _case("38", {"$nor": [{"category": "electronics"}, {"available": True}]}, "C G", "C G I", "NEW NOR"),
    _case(
        "39", {"$or": [{"category": "home", "price": {"$lt": 100}}]}, "C", note="NEW AND inside $or element"
    ),
    _case("40", {"reviews": {"$elemMatch": {"score": {"$gte": 5}}}}, "G H"),
    _case("41", {"reviews": {"$elemMatch": {"author": "user3"}}}, "H"),
    _case("42", {"reviews": {"$elemMatch": {"score": {"$gt": 10}}}}, ""),
    _case("43", {"reviews": {"$elemMatch": {"score": 5, "author": "user4"}}}, "", note="NEW same element"),
    _case("44", {"tags": {"$size": 2}}, "A C F H"),
    _case("45", {"reviews": {"$size": 3}}, "H"),
    _case(
        "46",
        {"$and": [{"category": {"$in": ["electronics", "home"]}}], "price": {"$gte": 50}},
        "C D F H",
        note="mixed root",
    ),
    _case("47a", {"price": {"$gt": None}}, None, note="NEW"),
    _case("47b", {"category": {}}, None, note="NEW"),
    _case(
        "48",
        {"reviews.score": 5},
        "G H",
        note="only with implicit_array_traversal",
        requires=frozenset({"implicit_array_traversal"}),
    ),
    # §8.2 #49–#63: every operator on a path through a list of documents (§2.4 array rules). Negations
    # negate the whole path (no element equals), and each operator may be met by a different element.
    *(
        _case(label, flt, d8, d9, note, requires=frozenset({"implicit_array_traversal"}))
        for label, flt, d8, d9, note in (
            ("49", {"reviews.score": {"$ne": 3}}, "A B C D E F H", "A B C D E F H I", "NEW"),
            ("50", {"reviews.score": {"$nin": [3, 4]}}, "A B C D E F", "A B C D E F I", "NEW"),
            ("51", {"reviews.score": {"$not": {"$ne": 3}}}, "G", None, "NEW"),
            ("52", {"reviews.score": {"$not": {"$nin": [4]}}}, "H", None, "NEW"),
            ("53", {"reviews.score": {"$not": {"$gte": 5}}}, "A B C D E F", "A B C D E F I", "NEW"),
            ("54", {"$nor": [{"reviews.score": 3}]}, "A B C D E F H", "A B C D E F H I", "NEW"),
            ("55", {"reviews.score": {"$gt": 4, "$lt": 5}}, "G H", None, "NEW one element each"),
            ("56", {"reviews.score": {"$all": [3, 5]}}, "G", None, "NEW"),
            ("57", {"reviews.score": None}, "A B C D E F", "A B C D E F I", "NEW"),
            ("58", {"reviews.score": {"$ne": None}}, "G H", None, "NEW"),
            ("59", {"reviews.author": {"$exists": False}}, "A B C D E F", "A B C D E F I", "NEW"),
            ("60", {"reviews.score": {"$ne": 3, "$exists": True}}, "H", None, "NEW"),
            ("61", {"reviews.author": {"$in": ["user4", "user9"]}}, "H", None, "NEW"),
            ("62", {"reviews.author": {"$regex": "^user[12]$"}}, "G", None, "NEW"),
            ("63", {"reviews.score": {"$lte": 4}}, "G H", None, "NEW"),
        )
    ),
)


def filter_case(label: str) -> FilterCase:
    """The §8.2 case with this label (``"17"``, ``"23a"``, ...)."""
    for case in FILTER_CASES:
        if case.label == label:
            return case
    raise KeyError(f"no §8.2 case {label!r}")


#: The required NOT-versus-NOR conformance pair (§2.3, §8.2 #37/#38).
NOT_VERSUS_NOR: Final[tuple[FilterCase, FilterCase]] = (filter_case("37"), filter_case("38"))


# --- §8.2 memory-compatibility block -------------------------------------------------------------

#: Dimension of the memory-compatibility vectors.
MEMORY_DIMENSION: Final = 4

#: Four records with ``thread_id``/``resource_id`` pairs (t1, r1), (t1, r1), (t2, r2), (t2, r2).
MEMORY_RECORDS: Final[tuple[Record, ...]] = (
    _record("mem-1", 1, {"thread_id": "t1", "resource_id": "r1"}),
    _record("mem-2", 2, {"thread_id": "t1", "resource_id": "r1"}),
    _record("mem-3", 3, {"thread_id": "t2", "resource_id": "r2"}),
    _record("mem-4", 4, {"thread_id": "t2", "resource_id": "r2"}),
)


@dataclass(frozen=True)
class MemoryCase(_FrozenFilter):
    """One filter of the memory-compatibility block and the ids it must return."""

    name: str
    frozen_filter: Any
    expected: frozenset[str]

    @property
    def expected_count(self) -> int:
        return len(self.expected)


MEMORY_CASES: Final[tuple[MemoryCase, ...]] = (
    MemoryCase("thread", _freeze({"thread_id": "t1"}), frozenset({"mem-1", "mem-2"})),
    MemoryCase("resource", _freeze({"resource_id": "r2"}), frozenset({"mem-3", "mem-4"})),
    MemoryCase(
        "thread and resource",
        _freeze({"thread_id": "t1", "resource_id": "r1"}),
        frozenset({"mem-1", "mem-2"}),
    ),
    MemoryCase("unknown thread", _freeze({"thread_id": "t-unknown"}), frozenset()),
    MemoryCase("no filter", None, frozenset({"mem-1", "mem-2", "mem-3", "mem-4"})),
    MemoryCase(
        "resource of one pair and thread of the other",
        _freeze({"$and": [{"resource_id": "r1"}, {"thread_id": "t2"}]}),
        frozenset(),
    ),
)


# --- §2.2 sample records and the §2.3 examples ---------------------------------------------------

#: The sample records r1–r5 of §2.2, keyed by id (read-only; see ``sample_metadata``).
SAMPLE_RECORDS: Final[Mapping[str, Mapping[str, Any]]] = _freeze(
    {
        "r1": {"n": 5, "s": "apple", "tags": ["a", "b"], "ok": True},
        "r2": {
            "n": 10,
            "s": "Banana",
            "tags": ["b"],
            "ok": False,
            "items": [{"k": 1, "v": "x"}, {"k": 2, "v": "y"}],
        },
        "r3": {"n": None, "s": "cherry", "tags": []},
        "r4": {"s": "date"},
        "r5": {"n": "7", "tags": "a", "sub": {"k": 1}},
    }
)
SAMPLE_IDS: Final[frozenset[str]] = frozenset(SAMPLE_RECORDS)


def sample_metadata() -> dict[str, dict[str, Any]]:
    """Fresh, mutable copies of the §2.2 sample records, keyed by id."""
    result: dict[str, dict[str, Any]] = _thaw(SAMPLE_RECORDS)
    return result


@dataclass(frozen=True)
class ExampleCase(_FrozenFilter):
    """One example of the §2.3 operator table: the operator row it belongs to, a filter, the matching ids."""

    operator: str
    frozen_filter: Any
    expected: frozenset[str]


def _example(operator: str, filter: Any, expected: str) -> ExampleCase:
    return ExampleCase(operator, _freeze(filter), _ids(expected))


#: Every example of the §2.3 table, in table order. ``operator`` names the row ("$not (root)" and
#: "$not (field)" distinguish the two ``$not`` rows; "$eq" is the implicit-equality row).
OPERATOR_EXAMPLES: Final[tuple[ExampleCase, ...]] = (
    _example("$eq", {"n": 5}, "r1"),
    _example("$eq", {"n": 5.0}, "r1"),
    _example("$eq", {"ok": 1}, ""),
    _example("$eq", {"tags": "a"}, "r1 r5"),
    _example("$eq", {"n": None}, "r3 r4"),
    _example("$eq", {"sub.k": 1}, "r5"),
    _example("$ne", {"n": {"$ne": 5}}, "r2 r3 r4 r5"),
    _example("$ne", {"n": {"$ne": None}}, "r1 r2 r5"),
    _example("$ne", {"tags": {"$ne": "a"}}, "r2 r3 r4"),
    _example("$gt", {"n": {"$gt": 5}}, "r2"),
    _example("$gte", {"n": {"$gte": 5, "$lte": 10}}, "r1 r2"),
    _example("$lt", {"s": {"$lt": "b"}}, "r1 r2"),
    _example("$gt", {"n": {"$gt": "6"}}, "r5"),
    _example("$in", {"n": {"$in": [5, None]}}, "r1 r3 r4"),
    _example("$in", {"tags": ["a", "z"]}, "r1 r5"),
    _example("$nin", {"n": {"$nin": [5, 10]}}, "r3 r4 r5"),
    _example("$nin", {"tags": {"$nin": ["b"]}}, "r3 r4 r5"),
    _example("$all", {"tags": {"$all": ["a", "b"]}}, "r1"),
    _example("$all", {"tags": {"$all": ["a"]}}, "r1 r5"),
    _example("$size", {"tags": {"$size": 1}}, "r2"),
    _example("$size", {"tags": {"$size": 0}}, "r3"),
    _example("$elemMatch", {"items": {"$elemMatch": {"k": {"$gte": 2}}}}, "r2"),
    _example("$elemMatch", {"items": {"$elemMatch": {"k": 1, "v": "y"}}}, ""),
    _example("$exists", {"n": {"$exists": True}}, "r1 r2 r3 r5"),
    _example("$exists", {"n": {"$exists": False}}, "r4"),
    _example("$exists", {"tags": {"$exists": True}}, "r1 r2 r3 r5"),
    _example("$regex", {"s": {"$regex": "an"}}, "r2"),
    _example("$regex", {"s": {"$regex": "^b", "$options": "i"}}, "r2"),
    _example("$regex", {"s": {"$regex": "e$"}}, "r1 r4"),
    _example("$contains", {"s": {"$contains": "an"}}, "r2"),
    _example("$contains", {"s": {"$contains": "AN"}}, ""),
    _example("$contains", {"tags": {"$contains": "b"}}, "r1 r2"),
    _example("$and", {"$and": [{"tags": "b"}, {"ok": False}]}, "r2"),
    _example("$or", {"$or": [{"n": {"$gt": 5}}, {"s": "date"}]}, "r2 r4"),
    _example("$or", {"$or": [{"n": 5, "s": "Banana"}]}, ""),
    _example("$nor", {"$nor": [{"n": 5}, {"s": "Banana"}]}, "r3 r4 r5"),
    _example("$not (root)", {"$not": {"n": 5, "s": "Banana"}}, "r1 r2 r3 r4 r5"),
    _example("$not (field)", {"n": {"$not": {"$gt": 5}}}, "r1 r3 r4 r5"),
)
