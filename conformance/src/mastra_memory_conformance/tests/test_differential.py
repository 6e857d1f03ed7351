"""Runner of the differential-filter domain (hypothesis against the reference evaluator)."""

from mastra_memory_conformance.suite.differential import DifferentialFilterSuite


class TestDifferentialFilters(DifferentialFilterSuite):
    pass
