"""Test furniture of the qdrant adapter: how the conformance kit and the tests obtain a live backend.

``targets.py``: the conformance targets (the embedded engine, local mode, a URL, Docker).

No runtime module imports this package (tests/test_architecture.py checks it); the modules here import
the conformance kit, a test dependency.
"""
