"""The kit's registration of targets: a plugin manager of its own hook, separate from the core's.

Built-in target plugins (``BUILTIN_PLUGINS``: the core's ``sqlite`` store) load first, then the entry
points of the group ``mastra_memory_conformance``. The core's switches apply to them, by entry-point name
(an adapter uses the same name in both groups, so one switch covers its store and its targets):
``MASTRA_MEMORY_LOAD_PLUGINS`` (allow-list), ``MASTRA_MEMORY_BLOCK_PLUGINS`` (block-list) and
``MASTRA_MEMORY_DISABLE_ENTRYPOINTS=1`` (none; the project's own tests set it).

``python -m mastra_memory_conformance.registry`` lists the registered targets.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from mastra_memory.errors import PluginError
from mastra_memory.plugins.manager import OriginPluginManager, PluginOrigin, Source
from mastra_memory.plugins.registry import hook_errors

from . import hookspecs
from .targets import ConformanceTarget

__all__ = [
    "BUILTIN_PLUGINS",
    "ENTRYPOINT_GROUP",
    "TargetPlugin",
    "TargetPluginManager",
    "available_targets",
    "build_target_manager",
    "get_target_manager",
    "list_target_plugins",
    "registered_targets",
    "reset_target_manager",
]

ENTRYPOINT_GROUP = "mastra_memory_conformance"
BUILTIN_PLUGINS: tuple[str, ...] = ("mastra_memory_conformance.sqlite_targets",)
_HOOK = "register_conformance_targets"


@dataclass(frozen=True)
class TargetPlugin:
    """A loaded target plugin, where it came from, and the targets it registers."""

    name: str
    version: str | None
    source: Source
    distribution: str | None
    targets: tuple[ConformanceTarget, ...]


class TargetPluginManager(OriginPluginManager):
    """The pluggy manager of the ``mastra_memory_conformance`` hook."""

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT_NAME, hookspecs)

    def targets_of(self, name: str, plugin: object) -> tuple[ConformanceTarget, ...]:
        """The targets ``plugin`` registers; PluginError for anything that is not a ``ConformanceTarget``."""
        found: list[ConformanceTarget] = []

        def register(target: object) -> None:
            if not isinstance(target, ConformanceTarget):
                raise PluginError(
                    f"plugin {name!r} registered {target!r} as a conformance target; register a "
                    f"mastra_memory_conformance.targets.ConformanceTarget"
                )
            found.append(target)

        with hook_errors(name, _HOOK):
            self.caller(_HOOK, only=plugin)(register=register)
        return tuple(found)


def _kit_version() -> str | None:
    try:
        return importlib.metadata.version("mastra-memory-conformance")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - the kit runs installed
        return None


def build_target_manager(*, load_entrypoints: bool | None = None) -> TargetPluginManager:
    """A new manager: the built-in targets, then entry points (unless disabled; ``None`` reads the env).

    Raises PluginError if a plugin fails to import, has invalid hooks, or reuses a plugin name.
    """
    pm = TargetPluginManager()
    origin = PluginOrigin("builtin", _kit_version(), "mastra-memory-conformance")
    pm.build(BUILTIN_PLUGINS, origin, ENTRYPOINT_GROUP, load_entrypoints)
    return pm


_lock = threading.Lock()
_manager: TargetPluginManager | None = None


def get_target_manager() -> TargetPluginManager:
    """The process-wide target manager, built on first use."""
    global _manager
    with _lock:
        if _manager is None:
            _manager = build_target_manager()
        return _manager


def reset_target_manager() -> None:
    """Forget the cached manager so the next use rebuilds it (tests; after changing the env vars)."""
    global _manager
    with _lock:
        _manager = None


def list_target_plugins() -> list[TargetPlugin]:
    """Every loaded target plugin with its origin and its targets, in load order."""
    pm = get_target_manager()
    pm.check_hooks()  # plugins may have been added with pm.register() since the manager was built
    infos = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None:
            continue
        origin = pm.origin(name)
        targets = pm.targets_of(name, plugin)
        infos.append(TargetPlugin(name, origin.version, origin.source, origin.distribution, targets))
    return infos


def registered_targets() -> dict[str, ConformanceTarget]:
    """Every registered target by name, in registration order.

    Raises PluginError when a plugin fails to load, fails in its hook, registers something that is not a
    :class:`ConformanceTarget`, or when two registrations share a name.
    """
    found: dict[str, tuple[str, ConformanceTarget]] = {}
    for plugin in list_target_plugins():
        for target in plugin.targets:
            if target.name in found:
                other = found[target.name][0]
                raise PluginError(
                    f"two conformance targets are named {target.name!r} (plugins {other!r} and "
                    f"{plugin.name!r}); rename one of them",
                    details={"target": target.name, "plugins": [other, plugin.name]},
                )
            found[target.name] = (plugin.name, target)
    return {name: target for name, (_, target) in found.items()}


def available_targets(adapter: str | None = None) -> list[str]:
    """The names of the registered targets (of one adapter, if given), in registration order.

    "Registered" is not "reachable": a target whose backend is missing is skipped with its reason when
    the suite runs.
    """
    return [name for name, t in registered_targets().items() if adapter is None or t.adapter == adapter]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m mastra_memory_conformance.registry [--adapter NAME]``: one line per target."""
    parser = argparse.ArgumentParser(prog="python -m mastra_memory_conformance.registry")
    parser.add_argument("--adapter", help="only the targets of this adapter")
    args = parser.parse_args(argv)
    try:
        plugins = list_target_plugins()
        registered_targets()  # the same checks as a kit run: duplicate names fail here too
    except PluginError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for plugin in plugins:
        origin = f"{plugin.distribution or plugin.source} {plugin.version or ''}".strip()
        for t in plugin.targets:
            if args.adapter is None or t.adapter == args.adapter:
                print(f"{t.name}\t{t.kind}\t{t.adapter}\t{plugin.name} ({origin})\t{t.description}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
