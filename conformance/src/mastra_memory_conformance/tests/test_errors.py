"""Runner of the errors and bad-input domain."""

from mastra_memory_conformance.suite.errors import ErrorsSuite


class TestErrors(ErrorsSuite):
    pass
