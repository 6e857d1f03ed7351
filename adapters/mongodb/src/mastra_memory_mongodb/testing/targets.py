"""How the conformance kit obtains a live MongoDB (``pytest --pyargs mastra_memory_conformance --target …``).

=======================  ======  ==================================================================
target                   kind    backend
=======================  ======  ==================================================================
``mongodb-url``          url     an existing MongoDB or Atlas cluster named by
                                 ``MASTRA_MEMORY_TEST_MONGODB_URI`` (search mode ``auto``)
``mongodb-atlas-local``  docker  ``mongodb/mongodb-atlas-local`` from the kit's pinned compose file:
                                 ``mongod`` with ``mongot``, real ``$vectorSearch`` (search mode
                                 ``atlas``)
``mongodb-ferretdb``     native  FerretDB v1 over SQLite, built from the Go module proxy by
                                 :mod:`mastra_memory_mongodb.testing.ferretdb` (``dialect="ferretdb"``,
                                 exact search)
``mongodb-ferretdb-``    native  as ``mongodb-ferretdb``, with the storage in ``@mastra/mongodb``'s
``mastra``                       document layout (``layout="mastra"``, docs/spec.md §4.7)
=======================  ======  ==================================================================

Every provisioning uses a database of its own (``conformance_<8 hex>``), vector store and storage alike.
The kit finds them through the entry point ``mongodb`` of the group ``mastra_memory_conformance``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from mastra_memory_conformance.docker import docker_target
from mastra_memory_conformance.hookspecs import hookimpl
from mastra_memory_conformance.targets import (
    URL_ENV_VARS,
    ConformanceTarget,
    RegisterConformanceTarget,
    TargetSettings,
    provisioned_target,
    required_env,
)

__all__ = ["URL_ENV", "ferretdb_target", "register_conformance_targets"]

URL_ENV: Final = URL_ENV_VARS.get("mongodb", "MASTRA_MEMORY_TEST_MONGODB_URI")


def _database() -> str:
    return f"conformance_{uuid.uuid4().hex[:8]}"


def _settings(url: str, db_name: str, **extra: Any) -> dict[str, Any]:
    return {"url": url, "db_name": db_name, **extra}


def _in_fresh_database(url: str, **extra: Any) -> TargetSettings:
    """The vector store and the storage alike in a database of their own."""
    settings = _settings(url, _database(), **extra)
    return TargetSettings(vector=settings, storage=dict(settings))


def ferretdb_target(layout: str = "mastra-memory") -> ConformanceTarget:
    """``mongodb-ferretdb``: a fresh FerretDB v1 per provisioning, vector store and storage; with
    ``layout="mastra"``, ``mongodb-ferretdb-mastra``: the storage in @mastra/mongodb's documents."""
    from .ferretdb import FERRETDB_VERSION

    mastra = layout == "mastra"

    @provisioned_target(
        "mongodb-ferretdb-mastra" if mastra else "mongodb-ferretdb",
        "mongodb",
        "native",
        description=f"FerretDB {FERRETDB_VERSION} (MongoDB wire protocol over SQLite) built from the Go "
        "module proxy; exact search, dialect ferretdb"
        + ("; storage in @mastra/mongodb's document layout" if mastra else ""),
        has_storage=True,
    )
    def target(tmp: Path) -> Iterator[TargetSettings]:
        from .ferretdb import ferretdb_server

        with ferretdb_server(tmp) as uri:
            settings = _in_fresh_database(uri, dialect="ferretdb", search_mode="exact")
            if mastra and settings.storage is not None:
                settings.storage["layout"] = "mastra"
            yield settings

    return target


@provisioned_target(
    "mongodb-url",
    "mongodb",
    "url",
    description=f"an existing MongoDB or Atlas cluster named by {URL_ENV} (a fresh database per run)",
    has_storage=True,
)
def _url_target(tmp: Path) -> Iterator[TargetSettings]:
    yield _in_fresh_database(
        required_env(URL_ENV, "set it to the connection string of a MongoDB or Atlas cluster")
    )


def _atlas_local_target() -> ConformanceTarget:
    db_name = _database()
    return docker_target(
        "mongodb",
        "mongodb",
        name="mongodb-atlas-local",
        vector_settings=lambda url: _settings(url, db_name, search_mode="atlas"),
        storage_settings=lambda url: _settings(url, db_name),
        description="mongodb/mongodb-atlas-local (mongod with mongot: $vectorSearch) from the kit's pinned "
        "docker-compose.yml",
    )


@hookimpl
def register_conformance_targets(register: RegisterConformanceTarget) -> None:
    """Register the MongoDB targets, most real first: ``mongodb-url``, ``mongodb-atlas-local``,
    ``mongodb-ferretdb`` and ``mongodb-ferretdb-mastra``."""
    register(_url_target)
    register(_atlas_local_target())
    register(ferretdb_target())
    register(ferretdb_target("mastra"))
