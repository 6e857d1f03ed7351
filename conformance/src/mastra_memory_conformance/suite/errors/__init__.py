"""Errors and bad input (docs/spec.md §2.6, §2.7, §3.3): typed errors, exact phrases, ids, and no I/O.

``ErrorsSuite`` checks every validation row of §3.3 (error class, the id
``MASTRA_VECTOR_<STORE>_<OPERATION>_<STATUS>`` in upper snake case, the message phrase), every
``FilterError`` phrase of §2.6, and that a filter the target must refuse — an undeclared operator, or one
a declared deviation rules out — raises ``UnsupportedFilterError`` **before any I/O**. It also holds the
§3.3 zero-vector rule: a cosine index refuses zero vectors on upsert (the whole call), update and query,
while the euclidean and dotproduct indexes a target declares store, score and return them.

"Before any I/O" is observed by instrumenting the adapter under test: :class:`HookCounter` wraps the
instance's backend hooks (``_query``, ``_upsert``, ``_describe_index``, ...; every backend call of the
``MastraVector`` template goes through one) with counters that delegate to the real hooks, and the tests
assert that no hook ran. Every test also proves the counter is live (a valid call afterwards counts) and
that the bad input changed nothing stored (count and a full query, before and after).

``ErrorsSuite`` is one class made of one part per family of error, each in its own module:
:mod:`.validation` (the §3.3 rows and the manifest's limits), :mod:`.zero_vectors` (the zero-vector rule)
and :mod:`.filter_errors` (``FilterError`` phrases, unknown query options, ``UnsupportedFilterError``);
:mod:`.base` holds the instrumentation they share.
"""

from __future__ import annotations

import pytest

from .base import HOOKS, HookCounter
from .filter_errors import DEVIATION_FILTERS, INVALID_FILTERS, OPERATOR_FILTERS, FilterErrorsSuite
from .validation import ROWS, Row, ValidationErrorsSuite
from .zero_vectors import ZERO_VECTOR_BY_FILTER, ZERO_VECTOR_CALLS, ZeroVectorsSuite

__all__ = [
    "DEVIATION_FILTERS",
    "HOOKS",
    "INVALID_FILTERS",
    "OPERATOR_FILTERS",
    "ROWS",
    "ZERO_VECTOR_BY_FILTER",
    "ZERO_VECTOR_CALLS",
    "ErrorsSuite",
    "FilterErrorsSuite",
    "HookCounter",
    "Row",
    "ValidationErrorsSuite",
    "ZeroVectorsSuite",
]


# pytest collects the tests of base classes in reverse MRO order: the parts are listed last to first so
# that the tests run, and the report lists them, in the order validation, zero vectors, filters.
@pytest.mark.asyncio
class ErrorsSuite(FilterErrorsSuite, ZeroVectorsSuite, ValidationErrorsSuite):
    """Typed errors with exact phrases and ids, raised before any I/O, leaving stored data unchanged."""
