"""How the conformance kit obtains a live dict store: ``pytest --pyargs mastra_memory_conformance
--target dictstore``.

The backend is this process. Each provisioned target gets its own named space, so every store the kit
builds from the target's settings sees the same indexes — as stores connected to one server would —
and the space is dropped when the kit moves on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mastra_memory_conformance.targets import ConformanceTarget, TargetSettings

from .store import DictStoreVector


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
