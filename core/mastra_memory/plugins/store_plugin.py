"""StorePlugin: the hook implementations of a plugin that provides a vector store and/or a memory storage.

A store plugin's ``plugin.py`` declares what it registers and exposes the hooks as module attributes,
which is where pluggy looks for them::

    PLUGIN = StorePlugin("mystore", MyStoreSettings, vector=".store:MyStoreVector")
    register_vector_stores = PLUGIN.register_vector_stores

The classes are named as ``"module:Class"`` strings and imported by the first ``create_vector`` /
``create_storage`` that builds one, because mastra-memory imports every installed ``plugin.py`` whenever it
builds its plugin manager: a plugin must not import its backend's client library there. A module starting
with ``.`` is relative to the package of the settings model's module (the plugin's own package). A class is
built as ``Class(settings)`` with the validated settings.

The package's ``__init__.py`` follows the same rule for the classes it exports:
``__getattr__ = exported_on_use(__name__, {"MyStoreVector": ".store"})`` imports each on first use.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..hookspecs import hookimpl

if TYPE_CHECKING:
    from .protocols import RegisterStorage, RegisterVectorStore

__all__ = ["StorePlugin", "exported_on_use"]


@dataclass(frozen=True)
class StorePlugin:
    """A plugin registering a vector store (``vector``) and/or a memory storage (``storage``) as ``name``.

    ``vector`` and ``storage`` are ``"module:Class"`` paths (``".store:MyStoreVector"`` is relative to the
    package of ``settings``); ``settings`` is the settings model both take.
    """

    name: str
    settings: type[BaseModel]
    vector: str | None = None
    storage: str | None = None

    def __post_init__(self) -> None:
        if self.vector is None and self.storage is None:
            raise ValueError(f"store plugin {self.name!r} registers neither a vector store nor a storage")
        for path in (self.vector, self.storage):
            module, _, attribute = (path or "m:C").partition(":")
            if not module.lstrip(".") or not attribute.isidentifier():
                raise ValueError(f"store plugin {self.name!r}: {path!r} is not a 'module:Class' path")

    @hookimpl
    def register_vector_stores(self, register: RegisterVectorStore) -> None:
        """Register the vector store, if the plugin has one."""
        if self.vector is not None:
            register(self.name, self._deferred(self.vector), self.settings)

    @hookimpl
    def register_storages(self, register: RegisterStorage) -> None:
        """Register the memory storage, if the plugin has one."""
        if self.storage is not None:
            register(self.name, self._deferred(self.storage), self.settings)

    def _deferred(self, path: str) -> Callable[[Any], object]:
        """A factory that imports the class at ``path`` when called and builds it from the settings."""
        module, _, attribute = path.partition(":")
        package = sys.modules[self.settings.__module__].__package__

        def build(settings: Any) -> object:
            cls = getattr(importlib.import_module(module, package), attribute)
            return cls(settings)

        build.__qualname__ = build.__name__ = f"build<{path}>"
        return build


def exported_on_use(package: str, modules: Mapping[str, str]) -> Callable[[str], object]:
    """A package's module ``__getattr__`` (PEP 562) that imports each exported name of ``modules`` from its
    module (``".store"``, relative to ``package``) when it is first asked for.

    mastra-memory imports every installed plugin's package whenever it builds its plugin manager, so the
    package must not import its backend's client library with the stores that use it.
    """

    def __getattr__(name: str) -> object:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module, package), name)

    return __getattr__
