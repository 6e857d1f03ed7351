"""Fixtures for the plugin tests: fresh plugin managers per test, and real distributions on sys.path.

``distribution`` writes an installed distribution (a ``.dist-info`` directory with ``entry_points.txt``
plus its modules) into a temporary directory and puts it on ``sys.path``, which is exactly what
``importlib.metadata`` scans; entry-point discovery then runs unchanged.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from mastra_memory.plugins import ENTRYPOINT_GROUP, ENV_BLOCK, ENV_DISABLE, ENV_LOAD, reset_plugin_manager
from mastra_memory_conformance.registry import reset_target_manager

FIXTURES = Path(__file__).parent / "fixtures"
DUMMY_PROJECT = FIXTURES / "mastra-memory-dummyplugin"
DUMMY_SRC = DUMMY_PROJECT / "src"

MakeDistribution = Callable[..., Path]


@pytest.fixture(autouse=True)
def fresh_plugin_manager() -> Iterator[None]:
    """Every test builds its own managers (the core's and the kit's) from the environment it sets up."""
    reset_plugin_manager()
    reset_target_manager()
    yield
    reset_plugin_manager()
    reset_target_manager()


@pytest.fixture
def entrypoints(monkeypatch: pytest.MonkeyPatch) -> None:
    """Opt in to entry-point autoload (tests/conftest.py disables it for the project's tests)."""
    monkeypatch.setenv(ENV_DISABLE, "0")
    monkeypatch.delenv(ENV_LOAD, raising=False)
    monkeypatch.delenv(ENV_BLOCK, raising=False)


@pytest.fixture
def distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MakeDistribution]:
    """``distribution(name, version, entry_points, modules)`` installs a distribution onto sys.path.

    ``entry_points`` maps entry-point names to ``module[:attr]`` in the group ``group`` (default: the
    core's ``mastra_memory``; ``also`` adds entry points of further groups); ``modules`` maps module names
    to their source. Modules imported from it are removed from ``sys.modules`` afterwards.
    """
    site = tmp_path / "site-packages"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    modules: list[str] = []

    def make(
        name: str,
        version: str,
        entry_points: Mapping[str, str],
        modules_source: Mapping[str, str] | None = None,
        *,
        group: str = ENTRYPOINT_GROUP,
        also: Mapping[str, Mapping[str, str]] | None = None,
    ) -> Path:
        info = site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        groups = {group: entry_points, **(also or {})}
        (info / "entry_points.txt").write_text(
            "".join(
                f"[{g}]\n" + "".join(f"{ep} = {v}\n" for ep, v in eps.items()) for g, eps in groups.items()
            )
        )
        for module, source in (modules_source or {}).items():
            (site / f"{module}.py").write_text(textwrap.dedent(source))
            modules.append(module)
        return info

    yield make
    for module in modules:
        sys.modules.pop(module, None)


@pytest.fixture
def dummy_distribution(distribution: MakeDistribution, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The fixture distribution ``mastra-memory-dummyplugin`` (source tree on sys.path, metadata beside)."""
    monkeypatch.syspath_prepend(str(DUMMY_SRC))
    distribution("mastra-memory-dummyplugin", "0.3.1", {"dummy": "mastra_memory_dummyplugin.plugin"})
    yield
    for module in [m for m in sys.modules if m.startswith("mastra_memory_dummyplugin")]:
        del sys.modules[module]
