"""The ``sqlite`` target of the core's embedded store: a built-in plugin of the kit.

It lives here rather than beside the store because the core never imports the kit; the kit registers it
through its own hook, like any adapter's ``testing/targets.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .hookspecs import hookimpl
from .targets import DEFAULT_DIMENSION, ConformanceTarget, RegisterConformanceTarget, TargetSettings

__all__ = ["register_conformance_targets", "sqlite_target"]


def sqlite_target() -> ConformanceTarget:
    """The ``sqlite`` target: the embedded store on a fresh temporary file (vectors and storage share it)."""

    @contextmanager
    def provision(tmp: Path) -> Iterator[TargetSettings]:
        url = str(tmp / "conformance.db")
        yield TargetSettings(
            vector={"url": url}, storage={"url": url}, options={"dimension": DEFAULT_DIMENSION}
        )

    return ConformanceTarget(
        name="sqlite",
        adapter="sqlite",
        kind="embedded",
        provision=provision,
        description="the embedded SQLite store on a temporary file",
        has_storage=True,
    )


@hookimpl
def register_conformance_targets(register: RegisterConformanceTarget) -> None:
    """Register the ``sqlite`` target."""
    register(sqlite_target())
