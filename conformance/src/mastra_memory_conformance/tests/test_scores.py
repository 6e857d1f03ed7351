"""Runner of the scores domain (portable scores against brute force)."""

from mastra_memory_conformance.suite.scores import ScoresSuite


class TestScores(ScoresSuite):
    pass
