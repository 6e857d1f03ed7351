"""The built-in ``sqlite`` plugin: the embedded store registers through the same hooks as any adapter.

The store classes are imported inside the factories so that loading the plugin stays cheap.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING, Any

from ...hookspecs import hookimpl
from .settings import SQLiteSettings

if TYPE_CHECKING:
    from ...plugins import RegisterConformanceTarget, RegisterStorage, RegisterVectorStore
    from .storage import SQLiteStorage
    from .vector import SQLiteVector

NAME = "sqlite"


def create_sqlite_vector(settings: SQLiteSettings) -> SQLiteVector:
    """Factory of the ``sqlite`` vector store."""
    from .vector import SQLiteVector

    return SQLiteVector(url=settings.url)


def create_sqlite_storage(settings: SQLiteSettings) -> SQLiteStorage:
    """Factory of the ``sqlite`` memory storage."""
    from .storage import SQLiteStorage

    return SQLiteStorage(url=settings.url)


@hookimpl
def register_vector_stores(register: RegisterVectorStore) -> None:
    """Register the ``sqlite`` vector store."""
    register(NAME, create_sqlite_vector, SQLiteSettings)


@hookimpl
def register_storages(register: RegisterStorage) -> None:
    """Register the ``sqlite`` memory storage."""
    register(NAME, create_sqlite_storage, SQLiteSettings)


@cache
def _conformance_target() -> Any:
    # Looked up once: the kit is an optional distribution, and the hooks run on every registry lookup.
    # Imported by name so that the core neither needs the kit installed nor type-checks against it.
    try:
        targets = importlib.import_module("mastra_memory_conformance.targets")
    except ImportError:
        return None
    return targets.sqlite_target()


@hookimpl
def register_conformance_targets(register: RegisterConformanceTarget) -> None:
    """Register the ``sqlite`` conformance target (an embedded store on a temporary file) when the
    conformance kit is installed."""
    target = _conformance_target()
    if target is not None:
        register(target)
