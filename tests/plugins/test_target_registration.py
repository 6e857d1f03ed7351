"""Conformance targets register with the kit, not the core: its own hook, entry-point group and manager.

The kit's manager loads its built-in ``sqlite`` target, then the entry points of the group
``mastra_memory_conformance``, under the core's switches (allow-list, block-list, off switch) applied by
entry-point name.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mastra_memory.errors import PluginError
from mastra_memory.hookspecs import hookimpl
from mastra_memory.plugins import (
    ENV_BLOCK,
    ENV_DISABLE,
    ENV_LOAD,
    get_plugin_manager,
    list_plugins,
    vector_stores,
)
from mastra_memory_conformance.hookspecs import hookimpl as target_hookimpl
from mastra_memory_conformance.registry import (
    BUILTIN_PLUGINS,
    ENTRYPOINT_GROUP,
    available_targets,
    build_target_manager,
    get_target_manager,
    list_target_plugins,
    registered_targets,
)
from mastra_memory_conformance.sqlite_targets import sqlite_target
from mastra_memory_conformance.targets import ConformanceTarget, RegisterConformanceTarget

MakeDistribution = Callable[..., Path]

BUILTIN = "mastra_memory_conformance.sqlite_targets"


def targets_module(*names: str, adapter: str = "mystore") -> str:
    """Source of a ``targets.py`` registering one embedded target per name."""
    targets = ", ".join(repr(n) for n in names)
    return f"""
        from mastra_memory_conformance.hookspecs import hookimpl
        from mastra_memory_conformance.sqlite_targets import sqlite_target
        from mastra_memory_conformance.targets import ConformanceTarget

        @hookimpl
        def register_conformance_targets(register):
            for name in ({targets},):
                register(ConformanceTarget(name, {adapter!r}, "embedded", sqlite_target().provision))
        """


STORE_MODULE = """
    from pydantic import BaseModel
    from mastra_memory.hookspecs import hookimpl

    class Settings(BaseModel):
        pass

    @hookimpl
    def register_vector_stores(register):
        register("mystore", lambda settings: None, Settings)
    """


@pytest.fixture
def adapter(distribution: MakeDistribution) -> None:
    """``mastra-memory-mystore``: its store in the core's group, its targets in the kit's, both named
    ``mystore``."""
    distribution(
        "mastra-memory-mystore",
        "1.2.0",
        {"mystore": "mystore_plugin"},
        {"mystore_plugin": STORE_MODULE, "mystore_targets": targets_module("mystore", "mystore-url")},
        also={ENTRYPOINT_GROUP: {"mystore": "mystore_targets"}},
    )


def test_the_core_has_no_conformance_hook_and_lists_no_target() -> None:
    assert "register_conformance_targets" not in get_plugin_manager().hook_names()
    assert get_target_manager().hook_names() == ["register_conformance_targets"]
    assert all(not hasattr(info, "conformance_targets") for info in list_plugins())


def test_builtins_only_in_the_projects_own_tests() -> None:
    # tests/conftest.py turns entry points off, so installed adapters' targets stay out.
    assert os.environ[ENV_DISABLE] == "1"
    assert [name for name, _ in get_target_manager().list_name_plugin()] == list(BUILTIN_PLUGINS) == [BUILTIN]
    assert available_targets() == ["sqlite"]


@pytest.mark.usefixtures("entrypoints", "adapter")
def test_an_adapters_targets_come_from_the_kits_entry_point_group(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_LOAD, "mystore")  # the adapters installed in this environment stay out
    plugin = next(p for p in list_target_plugins() if p.name == "mystore")
    assert (plugin.source, plugin.distribution, plugin.version) == (
        "entrypoint",
        "mastra-memory-mystore",
        "1.2.0",
    )
    assert [t.name for t in plugin.targets] == ["mystore", "mystore-url"]
    assert available_targets("mystore") == ["mystore", "mystore-url"]
    assert list(registered_targets()) == ["sqlite", "mystore", "mystore-url"]  # built-ins first
    # The core loaded the store from the same distribution and knows nothing of its targets.
    assert vector_stores()["mystore"].plugin == "mystore"


@pytest.mark.usefixtures("entrypoints", "adapter")
@pytest.mark.parametrize(
    ("variable", "value"), [(ENV_BLOCK, "mystore"), (ENV_LOAD, "someotherstore"), (ENV_DISABLE, "1")]
)
def test_the_cores_switches_apply_to_targets_by_entry_point_name(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    assert available_targets("mystore") == []
    assert "sqlite" in available_targets()  # built-ins always load
    assert "mystore" not in vector_stores()  # one switch: the store and its targets together


@pytest.mark.usefixtures("entrypoints")
def test_a_target_module_in_the_cores_group_registers_no_target(
    distribution: MakeDistribution, monkeypatch: pytest.MonkeyPatch
) -> None:
    distribution(
        "old-style", "0.1", {"oldstyle": "oldstyle_targets"}, {"oldstyle_targets": targets_module("x")}
    )
    monkeypatch.setenv(ENV_LOAD, "oldstyle")
    assert "x" not in available_targets()  # only the kit's group is read for targets
    assert "oldstyle" in {info.name for info in list_plugins()}  # and its kit hook means nothing to the core


@pytest.mark.usefixtures("entrypoints")
def test_a_failing_target_module_names_its_entry_point_and_group(
    distribution: MakeDistribution, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = "import mystore_client_that_is_missing\n"
    distribution(
        "mastra-memory-broken",
        "0.1",
        {"broken": "broken_targets"},
        {"broken_targets": broken},
        group=ENTRYPOINT_GROUP,
    )
    monkeypatch.setenv(ENV_LOAD, "broken")
    with pytest.raises(PluginError) as raised:
        registered_targets()
    assert (
        "plugin entry point 'broken' (broken_targets, from mastra-memory-broken 0.1) failed to import"
        in str(raised.value)
    )
    assert f"{ENV_BLOCK}=broken" in str(raised.value)
    assert raised.value.details["group"] == ENTRYPOINT_GROUP


def test_a_registration_that_is_not_a_target_names_the_plugin() -> None:
    class Sloppy:
        @target_hookimpl
        def register_conformance_targets(self, register: RegisterConformanceTarget) -> None:
            register("mystore-url")  # type: ignore[arg-type]

    get_target_manager().register(Sloppy(), name="sloppy")
    with pytest.raises(PluginError, match="plugin 'sloppy' registered 'mystore-url' as a conformance target"):
        registered_targets()


def test_two_targets_with_one_name_name_both_plugins() -> None:
    class Twin:
        @target_hookimpl
        def register_conformance_targets(self, register: RegisterConformanceTarget) -> None:
            register(ConformanceTarget("sqlite", "sqlite", "native", sqlite_target().provision))

    get_target_manager().register(Twin(), name="twin")
    with pytest.raises(PluginError, match=rf"named 'sqlite' \(plugins '{BUILTIN}' and 'twin'\); rename one"):
        registered_targets()


def test_an_exception_in_the_target_hook_names_plugin_and_hook() -> None:
    class Crashes:
        @target_hookimpl
        def register_conformance_targets(self, register: RegisterConformanceTarget) -> None:
            raise KeyError("MYSTORE_HOME")

    get_target_manager().register(Crashes(), name="crashes")
    with pytest.raises(
        PluginError, match="plugin 'crashes' failed in register_conformance_targets: KeyError"
    ):
        available_targets()


def test_the_old_core_target_hook_fails_and_says_where_targets_go() -> None:
    class OldStyle:
        @hookimpl
        def register_conformance_targets(self, register: object) -> None:
            raise AssertionError("never called")

    get_plugin_manager().register(OldStyle(), name="oldstyle")
    with pytest.raises(PluginError, match="implements a hook that does not exist") as raised:
        list_plugins()
    assert "registered with the conformance kit's own hook and entry-point group" in str(raised.value)


@pytest.mark.usefixtures("adapter")
def test_build_target_manager_can_force_autoload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_DISABLE, "1")
    monkeypatch.setenv(ENV_LOAD, "mystore")
    assert build_target_manager(load_entrypoints=True).has_plugin("mystore")
    assert not build_target_manager().has_plugin("mystore")


def test_the_registry_module_lists_the_targets() -> None:
    env = {**os.environ, ENV_DISABLE: "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mastra_memory_conformance.registry", "--adapter", "sqlite"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    name, kind, adapter_name, plugin, description = line.split("\t")
    assert (name, kind, adapter_name) == ("sqlite", "embedded", "sqlite")
    assert plugin.startswith(f"{BUILTIN} (mastra-memory-conformance ")
    assert description == "the embedded SQLite store on a temporary file"
