"""Runner of the memory-storage domain (adapters that provide a MemoryStorage)."""

from mastra_memory_conformance.suite.storage import MemoryStorageSuite


class TestMemoryStorage(MemoryStorageSuite):
    pass
