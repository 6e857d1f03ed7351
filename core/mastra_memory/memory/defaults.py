"""``Memory``'s storage and vector store when they are given by name, by URL, or not at all (docs/spec.md
§5.1).

Defaults go through the plugin registry like any plugin: no storage means ``create_storage("sqlite",
url="./memory.db")``. Without ``vector=`` the vector store follows the storage:

* storage by name or URL (``"pgvector://..."``): the vector store registered under the same plugin name,
  with the same name or URL (so the same settings); a plugin with a storage but no vector store raises a
  :class:`ConfigError` asking for ``vector=``;
* no storage, or a storage object: the embedded SQLite vector store in the storage's SQLite file (Mastra's
  LibSQL default keeps both in one file), ``./memory.db`` for a storage without a URL; a storage object
  whose URL is not an SQLite one raises the same ``ConfigError``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..plugins import create_storage, create_vector, vector_stores
from ..storage import MemoryStorage
from ..vector import MastraVector

DEFAULT_URL = "./memory.db"
DEFAULT_EMBEDDER = "local/wordllama"
#: The plugin of the embedded defaults.
DEFAULT_PLUGIN = "sqlite"
_SQLITE_PREFIXES = ("sqlite:///", "sqlite://", "file:")


def resolve_storage(storage: MemoryStorage | str | None) -> MemoryStorage:
    """The storage object for ``Memory(storage=...)``: built by plugin name or URL, or the default."""
    if storage is None:
        return create_storage(DEFAULT_PLUGIN, url=DEFAULT_URL)
    if isinstance(storage, str):
        return create_storage(storage)
    return storage


@dataclass(frozen=True, slots=True)
class VectorDefault:
    """How to build the vector store ``Memory`` uses when none was given.

    ``sqlite_url`` is the SQLite database the default would open (None when the default is another
    plugin's store); :meth:`may_hold_vectors` uses it to avoid creating a stray file just to clean it.
    """

    name_or_url: str
    settings: dict[str, Any]
    sqlite_url: str | None

    def build(self) -> MastraVector:
        """Create the vector store (no I/O: stores connect on first use)."""
        return create_vector(self.name_or_url, **self.settings)

    def may_hold_vectors(self) -> bool:
        """False when the default is an SQLite database that is private to this process or does not exist
        yet: resolving it could only create an empty one."""
        if self.sqlite_url is None:
            return True
        from ..stores.sqlite.connection import MEMORY, sqlite_path

        path = sqlite_path(self.sqlite_url)
        return path != MEMORY and Path(path).exists()


def vector_default(storage_arg: MemoryStorage | str | None, storage: MemoryStorage) -> VectorDefault:
    """The vector store that goes with ``storage`` when ``Memory`` got no ``vector=`` (see the module)."""
    if isinstance(storage_arg, str):
        plugin = storage_arg.split("://", 1)[0].lower() if "://" in storage_arg else storage_arg
        if plugin not in vector_stores():
            raise _no_vector(f"storage plugin {plugin!r} registers no vector store of the same name")
        if plugin != DEFAULT_PLUGIN:
            return VectorDefault(storage_arg, {}, None)
    url = _storage_url(storage)
    if url is not None and not _is_sqlite_url(url):
        raise _no_vector(
            f"the storage {type(storage).__name__} is at {_scheme(url)}://..., which is no SQLite database "
            "for the default vector store"
        )
    url = url or DEFAULT_URL
    return VectorDefault(DEFAULT_PLUGIN, {"url": url}, url)


def _no_vector(reason: str) -> ConfigError:
    return ConfigError(
        f"Memory has no vector store: {reason}; pass vector= (a MastraVector, a plugin name or a URL such "
        "as vector='pgvector://...')",
        details={"reason": reason},
    )


def _storage_url(storage: object) -> str | None:
    """The database URL of a storage (``storage.url`` or ``storage.settings.url``), if it has one."""
    for holder in (storage, getattr(storage, "settings", None)):
        url = getattr(holder, "url", None)
        if isinstance(url, str) and url:
            return url
    return None


def _is_sqlite_url(url: str) -> bool:
    """A path, ``:memory:``, ``file:...`` or ``sqlite://...`` (the forms ``SQLiteSettings.url`` takes)."""
    return "://" not in url or url.startswith(_SQLITE_PREFIXES)


def _scheme(url: str) -> str:
    return url.split("://", 1)[0]
