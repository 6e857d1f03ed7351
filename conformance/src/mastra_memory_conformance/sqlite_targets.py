"""The ``sqlite`` target of the core's embedded store: a built-in plugin of the kit.

It lives here rather than beside the store because the core never imports the kit; the kit registers it
through its own hook, like any adapter's ``testing/targets.py``.
"""

from __future__ import annotations

from .hookspecs import hookimpl
from .targets import (
    DEFAULT_DIMENSION,
    ConformanceTarget,
    RegisterConformanceTarget,
    embedded_target,
)

__all__ = ["register_conformance_targets", "sqlite_target"]


def sqlite_target() -> ConformanceTarget:
    """The ``sqlite`` target: the embedded store on a fresh temporary file (vectors and storage share it)."""
    return embedded_target(
        "sqlite",
        "conformance.db",
        name="sqlite",
        storage_setting="url",
        options={"dimension": DEFAULT_DIMENSION},
        description="the embedded SQLite store on a temporary file",
    )


@hookimpl
def register_conformance_targets(register: RegisterConformanceTarget) -> None:
    """Register the ``sqlite`` target."""
    register(sqlite_target())
