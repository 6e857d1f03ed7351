"""The Mongo-style filter language: parse and validate, normalise, evaluate, translate.

``parse(filter)`` validates a filter dict (collecting every problem into one ``FilterError``) and returns
the normalised AST (``None`` for "match everything"); ``evaluate(filter, metadata)`` is the reference
evaluator, the oracle every adapter is tested against; ``FilterTranslator`` is the base adapters subclass.
The size limits every filter is checked against first live in :mod:`.limits`; ``compile_regex`` returns the
linear-time ``$regex`` engine of :mod:`.regex`.
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
from .evaluate import evaluate, matches
from .parse import parse, validate_filter
from .regex import REGEX_OPTIONS, compile_regex, regex_problems
from .visitor import FilterTranslator

__all__ = [
    "ALL_OPERATORS",
    "REGEX_OPTIONS",
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
    "compile_regex",
    "dotted",
    "evaluate",
    "matches",
    "operators_used",
    "parse",
    "regex_problems",
    "validate_filter",
    "walk",
]
