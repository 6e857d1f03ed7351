"""The runner modules: each makes one domain's suite classes collectable by pytest.

``pytest --pyargs mastra_memory_conformance --target <name>`` collects these modules; the tests themselves
live in :mod:`mastra_memory_conformance.suite`. An adapter project that wants to add to a domain subclasses
the suite class in its own tests instead (the override guard watches such subclasses).
"""
