"""Real servers started from locally built software, for the ``native`` conformance targets.

* :mod:`.opensearch` — a single-node OpenSearch with the k-NN plugin, started in a JVM from Maven Central
  artifacts (``opensearch_server``, ``opensearch_target``).
* :mod:`.ferretdb` — FerretDB v1, a MongoDB wire-protocol server, with its SQLite backend, built from the
  Go module proxy (``ferretdb_server``, ``ferretdb_target``).
* :mod:`.s3mock` — Adobe S3Mock with its S3 Vectors API (an emulator), from the Maven Central jar, every
  connector bound to loopback (``s3mock_server``).

Each server is built once into a cache keyed by its version (``~/.cache/mastra-memory/``, or
``$MASTRA_MEMORY_CACHE_DIR``), then started per use on a free loopback port in a temporary directory and
stopped by PID. A missing toolchain or a failed build raises
:class:`~mastra_memory_conformance.targets.TargetUnavailable` with the precise reason.

The submodules import no backend client; importing this package starts nothing.
"""

from __future__ import annotations

from .ferretdb import FERRETDB_VERSION, build_ferretdb, ferretdb_server, ferretdb_target
from .opensearch import (
    KNN_VERSION,
    OPENSEARCH_VERSION,
    build_opensearch,
    opensearch_server,
    opensearch_target,
)
from .process import cache_dir
from .s3mock import S3MOCK_VERSION, S3MockEndpoints, build_s3mock, s3mock_server

__all__ = [
    "FERRETDB_VERSION",
    "KNN_VERSION",
    "OPENSEARCH_VERSION",
    "S3MOCK_VERSION",
    "S3MockEndpoints",
    "build_ferretdb",
    "build_opensearch",
    "build_s3mock",
    "cache_dir",
    "ferretdb_server",
    "ferretdb_target",
    "opensearch_server",
    "opensearch_target",
    "s3mock_server",
]
