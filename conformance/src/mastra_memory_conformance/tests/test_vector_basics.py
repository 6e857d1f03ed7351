"""Runner of the vector-basics and index-lifecycle domain."""

from mastra_memory_conformance.suite.vector_basics import IndexLifecycleSuite, VectorBasicsSuite


class TestIndexLifecycle(IndexLifecycleSuite):
    pass


class TestVectorBasics(VectorBasicsSuite):
    pass
