"""Entry-point plugins: discovery, the allow-list, the block-list, the off switch, and loading failures."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mastra_memory.embedders.base import EmbedResult
from mastra_memory.errors import PluginError
from mastra_memory.plugins import (
    ENV_BLOCK,
    ENV_DISABLE,
    ENV_LOAD,
    build_plugin_manager,
    create_vector,
    embedder_providers,
    list_plugins,
    vector_stores,
)

MakeDistribution = Callable[..., Path]

pytestmark = pytest.mark.usefixtures("entrypoints")


def vector_store_plugin(store: str) -> str:
    """Source of a one-module plugin registering the vector store ``store``."""
    return f"""
        from pydantic import BaseModel
        from mastra_memory.hookspecs import hookimpl

        class Settings(BaseModel):
            pass

        @hookimpl
        def register_vector_stores(register):
            register({store!r}, lambda settings: None, Settings)
        """


def loaded() -> set[str]:
    return {info.name for info in list_plugins() if info.source == "entrypoint"}


@pytest.fixture
def two_plugins(distribution: MakeDistribution) -> None:
    distribution(
        "plugin-alpha", "1.0", {"alpha": "plugin_alpha"}, {"plugin_alpha": vector_store_plugin("alpha")}
    )
    distribution("plugin-beta", "2.0", {"beta": "plugin_beta"}, {"plugin_beta": vector_store_plugin("beta")})


@pytest.mark.usefixtures("dummy_distribution")
async def test_entry_point_plugin_is_discovered_and_usable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_LOAD, "dummy")  # other adapters installed in this environment stay out
    info = next(i for i in list_plugins() if i.name == "dummy")
    assert (info.source, info.version, info.distribution) == (
        "entrypoint",
        "0.3.1",
        "mastra-memory-dummyplugin",
    )
    assert info.vector_stores == ("dummy",)
    assert info.embedder_providers == ("dummy",)
    assert vector_stores()["dummy"].plugin == "dummy"

    store = create_vector("dummy", label="from-test")
    await store.create_index("docs", 2)
    await store.upsert("docs", [[1.0, 0.0], [0.0, 1.0]], ids=["a", "b"])
    assert (await store.describe_index("docs")).count == 2

    embedder = embedder_providers()["dummy"]("chars", {"dimension": 3})
    result = await embedder.embed_many(["abc", "a"])
    assert isinstance(result, EmbedResult)
    assert result.embeddings == [[1.0, 1.0, 1.0], [0.0, 1.0, 0.0]]  # ord('a') % 3 == 1


@pytest.mark.usefixtures("dummy_distribution")
def test_disable_env_var_loads_no_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_DISABLE, "1")
    assert loaded() == set()
    with pytest.raises(PluginError, match="disabled by MASTRA_MEMORY_DISABLE_ENTRYPOINTS"):
        create_vector("dummy")


@pytest.mark.usefixtures("dummy_distribution")
def test_build_plugin_manager_can_force_autoload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_DISABLE, "1")
    monkeypatch.setenv(ENV_LOAD, "dummy")
    assert build_plugin_manager(load_entrypoints=True).has_plugin("dummy")
    assert not build_plugin_manager().has_plugin("dummy")


@pytest.mark.usefixtures("two_plugins")
@pytest.mark.parametrize(
    ("allow", "expected"),
    [("beta", {"beta"}), (" alpha , beta ", {"alpha", "beta"}), ("", set()), ("gamma", set())],
)
def test_allow_list_loads_only_the_named_entry_points(
    monkeypatch: pytest.MonkeyPatch, allow: str, expected: set[str]
) -> None:
    monkeypatch.setenv(ENV_LOAD, allow)
    assert loaded() == expected
    assert {"alpha", "beta"} & set(vector_stores()) == expected


@pytest.mark.usefixtures("two_plugins")
def test_block_list_skips_the_named_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_BLOCK, "alpha")
    assert "alpha" not in loaded()
    assert "beta" in loaded()


@pytest.mark.usefixtures("two_plugins")
def test_block_list_wins_over_the_allow_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_LOAD, "alpha,beta")
    monkeypatch.setenv(ENV_BLOCK, "beta")
    assert loaded() == {"alpha"}


def test_failing_import_names_the_entry_point_and_the_cause(
    distribution: MakeDistribution, monkeypatch: pytest.MonkeyPatch
) -> None:
    distribution(
        "mastra-memory-broken",
        "0.1",
        {"broken": "plugin_broken"},
        {"plugin_broken": "import qdrant_client_xyz\n"},
    )
    monkeypatch.setenv(ENV_LOAD, "broken")
    with pytest.raises(PluginError) as info:
        list_plugins()
    message = str(info.value)
    assert (
        "plugin entry point 'broken' (plugin_broken, from mastra-memory-broken 0.1) failed to import"
        in message
    )
    assert "ModuleNotFoundError" in message
    assert "qdrant_client_xyz" in message
    assert f"{ENV_BLOCK}=broken" in message
    assert isinstance(info.value.__cause__, ModuleNotFoundError)

    monkeypatch.setenv(ENV_BLOCK, "broken")  # the way out the message suggests
    assert loaded() == set()


def test_entry_point_to_a_missing_module_fails_loudly(
    distribution: MakeDistribution, monkeypatch: pytest.MonkeyPatch
) -> None:
    distribution("mastra-memory-ghost", "0.1", {"ghost": "plugin_ghost_not_here"})
    monkeypatch.setenv(ENV_LOAD, "ghost")
    with pytest.raises(PluginError, match=r"'ghost'.*failed to import.*plugin_ghost_not_here"):
        build_plugin_manager()


def test_two_plugins_registering_one_name_are_both_named(
    distribution: MakeDistribution, monkeypatch: pytest.MonkeyPatch
) -> None:
    distribution("plugin-one", "1.0", {"one": "plugin_one"}, {"plugin_one": vector_store_plugin("twin")})
    distribution("plugin-two", "1.0", {"two": "plugin_two"}, {"plugin_two": vector_store_plugin("twin")})
    monkeypatch.setenv(ENV_LOAD, "one,two")
    with pytest.raises(PluginError) as info:
        vector_stores()
    assert "vector store 'twin' is registered by two plugins: 'one' and 'two'" in str(info.value)
    assert info.value.details["plugins"] == ["one", "two"]
    with pytest.raises(PluginError, match="'twin' is registered by two plugins"):
        create_vector("sqlite")
    # Listing still works, so the user can see who clashes.
    assert [i.vector_stores for i in list_plugins() if i.name in {"one", "two"}] == [("twin",), ("twin",)]


def test_plugin_registering_a_builtin_embedder_provider_clashes(
    distribution: MakeDistribution, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = """
        from mastra_memory.hookspecs import hookimpl

        @hookimpl
        def register_embedders(register):
            register("hash", lambda model, options: None)
        """
    distribution("plugin-hash", "1.0", {"myhash": "plugin_hash"}, {"plugin_hash": source})
    monkeypatch.setenv(ENV_LOAD, "myhash")
    with pytest.raises(PluginError, match=r"'mastra_memory\.embedders\.builtin' and 'myhash'"):
        embedder_providers()


def test_one_entry_point_name_in_two_distributions_is_an_error(
    distribution: MakeDistribution, monkeypatch: pytest.MonkeyPatch
) -> None:
    distribution("dist-a", "1.0", {"same": "plugin_same_a"}, {"plugin_same_a": vector_store_plugin("a")})
    distribution("dist-b", "1.0", {"same": "plugin_same_b"}, {"plugin_same_b": vector_store_plugin("b")})
    monkeypatch.setenv(ENV_LOAD, "same")
    with pytest.raises(PluginError, match="plugin name 'same' is used by both dist-a and dist-b"):
        build_plugin_manager()


def test_misspelt_hook_is_reported(distribution: MakeDistribution, monkeypatch: pytest.MonkeyPatch) -> None:
    source = """
        from mastra_memory.hookspecs import hookimpl

        @hookimpl
        def register_vectorstores(register):
            pass
        """
    distribution("plugin-typo", "1.0", {"typo": "plugin_typo"}, {"plugin_typo": source})
    monkeypatch.setenv(ENV_LOAD, "typo")
    with pytest.raises(
        PluginError, match=r"plugin 'typo' implements a hook that does not exist.*register_vectorstores"
    ):
        build_plugin_manager()


def test_wrong_hook_argument_is_reported(
    distribution: MakeDistribution, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = """
        from mastra_memory.hookspecs import hookimpl

        @hookimpl
        def register_storages(add):
            pass
        """
    distribution("plugin-args", "1.0", {"args": "plugin_args"}, {"plugin_args": source})
    monkeypatch.setenv(ENV_LOAD, "args")
    with pytest.raises(PluginError, match="plugin 'args' has an invalid hook implementation"):
        build_plugin_manager()
