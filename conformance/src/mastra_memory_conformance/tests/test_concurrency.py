"""Runner of the concurrency and large-batch domain."""

from mastra_memory_conformance.suite.concurrency import ConcurrencySuite


class TestConcurrency(ConcurrencySuite):
    pass
