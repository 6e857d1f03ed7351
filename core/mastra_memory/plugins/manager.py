"""The plugin manager: loads the built-in plugins and the entry points, and remembers where each came from.

Third-party plugins are entry points of the group ``mastra_memory``; three environment variables
control them:

* ``MASTRA_MEMORY_LOAD_PLUGINS`` -- comma-separated allow-list of entry-point names (empty: load none);
* ``MASTRA_MEMORY_BLOCK_PLUGINS`` -- comma-separated block-list of entry-point names;
* ``MASTRA_MEMORY_DISABLE_ENTRYPOINTS=1`` -- load no entry point at all (the project's own tests set it).

:class:`OriginPluginManager` is the reusable part (loading, clash reports, hook checks) for any pluggy
project that follows these rules (the conformance kit builds its target manager on it); :class:`ProcessWide`
keeps one such manager per process, built on first use.
Nothing here runs at ``import mastra_memory``: the manager is built on first use and then cached.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Generic, Literal, TypeVar, cast

import pluggy

from .. import hookspecs
from ..errors import PluginError
from ..version import __version__
from .protocols import RegisterEmbedder, RegisterStorage, RegisterVectorStore

ENTRYPOINT_GROUP = "mastra_memory"
BUILTIN_PLUGINS: tuple[str, ...] = ("mastra_memory.stores.sqlite.plugin", "mastra_memory.embedders.builtin")
ENV_LOAD = "MASTRA_MEMORY_LOAD_PLUGINS"
ENV_BLOCK = "MASTRA_MEMORY_BLOCK_PLUGINS"
ENV_DISABLE = "MASTRA_MEMORY_DISABLE_ENTRYPOINTS"

Source = Literal["builtin", "entrypoint", "runtime"]
M = TypeVar("M", bound="OriginPluginManager")
_TRUE = frozenset({"1", "true", "yes", "on"})


@dataclass(frozen=True)
class PluginOrigin:
    """Where a plugin came from: a built-in module, an entry point of a distribution, or ``register()``."""

    source: Source
    version: str | None = None
    distribution: str | None = None


def _env_names(variable: str) -> frozenset[str] | None:
    raw = os.environ.get(variable)
    if raw is None:
        return None
    return frozenset(part.strip() for part in raw.split(",") if part.strip())


def entrypoints_disabled() -> bool:
    """Whether ``MASTRA_MEMORY_DISABLE_ENTRYPOINTS`` turns entry-point autoload off."""
    return os.environ.get(ENV_DISABLE, "").strip().lower() in _TRUE


class OriginPluginManager(pluggy.PluginManager):
    """A pluggy manager of one project's hooks that remembers where each plugin came from."""

    def __init__(self, project_name: str, specs: ModuleType) -> None:
        super().__init__(project_name)
        self.add_hookspecs(specs)
        self.specs = specs
        self.origins: dict[str, PluginOrigin] = {}

    def origin(self, name: str) -> PluginOrigin:
        """Where the plugin ``name`` came from (``runtime`` for plugins passed to ``register()``)."""
        return self.origins.get(name, PluginOrigin("runtime"))

    def hook_names(self) -> list[str]:
        """The hooks of this project, sorted."""
        marker = f"{self.project_name}_spec"
        return sorted(n for n, fn in vars(self.specs).items() if getattr(fn, marker, None))

    def caller(self, hook: str, only: object | None = None) -> pluggy.HookCaller:
        """The caller of ``hook``: every implementation, or ``only`` that plugin's."""
        if only is None:
            return cast(pluggy.HookCaller, getattr(self.hook, hook))
        others = [p for _, p in self.list_name_plugin() if p is not None and p is not only]
        return self.subset_hook_caller(hook, others)

    def add(self, plugin: object, name: str, origin: PluginOrigin) -> None:
        """Register ``plugin`` as ``name``; PluginError on a reused name or an invalid hook."""
        this = origin.distribution or "this process"
        if self.has_plugin(name):
            previous = self.origin(name).distribution or "another plugin"
            raise PluginError(
                f"plugin name {name!r} is used by both {previous} and {this}; uninstall one of them",
                details={"plugin": name, "distributions": [previous, this]},
            )
        if self.is_registered(plugin):
            raise PluginError(
                f"plugin {name!r} from {this} is already registered as {self.get_name(plugin)!r}"
            )
        try:
            self.register(plugin, name=name)
        except pluggy.PluginValidationError as exc:
            raise PluginError(f"plugin {name!r} has an invalid hook implementation: {exc}") from exc
        self.origins[name] = origin

    def load_builtins(self, modules: Iterable[str], origin: PluginOrigin) -> None:
        """Import and register each built-in module; a failure is a broken install, reported as such."""
        for module_name in modules:
            try:
                module = importlib.import_module(module_name)
            except Exception as exc:
                raise PluginError(f"built-in plugin {module_name} failed to import: {exc}") from exc
            self.add(module, module_name, origin)

    def load_entrypoints(self, group: str) -> None:
        """Load the entry points of ``group`` that the allow- and block-list let through."""
        allowed = _env_names(ENV_LOAD)
        blocked = _env_names(ENV_BLOCK) or frozenset()
        # Sorted so that load order, and so any clash report, does not depend on the file system.
        found = sorted(
            importlib.metadata.entry_points(group=group),
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
                    details={"entry_point": ep.name, "value": ep.value, "group": group},
                ) from exc
            version, distribution = (dist.version, dist.name) if dist is not None else (None, None)
            self.add(plugin, ep.name, PluginOrigin("entrypoint", version, distribution))

    #: Hooks this project no longer has, and where their implementations belong now.
    moved_hooks: Mapping[str, str] = {}

    def check_hooks(self) -> None:
        """PluginError if a registered plugin implements a hook this project does not have."""
        try:
            self.check_pending()
        except pluggy.PluginValidationError as exc:
            unknown = [n for n, c in vars(self.hook).items() if not n.startswith("_") and not c.has_spec()]
            moved = "".join(f"; {self.moved_hooks[n]}" for n in unknown if n in self.moved_hooks)
            raise PluginError(
                f"plugin {self.get_name(exc.plugin) or exc.plugin!r} implements a hook that does not exist: "
                f"{exc}; the hooks are {', '.join(self.hook_names())}{moved}",
            ) from exc

    def build(self, builtins: Iterable[str], origin: PluginOrigin, group: str, load: bool | None) -> None:
        """The built-ins, then the entry points of ``group`` (``load=None`` reads the env); then check."""
        self.load_builtins(builtins, origin)
        if load if load is not None else not entrypoints_disabled():
            self.load_entrypoints(group)
        self.check_hooks()


