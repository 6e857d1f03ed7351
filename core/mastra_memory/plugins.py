"""The plugin manager: loads built-in and entry-point plugins, collects what they register, and builds
vector stores and storages by name or URL.

Built-in plugins (``BUILTIN_PLUGINS``) register through the same hooks as third-party ones. Third-party
plugins are entry points of the group ``mastra_memory``; three environment variables control them:

* ``MASTRA_MEMORY_LOAD_PLUGINS`` -- comma-separated allow-list of entry-point names (empty: load none);
* ``MASTRA_MEMORY_BLOCK_PLUGINS`` -- comma-separated block-list of entry-point names;
* ``MASTRA_MEMORY_DISABLE_ENTRYPOINTS=1`` -- load no entry point at all (the project's own tests set it).

Nothing here runs at ``import mastra_memory``: the manager is built on first use and then cached.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias, TypeVar, cast

import pluggy
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from . import __version__, hookspecs
from .embedders.base import EmbedderFactory
from .errors import ConfigError, MastraMemoryError, PluginError

if TYPE_CHECKING:
    from .storage import MemoryStorage
    from .vector import MastraVector

T = TypeVar("T")

#: ``factory(settings) -> MastraVector``; ``settings`` is an instance of the registered settings model.
VectorFactory: TypeAlias = Callable[[Any], "MastraVector"]
#: ``factory(settings) -> MemoryStorage``; ``settings`` is an instance of the registered settings model.
StorageFactory: TypeAlias = Callable[[Any], "MemoryStorage"]

RegisterVectorStore: TypeAlias = Callable[[str, VectorFactory, type[BaseModel]], None]
RegisterStorage: TypeAlias = Callable[[str, StorageFactory, type[BaseModel]], None]
RegisterEmbedder: TypeAlias = Callable[[str, EmbedderFactory], None]
RegisterConformanceTarget: TypeAlias = Callable[[Any], None]

ENTRYPOINT_GROUP = "mastra_memory"
BUILTIN_PLUGINS: tuple[str, ...] = ("mastra_memory.stores.sqlite.plugin", "mastra_memory.embedders.builtin")
ENV_LOAD = "MASTRA_MEMORY_LOAD_PLUGINS"
ENV_BLOCK = "MASTRA_MEMORY_BLOCK_PLUGINS"
ENV_DISABLE = "MASTRA_MEMORY_DISABLE_ENTRYPOINTS"
#: Backends with an adapter distribution installable as an extra (``pip install "mastra-memory[qdrant]"``).
ADAPTER_EXTRAS = frozenset(
    {"qdrant", "pinecone", "mongodb", "pgvector", "lancedb", "opensearch", "s3vectors"}
)

Source = Literal["builtin", "entrypoint", "runtime"]
_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
_TRUE = frozenset({"1", "true", "yes", "on"})


@dataclass(frozen=True)
class Registration(Generic[T]):
    """One vector store or storage a plugin registered: its name, factory, settings model and plugin."""

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
class PluginOrigin:
    """Where a plugin came from: a built-in module, an entry point of a distribution, or ``register()``."""

    source: Source
    version: str | None = None
    distribution: str | None = None


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
    conformance_targets: tuple[str, ...] = ()


class PluginHooks:
    """Type-checked calls of the hooks; ``pm.hook`` itself is untyped.

    ``only(plugin)`` narrows the calls to one plugin's implementations, which is how registrations are
    attributed to the plugin that made them.
    """

    def __init__(self, pm: pluggy.PluginManager, only: object | None = None) -> None:
        self._pm = pm
        self._only = only

    def only(self, plugin: object) -> PluginHooks:
        """The same hooks, called on ``plugin``'s implementations alone."""
        return PluginHooks(self._pm, only=plugin)

    def _caller(self, name: str) -> pluggy.HookCaller:
        if self._only is None:
            return cast(pluggy.HookCaller, getattr(self._pm.hook, name))
        others = [p for _, p in self._pm.list_name_plugin() if p is not None and p is not self._only]
        return self._pm.subset_hook_caller(name, others)

    def register_vector_stores(self, register: RegisterVectorStore) -> None:
        """Call every ``register_vector_stores`` implementation."""
        self._caller("register_vector_stores")(register=register)

    def register_storages(self, register: RegisterStorage) -> None:
        """Call every ``register_storages`` implementation."""
        self._caller("register_storages")(register=register)

    def register_embedders(self, register: RegisterEmbedder) -> None:
        """Call every ``register_embedders`` implementation."""
        self._caller("register_embedders")(register=register)

    def register_conformance_targets(self, register: RegisterConformanceTarget) -> None:
        """Call every ``register_conformance_targets`` implementation."""
        self._caller("register_conformance_targets")(register=register)


