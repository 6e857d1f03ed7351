"""Test furniture of the pgvector adapter: how the conformance kit and the tests obtain a live backend.

``targets.py``: the conformance targets; ``server.py``: a throwaway PostgreSQL + pgvector started from a
local installation, for the ``pgvector-native`` target, the adapter's tests and the fault tests.

No runtime module imports this package (tests/test_architecture.py checks it); the modules here import
the conformance kit, a test dependency.
"""
