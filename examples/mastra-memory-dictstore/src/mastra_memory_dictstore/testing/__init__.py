"""Test furniture of the dictstore adapter: how the conformance kit and the tests obtain a live backend.

``targets.py``: the conformance target (the store in-process, a private space per run).

No runtime module imports this package (tests/test_architecture.py checks it); the modules here import
the conformance kit, a test dependency.
"""
