"""Test furniture of the mongodb adapter: how the conformance kit and the tests obtain a live backend.

``targets.py``: the conformance targets; ``ferretdb.py``: FerretDB v1, a MongoDB wire-protocol
server built from the Go module proxy, for the ``mongodb-ferretdb`` target and the adapter's tests.

No runtime module imports this package (tests/test_architecture.py checks it); the modules here import
the conformance kit, a test dependency.
"""
