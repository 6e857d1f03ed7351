"""What a plugin may register, checked when the hooks run; plugins registered in-process."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from mastra_memory.errors import PluginError
from mastra_memory.hookspecs import hookimpl
from mastra_memory.plugins import (
    RegisterEmbedder,
    RegisterStorage,
    RegisterVectorStore,
    get_plugin_manager,
    list_plugins,
    storages,
    vector_stores,
)


class Settings(BaseModel):
    url: str = "x"


class Everything:
    """A plugin using all three hooks."""

    @hookimpl
    def register_vector_stores(self, register: RegisterVectorStore) -> None:
        register("everything", lambda settings: None, Settings)

    @hookimpl
    def register_storages(self, register: RegisterStorage) -> None:
        register("everything", lambda settings: None, Settings)

    @hookimpl
    def register_embedders(self, register: RegisterEmbedder) -> None:
        register("everything", lambda model, options: None)


def test_plugin_registered_in_process_provides_through_every_hook() -> None:
    get_plugin_manager().register(Everything(), name="everything")
    info = next(i for i in list_plugins() if i.name == "everything")
    assert info.source == "runtime"
    assert info.version is None
    assert info.vector_stores == info.storages == info.embedder_providers == ("everything",)
    assert vector_stores()["everything"].settings_model is Settings
    assert storages()["everything"].plugin == "everything"


class Registers:
    """A plugin that registers one vector store with the given arguments."""

    def __init__(self, *args: Any) -> None:
        self.args = args

    @hookimpl
    def register_vector_stores(self, register: Any) -> None:
        register(*self.args)


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("Bad Name", lambda s: None, Settings), "registered the vector store name 'Bad Name'"),
        (("", lambda s: None, Settings), "registered the vector store name ''"),
        (("ok", "not callable", Settings), "registered vector store 'ok' with a non-callable factory"),
        (("ok", lambda s: None, dict), "with settings model <class 'dict'>; it must be a pydantic BaseModel"),
    ],
)
def test_invalid_registration_names_the_plugin(args: tuple[Any, ...], problem: str) -> None:
    get_plugin_manager().register(Registers(*args), name="sloppy")
    with pytest.raises(PluginError, match="plugin 'sloppy' ") as info:
        vector_stores()
    assert problem in str(info.value)


def test_same_name_twice_in_one_plugin() -> None:
    class Twice:
        @hookimpl
        def register_storages(self, register: RegisterStorage) -> None:
            register("again", lambda s: None, Settings)
            register("again", lambda s: None, Settings)

    get_plugin_manager().register(Twice(), name="twice")
    with pytest.raises(PluginError, match="storage 'again' is registered by plugin 'twice' twice"):
        storages()


def test_exception_inside_a_hook_names_plugin_and_hook() -> None:
    class Crashes:
        @hookimpl
        def register_embedders(self, register: RegisterEmbedder) -> None:
            raise KeyError("SOME_SETTING")

    get_plugin_manager().register(Crashes(), name="crashes")
    with pytest.raises(PluginError, match="plugin 'crashes' failed in register_embedders: KeyError") as info:
        list_plugins()
    assert isinstance(info.value.__cause__, KeyError)
