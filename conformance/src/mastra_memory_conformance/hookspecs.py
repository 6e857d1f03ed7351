"""The conformance kit's own hook: adapters register their conformance targets here, not in the core.

A leaf module (it imports only `targets`, which imports only the standard library). An adapter
implements the hook in its ``testing/targets.py`` and names that module in its ``pyproject.toml``::

    [project.entry-points.mastra_memory_conformance]
    mystore = "mastra_memory_mystore.testing.targets"

The hook is documented in ``docs/plugins/hooks.md``; `registry` loads the implementations.
"""

from __future__ import annotations

import pluggy

from .targets import RegisterConformanceTarget

__all__ = [
    "PROJECT_NAME",
    "RegisterConformanceTarget",
    "hookimpl",
    "hookspec",
    "register_conformance_targets",
]

PROJECT_NAME = "mastra_memory_conformance"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def register_conformance_targets(register: RegisterConformanceTarget) -> None:
    """Call ``register(target)`` with a ``ConformanceTarget`` for each way to obtain a live backend."""
