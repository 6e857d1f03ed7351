"""How the conformance kit obtains a live Qdrant (``pytest --pyargs mastra_memory_conformance --target …``).

=================  ==========  ===========================================================================
target             kind        backend
=================  ==========  ===========================================================================
``qdrant-edge``    embedded    the real engine in-process (qdrant-edge-py), one shard per index, in a
                               temporary directory
``qdrant-local``   embedded    qdrant-client's local mode persisted in a temporary directory (Qdrant's
                               filter semantics reimplemented in Python by the client)
``qdrant-url``     url         an existing server named by ``MASTRA_MEMORY_TEST_QDRANT_URL`` (and
                               ``MASTRA_MEMORY_TEST_QDRANT_API_KEY`` when it needs a key)
``qdrant-docker``  docker      ``qdrant/qdrant`` from the kit's pinned compose file (testcontainers)
=================  ==========  ===========================================================================

The kit finds them through the entry point ``qdrant`` of the group ``mastra_memory_conformance``.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from mastra_memory_conformance.docker import docker_target
from mastra_memory_conformance.hookspecs import hookimpl
from mastra_memory_conformance.targets import (
    URL_ENV_VARS,
    ConformanceTarget,
    RegisterConformanceTarget,
    TargetSettings,
    TargetUnavailable,
    address_target,
    embedded_target,
    provisioned_target,
    required_env,
)

__all__ = ["API_KEY_ENV", "URL_ENV", "register_conformance_targets"]

URL_ENV: Final = URL_ENV_VARS.get("qdrant", "MASTRA_MEMORY_TEST_QDRANT_URL")
API_KEY_ENV: Final = "MASTRA_MEMORY_TEST_QDRANT_API_KEY"


@contextmanager
def _edge_directory(tmp: Path) -> Iterator[str]:
    if importlib.util.find_spec("qdrant_edge") is None:
        raise TargetUnavailable('qdrant-edge-py is not installed: pip install "mastra-memory-qdrant[edge]"')
    yield str(tmp / "edge")


def _edge_target() -> ConformanceTarget:
    return address_target(
        "qdrant",
        "embedded",
        _edge_directory,
        name="qdrant-edge",
        setting="edge_path",
        vector_settings={"edge_search_threads": 1},
        description="Qdrant's Rust engine in-process (qdrant-edge-py), one shard per index",
    )


def _local_target() -> ConformanceTarget:
    return embedded_target(
        "qdrant",
        "local",
        name="qdrant-local",
        setting="path",
        description="qdrant-client's local mode on a temporary directory",
    )


@provisioned_target(
    "qdrant-url", "qdrant", "url", description=f"an existing Qdrant server named by {URL_ENV}"
)
def _url_target(tmp: Path) -> Iterator[TargetSettings]:
    vector: dict[str, object] = {"url": required_env(URL_ENV, "set it to the address of a running Qdrant")}
    key = os.environ.get(API_KEY_ENV, "").strip()
    if key:
        vector["api_key"] = key
    yield TargetSettings(vector=vector)


@hookimpl
def register_conformance_targets(register: RegisterConformanceTarget) -> None:
    """Register every Qdrant target, most real first: ``qdrant-url``, ``qdrant-docker``, ``qdrant-edge``
    and ``qdrant-local``."""
    register(_url_target)
    register(docker_target("qdrant", "qdrant"))
    register(_edge_target())
    register(_local_target())