class PluginHooks:
    """Type-checked calls of the hooks; ``pm.hook`` itself is untyped.

    ``only(plugin)`` narrows the calls to one plugin's implementations, which is how registrations are
    attributed to the plugin that made them.
    """

    def __init__(self, pm: OriginPluginManager, only: object | None = None) -> None:
        self._pm = pm
        self._only = only

    def only(self, plugin: object) -> PluginHooks:
        """The same hooks, called on ``plugin``'s implementations alone."""
        return PluginHooks(self._pm, only=plugin)

    def register_vector_stores(self, register: RegisterVectorStore) -> None:
        """Call every ``register_vector_stores`` implementation."""
        self._pm.caller("register_vector_stores", self._only)(register=register)

    def register_storages(self, register: RegisterStorage) -> None:
        """Call every ``register_storages`` implementation."""
        self._pm.caller("register_storages", self._only)(register=register)

    def register_embedders(self, register: RegisterEmbedder) -> None:
        """Call every ``register_embedders`` implementation."""
        self._pm.caller("register_embedders", self._only)(register=register)


class MastraPluginManager(OriginPluginManager):
    """The manager of the ``mastra_memory`` hooks."""

    moved_hooks: Mapping[str, str] = {
        "register_conformance_targets": "conformance targets are registered with the conformance kit's own "
        "hook and entry-point group, not the core's (see docs/plugins/hooks.md); move that hook to the "
        "plugin's testing/targets.py",
    }

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT_NAME, hookspecs)

    @property
    def hooks(self) -> PluginHooks:
        """The typed facade over ``self.hook``."""
        return PluginHooks(self)


def build_plugin_manager(*, load_entrypoints: bool | None = None) -> MastraPluginManager:
    """Build a new manager: the built-ins, then entry points (unless disabled; ``None`` reads the env).

    Raises PluginError if a plugin fails to import, has invalid hooks, or reuses a plugin name.
    """
    pm = MastraPluginManager()
    origin = PluginOrigin("builtin", __version__, "mastra-memory")
    pm.build(BUILTIN_PLUGINS, origin, ENTRYPOINT_GROUP, load_entrypoints)
    return pm


class ProcessWide(Generic[M]):
    """One manager per process, built on first use by ``build`` and forgotten by :meth:`reset`.

    Thread-safe: concurrent first uses build it once. A project keeps one at module level and exposes its
    ``get`` and ``reset`` as functions of its own, as :func:`get_plugin_manager` does.
    """

    def __init__(self, build: Callable[[], M]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._value: M | None = None

    def get(self) -> M:
        """The manager, built now if this is the first use since the start or the last :meth:`reset`."""
        with self._lock:
            if self._value is None:
                self._value = self._build()
            return self._value

    def reset(self) -> None:
        """Forget the manager so the next :meth:`get` rebuilds it (tests; after changing the env vars)."""
        with self._lock:
            self._value = None


_manager = ProcessWide(build_plugin_manager)


def get_plugin_manager() -> MastraPluginManager:
    """The process-wide plugin manager, built on first use."""
    return _manager.get()


def reset_plugin_manager() -> None:
    """Forget the cached manager so the next use rebuilds it (tests; after changing the env vars)."""
    _manager.reset()
