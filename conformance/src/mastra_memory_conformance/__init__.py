"""mastra-memory conformance kit: the shared suite every adapter must pass, its pytest plugin, targets,
datasets and oracle comparisons.

Run it with ``pytest --pyargs mastra_memory_conformance --target <name>``. Importing this package is
cheap (it imports neither pytest nor a backend), so adapter plugins can import
``mastra_memory_conformance.targets`` from their ``register_conformance_targets`` hook; the names below
are loaded on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "ConformanceTarget",
    "TargetSettings",
    "TargetUnavailable",
    "assert_same_ids",
    "declared_override",
    "docker_target",
    "expected_outcome",
    "oracle_ids",
    "set_item",
    "url_target",
]

_LAZY = {
    "ConformanceTarget": "targets",
    "TargetSettings": "targets",
    "TargetUnavailable": "targets",
    "url_target": "targets",
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
