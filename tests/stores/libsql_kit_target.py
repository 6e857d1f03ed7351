"""A pytest plugin that gives the conformance kit a ``libsql`` target: the core's LibSQL store on a new file
in Mastra's layout, its storage and its vector store on the same file (docs/spec.md §4.7). The core never
imports the kit and the kit's own built-in targets (``sqlite_targets.py``) are the kit's, so the target
registers at run time, on the kit's target manager, when pytest loads this module
(``-p libsql_kit_target``; test_libsql_conformance.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mastra_memory_conformance.hookspecs import hookimpl
from mastra_memory_conformance.registry import get_target_manager
from mastra_memory_conformance.targets import ConformanceTarget, RegisterConformanceTarget, TargetSettings


@contextmanager
def _provision(tmp: Path) -> Iterator[TargetSettings]:
    url = str(tmp / "local.db")
    yield TargetSettings(vector={"url": url}, storage={"url": url})


def libsql_target() -> ConformanceTarget:
    """``libsql``: the LibSQL store's storage and vector store on one temporary file."""
    return ConformanceTarget(
        name="libsql",
        adapter="libsql",
        kind="embedded",
        provision=_provision,
        description="Mastra's LibSQL layout on a temporary file (memory tables and per-index vector tables)",
        has_vector=True,
        has_storage=True,
    )


@hookimpl
def register_conformance_targets(register: RegisterConformanceTarget) -> None:
    """Register the ``libsql`` target."""
    register(libsql_target())


get_target_manager().register(sys.modules[__name__], name="libsql-kit-target")
