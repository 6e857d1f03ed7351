"""Runner of the hostile-input domain."""

from mastra_memory_conformance.suite.hostile import HostileInputSuite


class TestHostileInput(HostileInputSuite):
    pass
