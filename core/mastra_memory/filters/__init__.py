"""The Mongo-style filter language: parse and validate, normalise, evaluate, translate.

``parse(filter)`` validates a filter dict (collecting every problem into one ``FilterError``) and returns
the normalised AST (``None`` for "match everything"); ``evaluate(filter, metadata)`` is the reference
evaluator, the oracle every adapter is tested against; ``FilterTranslator`` is the base adapters subclass.
"""

from .ast import (
    ALL_OPERATORS,
    And,
    Comparison,
    ElemMatch,
    Node,
    Nor,
    Not,
    Or,
    Path,
    Regex,
    Scalar,
    dotted,
    operators_used,
    walk,
)
from .visitor import FilterTranslator

__all__ = [
    "ALL_OPERATORS",
    "And",
    "Comparison",
    "ElemMatch",
    "FilterTranslator",
    "Node",
    "Nor",
    "Not",
    "Or",
    "Path",
    "Regex",
    "Scalar",
    "dotted",
    "operators_used",
    "walk",
]
