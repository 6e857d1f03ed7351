"""How the conformance kit obtains a live OpenSearch (``pytest --pyargs mastra_memory_conformance
--target …``).

=====================  ==========  =======================================================================
target                 kind        backend
=====================  ==========  =======================================================================
``opensearch-url``     url         an existing cluster named by ``MASTRA_MEMORY_TEST_OPENSEARCH_URL``
``opensearch-docker``  docker      ``opensearchproject/opensearch`` from the kit's pinned compose file
``opensearch-native``  native      a single-node OpenSearch 2.19.1 + k-NN in a local JVM, built once from
                                   Maven Central (``mastra_memory_opensearch.testing.server``)
=====================  ==========  =======================================================================

The kit finds them through the entry point ``opensearch`` of the group ``mastra_memory_conformance``.
"""

from __future__ import annotations

from typing import Final

from mastra_memory_conformance.docker import docker_target
from mastra_memory_conformance.hookspecs import hookimpl
from mastra_memory_conformance.targets import URL_ENV_VARS, RegisterConformanceTarget, url_target

from .server import opensearch_target

__all__ = ["URL_ENV", "register_conformance_targets"]

URL_ENV: Final = URL_ENV_VARS.get("opensearch", "MASTRA_MEMORY_TEST_OPENSEARCH_URL")


@hookimpl
def register_conformance_targets(register: RegisterConformanceTarget) -> None:
    """Register every OpenSearch target, most real first: ``opensearch-url``, ``opensearch-docker`` and
    ``opensearch-native``."""
    register(url_target("opensearch", URL_ENV))
    register(docker_target("opensearch", "opensearch"))
    register(opensearch_target())
