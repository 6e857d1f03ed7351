"""What the plugins provide: the registrations collected from the hooks, checked, made unique, listed.

The hooks run on every lookup (plugins may be added with ``pm.register()`` at any time, and the hooks
are cheap); each registration is attributed to the plugin whose hook made it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar, cast

from pydantic import BaseModel

from ..errors import MastraMemoryError, PluginError
from .manager import ENV_BLOCK, MastraPluginManager, Source, get_plugin_manager

if TYPE_CHECKING:
    from ..embedders.base import EmbedderFactory
    from ..storage import MemoryStorage
    from ..vector import MastraVector

T = TypeVar("T")

#: ``factory(settings) -> MastraVector``; ``settings`` is an instance of the registered settings model.
VectorFactory: TypeAlias = Callable[[Any], "MastraVector"]
#: ``factory(settings) -> MemoryStorage``; ``settings`` is an instance of the registered settings model.
StorageFactory: TypeAlias = Callable[[Any], "MemoryStorage"]

_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


@dataclass(frozen=True)
class Registration(Generic[T]):
    """One vector store or storage a plugin registered: its name, factory, settings model and plugin.

    The factory's result is checked to be a ``T`` when it is built (``create_vector``/``create_storage``).
    """

    name: str
    factory: Callable[[Any], T]
    settings_model: type[BaseModel]
    plugin: str


@dataclass(frozen=True)
class EmbedderRegistration:
    """One model-router provider a plugin registered."""

    provider: str
    factory: EmbedderFactory
    plugin: str


@dataclass(frozen=True)
class PluginInfo:
    """A loaded plugin and what it provides, as ``mastra-memory plugins`` shows it."""

    name: str
    version: str | None
    source: Source
    distribution: str | None = None
    vector_stores: tuple[str, ...] = ()
    storages: tuple[str, ...] = ()
    embedder_providers: tuple[str, ...] = ()


@dataclass
class Provided:
    """Everything one plugin registered."""

    vector_stores: list[Registration[MastraVector]] = field(default_factory=list)
    storages: list[Registration[MemoryStorage]] = field(default_factory=list)
    embedders: list[EmbedderRegistration] = field(default_factory=list)


def check_name(plugin: str, kind: str, name: object) -> str:
    """``name`` if it is a valid registered name, else PluginError naming the plugin."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise PluginError(
            f"plugin {plugin!r} registered the {kind} name {name!r}; names are lowercase letters, digits, "
            f"'_' and '-', starting with a letter",
        )
    return name


def _registrar(
    plugin: str, kind: str, into: list[Registration[T]]
) -> Callable[[str, Callable[[Any], object], type[BaseModel]], None]:
    def register(name: str, factory: Callable[[Any], object], settings_model: type[BaseModel]) -> None:
        check_name(plugin, kind, name)
        if not callable(factory):
            raise PluginError(f"plugin {plugin!r} registered {kind} {name!r} with a non-callable factory")
        if not (isinstance(settings_model, type) and issubclass(settings_model, BaseModel)):
            raise PluginError(
                f"plugin {plugin!r} registered {kind} {name!r} with settings model {settings_model!r}; "
                f"it must be a pydantic BaseModel subclass",
            )
        into.append(Registration(name, cast(Callable[[Any], T], factory), settings_model, plugin))

    return register


@contextmanager
def hook_errors(plugin: str, hook: str) -> Iterator[None]:
    """Report an unexpected exception from a plugin's hook as a PluginError naming plugin and hook."""
    try:
        yield
    except MastraMemoryError:
        raise
    except Exception as exc:
        raise PluginError(f"plugin {plugin!r} failed in {hook}: {type(exc).__name__}: {exc}") from exc


def _collect_one(pm: MastraPluginManager, name: str, plugin: object) -> Provided:
    provided = Provided()
    hooks = pm.hooks.only(plugin)

    def register_embedder(provider: str, factory: Callable[..., object]) -> None:
        check_name(name, "embedder provider", provider)
        if not callable(factory):
            raise PluginError(f"plugin {name!r} registered embedder {provider!r} with a non-callable factory")
        provided.embedders.append(EmbedderRegistration(provider, cast("EmbedderFactory", factory), name))

    with hook_errors(name, "register_vector_stores"):
        hooks.register_vector_stores(_registrar(name, "vector store", provided.vector_stores))
    with hook_errors(name, "register_storages"):
        hooks.register_storages(_registrar(name, "storage", provided.storages))
    with hook_errors(name, "register_embedders"):
        hooks.register_embedders(register_embedder)
    return provided


def collect(pm: MastraPluginManager | None = None) -> dict[str, Provided]:
    """What each plugin of ``pm`` (default: the process-wide manager) provides, by plugin name."""
    pm = pm or get_plugin_manager()
    pm.check_hooks()
    plugins = [(name, plugin) for name, plugin in pm.list_name_plugin() if plugin is not None]
    return {name: _collect_one(pm, name, plugin) for name, plugin in plugins}


def unique(kind: str, items: Iterable[tuple[str, str, T]]) -> dict[str, T]:
    """``(name, plugin, item)`` triples by name; PluginError naming both plugins on a repeated name."""
    found: dict[str, tuple[str, T]] = {}
    for name, plugin, item in items:
        if name in found:
            other = found[name][0]
            who = f"plugin {plugin!r} twice" if other == plugin else f"two plugins: {other!r} and {plugin!r}"
            raise PluginError(
                f"{kind} {name!r} is registered by {who}; uninstall one, or skip an entry-point plugin "
                f"with {ENV_BLOCK}=<entry point name>",
                details={"name": name, "plugins": sorted({other, plugin})},
            )
        found[name] = (plugin, item)
    return {name: item for name, (_, item) in found.items()}


def list_plugins() -> list[PluginInfo]:
    """Every loaded plugin with its version, source and what it provides (duplicates included)."""
    pm = get_plugin_manager()
    infos = []
    for name, provided in collect(pm).items():
        origin = pm.origin(name)
        infos.append(
            PluginInfo(
                name=name,
                version=origin.version,
                source=origin.source,
                distribution=origin.distribution,
                vector_stores=tuple(r.name for r in provided.vector_stores),
                storages=tuple(r.name for r in provided.storages),
                embedder_providers=tuple(r.provider for r in provided.embedders),
            )
        )
    return infos