class MastraPluginManager(pluggy.PluginManager):
    """A pluggy manager for the ``mastra_memory`` hooks that remembers where each plugin came from."""

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT_NAME)
        self.add_hookspecs(hookspecs)
        self.origins: dict[str, PluginOrigin] = {}

    @property
    def hooks(self) -> PluginHooks:
        """The typed facade over ``self.hook``."""
        return PluginHooks(self)

    def origin(self, name: str) -> PluginOrigin:
        """Where the plugin ``name`` came from (``runtime`` for plugins passed to ``register()``)."""
        return self.origins.get(name, PluginOrigin("runtime"))


# --- loading ------------------------------------------------------------------------------------


def _env_names(variable: str) -> frozenset[str] | None:
    raw = os.environ.get(variable)
    if raw is None:
        return None
    return frozenset(part.strip() for part in raw.split(",") if part.strip())


def entrypoints_disabled() -> bool:
    """Whether ``MASTRA_MEMORY_DISABLE_ENTRYPOINTS`` turns entry-point autoload off."""
    return os.environ.get(ENV_DISABLE, "").strip().lower() in _TRUE


def _register(pm: MastraPluginManager, plugin: object, name: str, origin: PluginOrigin) -> None:
    this = origin.distribution or "this process"
    if pm.has_plugin(name):
        previous = pm.origin(name).distribution or "another plugin"
        raise PluginError(
            f"plugin name {name!r} is used by both {previous} and {this}; uninstall one of them",
            details={"plugin": name, "distributions": [previous, this]},
        )
    if pm.is_registered(plugin):
        raise PluginError(f"plugin {name!r} from {this} is already registered as {pm.get_name(plugin)!r}")
    try:
        pm.register(plugin, name=name)
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin {name!r} has an invalid hook implementation: {exc}") from exc
    pm.origins[name] = origin


def _load_builtins(pm: MastraPluginManager) -> None:
    for module_name in BUILTIN_PLUGINS:
        # Built-ins are part of the core: a failure here is a broken install, reported as such.
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            raise PluginError(f"built-in plugin {module_name} failed to import: {exc}") from exc
        _register(pm, module, module_name, PluginOrigin("builtin", __version__, "mastra-memory"))


def _load_entrypoints(pm: MastraPluginManager) -> None:
    allowed = _env_names(ENV_LOAD)
    blocked = _env_names(ENV_BLOCK) or frozenset()
    # Sorted so that load order, and so any clash report, does not depend on the file system.
    found = sorted(
        importlib.metadata.entry_points(group=ENTRYPOINT_GROUP),
        key=lambda ep: (ep.name, ep.dist.name if ep.dist else "", ep.value),
    )
    for ep in found:
        if (allowed is not None and ep.name not in allowed) or ep.name in blocked:
            continue
        dist = ep.dist
        where = f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"
        try:
            plugin = ep.load()
        except Exception as exc:
            raise PluginError(
                f"plugin entry point {ep.name!r} ({ep.value}, from {where}) failed to import: "
                f"{type(exc).__name__}: {exc}; fix or uninstall that distribution, or skip it with "
                f"{ENV_BLOCK}={ep.name}",
                details={"entry_point": ep.name, "value": ep.value},
            ) from exc
        origin = PluginOrigin(
            "entrypoint",
            dist.version if dist is not None else None,
            dist.name if dist is not None else None,
        )
        _register(pm, plugin, ep.name, origin)


def _check_hooks(pm: pluggy.PluginManager) -> None:
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(
            f"plugin {pm.get_name(exc.plugin) or exc.plugin!r} implements a hook that does not exist: {exc}; "
            f"the hooks are {', '.join(_hook_names())}",
        ) from exc


def _hook_names() -> list[str]:
    return sorted(n for n in vars(hookspecs) if getattr(getattr(hookspecs, n), "mastra_memory_spec", None))


def build_plugin_manager(*, load_entrypoints: bool | None = None) -> MastraPluginManager:
    """Build a new manager: the built-ins, then entry points (unless disabled; ``None`` reads the env).

    Raises PluginError if a plugin fails to import, has invalid hooks, or reuses a plugin name.
    """
    pm = MastraPluginManager()
    _load_builtins(pm)
    if load_entrypoints if load_entrypoints is not None else not entrypoints_disabled():
        _load_entrypoints(pm)
    _check_hooks(pm)
    return pm


_lock = threading.Lock()
_manager: MastraPluginManager | None = None


