"""Test furniture of the pinecone adapter: how the conformance kit and the tests obtain a live backend.

``targets.py``: the conformance targets; ``emulator/``: the loopback Pinecone emulator of the
``pinecone-emulated`` target and the adapter's tests.

No runtime module imports this package (tests/test_architecture.py checks it); the modules here import
the conformance kit, a test dependency.
"""
