"""Runner of the metadata round-trip domain and the checks of declared deviations."""

from mastra_memory_conformance.suite.roundtrip import DeclaredDeviationsSuite, MetadataRoundTripSuite


class TestMetadataRoundTrip(MetadataRoundTripSuite):
    pass


class TestDeclaredDeviations(DeclaredDeviationsSuite):
    pass
