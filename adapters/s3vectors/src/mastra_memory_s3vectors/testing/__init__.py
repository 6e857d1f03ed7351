"""Test furniture of the s3vectors adapter: how the conformance kit and the tests obtain a live backend.

``targets.py``: the conformance targets; ``s3mock.py``: Adobe S3Mock's S3 Vectors API in a local JVM
on loopback, for the ``s3vectors-s3mock`` target and the adapter's tests.

No runtime module imports this package (tests/test_architecture.py checks it); the modules here import
the conformance kit, a test dependency.
"""