def get_plugin_manager() -> MastraPluginManager:
    """The process-wide plugin manager, built on first use."""
    global _manager
    with _lock:
        if _manager is None:
            _manager = build_plugin_manager()
        return _manager


def reset_plugin_manager() -> None:
    """Forget the cached manager so the next use rebuilds it (tests; after changing the env vars)."""
    global _manager
    with _lock:
        _manager = None


# --- what the plugins provide -------------------------------------------------------------------


@dataclass
class _Provided:
    vector_stores: list[Registration[MastraVector]] = field(default_factory=list)
    storages: list[Registration[MemoryStorage]] = field(default_factory=list)
    embedders: list[EmbedderRegistration] = field(default_factory=list)
    targets: list[Any] = field(default_factory=list)


def _check_name(plugin: str, kind: str, name: object) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise PluginError(
            f"plugin {plugin!r} registered the {kind} name {name!r}; names are lowercase letters, digits, "
            f"'_' and '-', starting with a letter",
        )
    return name


def _registrar(
    plugin: str, kind: str, into: list[Registration[T]]
) -> Callable[[str, Callable[[Any], T], type[BaseModel]], None]:
    def register(name: str, factory: Callable[[Any], T], settings_model: type[BaseModel]) -> None:
        _check_name(plugin, kind, name)
        if not callable(factory):
            raise PluginError(f"plugin {plugin!r} registered {kind} {name!r} with a non-callable factory")
        if not (isinstance(settings_model, type) and issubclass(settings_model, BaseModel)):
            raise PluginError(
                f"plugin {plugin!r} registered {kind} {name!r} with settings model {settings_model!r}; "
                f"it must be a pydantic BaseModel subclass",
            )
        into.append(Registration(name, factory, settings_model, plugin))

    return register


@contextmanager
def _blame(plugin: str, hook: str) -> Iterator[None]:
    """Report an unexpected exception from a plugin's hook as a PluginError naming plugin and hook."""
    try:
        yield
    except MastraMemoryError:
        raise
    except Exception as exc:
        raise PluginError(f"plugin {plugin!r} failed in {hook}: {type(exc).__name__}: {exc}") from exc


def _collect_one(pm: MastraPluginManager, name: str, plugin: object) -> _Provided:
    provided = _Provided()
    hooks = pm.hooks.only(plugin)

    def register_embedder(provider: str, factory: EmbedderFactory) -> None:
        _check_name(name, "embedder provider", provider)
        if not callable(factory):
            raise PluginError(f"plugin {name!r} registered embedder {provider!r} with a non-callable factory")
        provided.embedders.append(EmbedderRegistration(provider, factory, name))

    with _blame(name, "register_vector_stores"):
        hooks.register_vector_stores(_registrar(name, "vector store", provided.vector_stores))
    with _blame(name, "register_storages"):
        hooks.register_storages(_registrar(name, "storage", provided.storages))
    with _blame(name, "register_embedders"):
        hooks.register_embedders(register_embedder)
    with _blame(name, "register_conformance_targets"):
        hooks.register_conformance_targets(provided.targets.append)
    return provided


def _collect(pm: MastraPluginManager) -> dict[str, _Provided]:
    # Not cached: plugins may be added with pm.register() at any time, and the hooks are cheap.
    _check_hooks(pm)
    plugins = [(name, plugin) for name, plugin in pm.list_name_plugin() if plugin is not None]
    return {name: _collect_one(pm, name, plugin) for name, plugin in plugins}


def _unique(kind: str, items: Iterable[tuple[str, str, T]]) -> dict[str, T]:
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


def vector_stores() -> dict[str, Registration[MastraVector]]:
    """Every registered vector store by name. PluginError if two plugins register the same name."""
    provided = _collect(get_plugin_manager()).values()
    return _unique("vector store", ((r.name, r.plugin, r) for p in provided for r in p.vector_stores))


def storages() -> dict[str, Registration[MemoryStorage]]:
    """Every registered memory storage by name. PluginError if two plugins register the same name."""
    provided = _collect(get_plugin_manager()).values()
    return _unique("storage", ((r.name, r.plugin, r) for p in provided for r in p.storages))


def embedder_providers() -> dict[str, EmbedderFactory]:
    """Every registered model-router provider and its factory. PluginError on a duplicate provider."""
    provided = _collect(get_plugin_manager()).values()
    return _unique(
        "embedder provider", ((r.provider, r.plugin, r.factory) for p in provided for r in p.embedders)
    )


def conformance_targets() -> list[Any]:
    """Every registered conformance target, in plugin order."""
    return [target for p in _collect(get_plugin_manager()).values() for target in p.targets]


