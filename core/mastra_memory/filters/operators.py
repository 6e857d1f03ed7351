"""The operator table of the filter language (docs/spec.md §2.3), declared once.

Every module that needs to know what kind of operator a name is — the parser, the reference evaluator,
translators, the conformance kit — reads these groups instead of spelling the names again.
"""

from __future__ import annotations

from typing import Final

#: ``path op scalar``: equality and its negation, and the array-or-substring ``$contains``.
EQUALITY: Final[frozenset[str]] = frozenset({"$eq", "$ne", "$contains"})
#: Ordered comparisons; the operand is a number or a string (docs/spec.md §2.4).
RANGE: Final[frozenset[str]] = frozenset({"$gt", "$gte", "$lt", "$lte"})
#: The operand is a list of scalars.
LIST: Final[frozenset[str]] = frozenset({"$in", "$nin", "$all"})
#: About the field itself rather than its value: presence and array length.
ELEMENT: Final[frozenset[str]] = frozenset({"$exists", "$size"})
#: Operators whose operand is a pattern or a sub-filter.
STRUCTURAL: Final[frozenset[str]] = frozenset({"$regex", "$elemMatch"})
#: Logical operators combining documents (``$not`` also appears at field level).
LOGICAL: Final[frozenset[str]] = frozenset({"$and", "$or", "$nor", "$not"})
#: The logical operators whose operand is a list of documents.
LOGICAL_LISTS: Final[frozenset[str]] = LOGICAL - {"$not"}

#: Keys of an operator document (field level); ``$options`` qualifies ``$regex`` and is no operator itself.
FIELD_OPERATORS: Final[frozenset[str]] = EQUALITY | RANGE | LIST | ELEMENT | STRUCTURAL | {"$not", "$options"}
#: Every operator name a capability manifest may declare.
ALL_OPERATORS: Final[frozenset[str]] = (FIELD_OPERATORS | LOGICAL) - {"$options"}
