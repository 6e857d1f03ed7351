"""Test furniture of the opensearch adapter: how the conformance kit and the tests obtain a live backend.

``targets.py``: the conformance targets; ``server.py``: a single-node OpenSearch with k-NN started in a
local JVM, built from the Maven project ``opensearch-launcher/`` beside it (shipped in the wheel).

No runtime module imports this package (tests/test_architecture.py checks it); the modules here import
the conformance kit, a test dependency.
"""
