"""Runner of the Memory.recall end-to-end domain."""

from mastra_memory_conformance.suite.recall import MemoryRecallSuite


class TestMemoryRecall(MemoryRecallSuite):
    pass
