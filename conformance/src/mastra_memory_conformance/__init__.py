"""mastra-memory conformance kit: the shared suite every adapter must pass, its pytest plugin, targets,
datasets and oracle comparisons.

Run it with ``pytest --pyargs mastra_memory_conformance --target <name>``. Importing this package is
cheap (it imports neither pytest nor a backend); the names below are loaded on first use. Adapters
register targets with the kit's own hook (``mastra_memory_conformance.hookspecs.hookimpl``) in their
``testing/targets.py``, an entry point of the group ``mastra_memory_conformance``.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "ConformanceTarget",
    "TargetSettings",
    "TargetUnavailable",
    "assert_same_ids",
    "available_targets",
    "declared_override",
    "docker_target",
    "expected_outcome",
    "hookimpl",
    "oracle_ids",
    "registered_targets",
    "set_item",
    "url_target",
]

_LAZY = {
    "ConformanceTarget": "targets",
    "TargetSettings": "targets",
    "TargetUnavailable": "targets",
    "url_target": "targets",
    "hookimpl": "hookspecs",
    "available_targets": "registry",
    "registered_targets": "registry",
    "docker_target": "docker",
    "assert_same_ids": "oracle",
    "expected_outcome": "oracle",
    "oracle_ids": "oracle",
    "declared_override": "guard",
    "set_item": "plugin",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
