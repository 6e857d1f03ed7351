"""Test furniture of the lancedb adapter: how the conformance kit and the tests obtain a live backend.

``targets.py``: the conformance targets (an embedded database, or one named by a URL).

No runtime module imports this package (tests/test_architecture.py checks it); the modules here import
the conformance kit, a test dependency.
"""
