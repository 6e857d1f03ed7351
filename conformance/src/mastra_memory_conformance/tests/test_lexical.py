"""Runner of the lexical-search domain (hybrid recall's lexical side)."""

from mastra_memory_conformance.suite.lexical import LexicalSearchSuite


class TestLexicalSearch(LexicalSearchSuite):
    pass