def _target_name(target: Any) -> str:
    name = getattr(target, "name", None)
    return name if isinstance(name, str) else repr(target)


def list_plugins() -> list[PluginInfo]:
    """Every loaded plugin with its version, source and what it provides (duplicates included)."""
    pm = get_plugin_manager()
    infos = []
    for name, provided in _collect(pm).items():
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
                conformance_targets=tuple(_target_name(t) for t in provided.targets),
            )
        )
    return infos


# --- factories ----------------------------------------------------------------------------------


def _install_hint(name: str) -> str:
    if name in ADAPTER_EXTRAS:
        hint = f'install its adapter: pip install "mastra-memory[{name}]"'
    else:
        hint = (
            "install the plugin distribution that provides it (`mastra-memory plugins` lists the loaded ones)"
        )
    if entrypoints_disabled():
        hint += f"; entry-point plugins are disabled by {ENV_DISABLE}"
    elif os.environ.get(ENV_LOAD) is not None:
        hint += f"; only the plugins in {ENV_LOAD} are loaded"
    return hint


def _split_url(kind: str, name_or_url: str, settings: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if not isinstance(name_or_url, str) or not name_or_url:
        raise ConfigError(f"{kind}: expected a registered name or a URL such as sqlite:///memory.db")
    if "://" not in name_or_url:
        return name_or_url, settings
    if "url" in settings:
        raise ConfigError(f"{kind} {name_or_url!r}: the URL is given twice; drop the url= setting")
    # The scheme names the plugin; the whole URL is the plugin's `url` setting.
    return name_or_url.split("://", 1)[0].lower(), {**settings, "url": name_or_url}


def _settings(kind: str, reg: Registration[T], settings: dict[str, Any], from_url: bool) -> BaseModel:
    model = reg.settings_model
    if from_url and "url" not in model.model_fields:
        raise ConfigError(
            f"{kind} {reg.name!r} takes no URL; pass its name and the settings of {model.__name__} "
            f"({', '.join(model.model_fields)}) instead",
        )
    try:
        # Calling the model (not model_validate) lets pydantic-settings models read their env vars.
        return model(**settings)
    except PydanticValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in err['loc']) or '(settings)'}: {err['msg']}" for err in exc.errors()
        ]
        raise ConfigError(
            f"invalid settings for {kind} {reg.name!r} ({model.__name__}): {'; '.join(problems)}",
            details={"name": reg.name, "plugin": reg.plugin, "problems": problems},
        ) from None


def _build(
    kind: str, registry: Mapping[str, Registration[T]], name_or_url: str, settings: dict[str, Any]
) -> T:
    name, settings = _split_url(kind, name_or_url, settings)
    reg = registry.get(name)
    if reg is None:
        available = ", ".join(sorted(registry)) or "none"
        raise PluginError(
            f"no {kind} named {name!r}; available: {available}. To use {name!r}, {_install_hint(name)}",
            details={"name": name, "available": sorted(registry)},
        )
    validated = _settings(kind, reg, settings, from_url="://" in name_or_url)
    try:
        return reg.factory(validated)
    except MastraMemoryError:
        raise
    except Exception as exc:
        raise PluginError(
            f"{kind} {reg.name!r} (plugin {reg.plugin!r}) could not be created: {type(exc).__name__}: {exc}",
        ) from exc


def _checked(kind: str, name_or_url: str, built: object, expected: type[Any]) -> None:
    if not isinstance(built, expected):
        raise PluginError(
            f"the factory of {kind} {name_or_url!r} returned {type(built).__name__}, not {expected.__name__}"
        )


def create_vector(name_or_url: str, **settings: Any) -> MastraVector:
    """Build a registered vector store by name (``create_vector("qdrant", url=...)``) or URL.

    A URL's scheme names the plugin and the URL becomes its ``url`` setting: ``sqlite:///memory.db``.
    Settings are validated by the plugin's settings model (ConfigError lists every problem); an unknown
    name raises PluginError listing the available ones.
    """
    from .vector import MastraVector

    store = _build("vector store", vector_stores(), name_or_url, settings)
    _checked("vector store", name_or_url, store, MastraVector)
    return store


def create_storage(name_or_url: str, **settings: Any) -> MemoryStorage:
    """Build a registered memory storage by name (``create_storage("sqlite", url=...)``) or URL.

    Same rules as :func:`create_vector`.
    """
    from .storage import MemoryStorage

    storage = _build("storage", storages(), name_or_url, settings)
    _checked("storage", name_or_url, storage, MemoryStorage)
    return storage
