"""How the conformance kit obtains a live LanceDB: ``pytest --pyargs mastra_memory_conformance --target
lancedb`` (or ``lancedb-url``).

* ``lancedb`` (kind ``embedded``): the real Lance engine in-process, on a fresh temporary directory.
* ``lancedb-url`` (kind ``url``): an existing database named by ``MASTRA_MEMORY_TEST_LANCEDB_URI`` — an
  object-store URI (``s3://bucket/prefix``) or LanceDB Cloud (``db://name``; set
  ``MASTRA_MEMORY_LANCEDB_API_KEY`` and, if needed, ``MASTRA_MEMORY_LANCEDB_REGION``, which the store's
  settings read from the environment). Skipped with that reason when the variable is unset.

The kit finds them through the entry point ``lancedb`` of the group ``mastra_memory_conformance``.
"""

from __future__ import annotations

from typing import Final

from mastra_memory_conformance.hookspecs import hookimpl
from mastra_memory_conformance.targets import (
    DEFAULT_DIMENSION,
    ConformanceTarget,
    RegisterConformanceTarget,
    embedded_target,
    url_target,
)

#: The environment variable naming the database of the ``lancedb-url`` target.
URL_ENV_VAR: Final = "MASTRA_MEMORY_TEST_LANCEDB_URI"


def lancedb_target() -> ConformanceTarget:
    """The ``lancedb`` target: an embedded database in the target's temporary directory."""
    return embedded_target(
        "lancedb",
        "lancedb",
        name="lancedb",
        options={"dimension": DEFAULT_DIMENSION},
        description="LanceDB embedded (the Lance engine in-process) on a temporary directory",
    )


def lancedb_url_target() -> ConformanceTarget:
    """The ``lancedb-url`` target: the database at ``$MASTRA_MEMORY_TEST_LANCEDB_URI``."""
    return url_target(
        "lancedb",
        URL_ENV_VAR,
        options={"dimension": DEFAULT_DIMENSION},
        description=f"an existing LanceDB (object store or LanceDB Cloud) named by {URL_ENV_VAR}",
    )


@hookimpl
def register_conformance_targets(register: RegisterConformanceTarget) -> None:
    """Register the ``lancedb`` and ``lancedb-url`` targets."""
    register(lancedb_target())
    register(lancedb_url_target())
