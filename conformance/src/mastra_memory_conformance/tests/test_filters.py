"""Runner of the filter-operator domain (docs/spec.md §8.2 fixed cases)."""

from mastra_memory_conformance.suite.filters import FilterOperatorsSuite


class TestFilterOperators(FilterOperatorsSuite):
    pass
