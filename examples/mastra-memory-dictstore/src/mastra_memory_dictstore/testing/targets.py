"""How the conformance kit obtains a live dict store: ``pytest --pyargs mastra_memory_conformance
--target dictstore``.

The backend is this process. Each provisioned target gets its own named space, so every store the kit
builds from the target's settings sees the same indexes — as stores connected to one server would —
and the space is dropped when the kit moves on.

The kit finds the target through the entry point ``dictstore`` of the group
``mastra_memory_conformance`` (see ``pyproject.toml``); the kit is a test dependency, and only the kit
imports this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mastra_memory_conformance.hookspecs import hookimpl
from mastra_memory_conformance.targets import ConformanceTarget, RegisterConformanceTarget, TargetSettings

from ..store import DictStoreVector


def dictstore_target() -> ConformanceTarget:
    """The ``dictstore`` target (kind ``embedded``: the real store, in-process)."""

    @contextmanager
    def provision(tmp: Path) -> Iterator[TargetSettings]:
        space = f"conformance-{tmp.name}"
        try:
            yield TargetSettings(vector={"space": space}, options={"dimension": 8})
        finally:
            DictStoreVector.drop_space(space)

    return ConformanceTarget(
        name="dictstore",
        adapter="dictstore",
        kind="embedded",
        provision=provision,
        description="the example dict store, in-process (a private space per run)",
    )


@hookimpl
def register_conformance_targets(register: RegisterConformanceTarget) -> None:
    """Register the ``dictstore`` target."""
    register(dictstore_target())
