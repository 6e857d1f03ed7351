"""Names and URLs to things: the registered vector stores, storages and embedder providers by name, and
``create_vector``/``create_storage``, which build one from a name or a URL with validated settings."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from ..errors import ConfigError, MastraMemoryError, PluginError, pydantic_problems
from .manager import ENV_DISABLE, ENV_LOAD, entrypoints_disabled
from .registry import Registration, collect, unique

if TYPE_CHECKING:
    from ..embedders.base import EmbedderFactory
    from ..storage import MemoryStorage
    from ..vector import MastraVector

T = TypeVar("T")

#: Backends with an adapter distribution installable as an extra (``pip install "mastra-memory[qdrant]"``).
ADAPTER_EXTRAS = frozenset(
    {"qdrant", "pinecone", "mongodb", "pgvector", "lancedb", "opensearch", "s3vectors"}
)

#: Well-known URL schemes that name no plugin: scheme -> (what the URL is, the scheme that selects the plugin
#: serving it, an example). A hint only: the scheme stays the plugin's name, so no adapter is imported here.
SCHEME_ALIASES: Mapping[str, tuple[str, str, str]] = {
    "postgres": ("A PostgreSQL URL", "pgvector", "pgvector://user:password@host:5432/db"),
    "postgresql": ("A PostgreSQL URL", "pgvector", "pgvector://user:password@host:5432/db"),
}


def vector_stores() -> dict[str, Registration[MastraVector]]:
    """Every registered vector store by name. PluginError if two plugins register the same name."""
    provided = collect().values()
    return unique("vector store", ((r.name, r.plugin, r) for p in provided for r in p.vector_stores))


def storages() -> dict[str, Registration[MemoryStorage]]:
    """Every registered memory storage by name. PluginError if two plugins register the same name."""
    provided = collect().values()
    return unique("storage", ((r.name, r.plugin, r) for p in provided for r in p.storages))


def embedder_providers() -> dict[str, EmbedderFactory]:
    """Every registered model-router provider and its factory. PluginError on a duplicate provider."""
    provided = collect().values()
    return unique(
        "embedder provider", ((r.provider, r.plugin, r.factory) for p in provided for r in p.embedders)
    )


def _install_hint(name: str) -> str:
    if name in ADAPTER_EXTRAS:
        hint = f'install its adapter: pip install "mastra-memory[{name}]"'
    else:
        hint = (
            "install the plugin distribution that provides it (`mastra-memory plugins` lists the loaded ones)"
        )
    if entrypoints_disabled():
        hint += f"; entry-point plugins are disabled by {ENV_DISABLE}"
    elif os.environ.get(ENV_LOAD) is not None:
        hint += f"; only the plugins in {ENV_LOAD} are loaded"
    return hint


def _remedy(name: str, registry: Mapping[str, Any]) -> str:
    """What to do about an unknown plugin name: the scheme that serves a well-known URL alias, or how to
    install the plugin."""
    alias = SCHEME_ALIASES.get(name.split("+", 1)[0])
    if alias is None:
        return f"To use {name!r}, {_install_hint(name)}"
    what, plugin, example = alias
    hint = f"{what} is served by the {plugin} plugin: give it the scheme {plugin}://, as in {example}"
    return hint if plugin in registry else f"{hint}; {_install_hint(plugin)}"


def _split_url(kind: str, name_or_url: str, settings: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if not isinstance(name_or_url, str) or not name_or_url:
        raise ConfigError(f"{kind}: expected a registered name or a URL such as sqlite:///memory.db")
    if "://" not in name_or_url:
        return name_or_url, settings
    if "url" in settings:
        raise ConfigError(f"{kind} {name_or_url!r}: the URL is given twice; drop the url= setting")
    # The scheme names the plugin; the whole URL is the plugin's `url` setting.
    return name_or_url.split("://", 1)[0].lower(), {**settings, "url": name_or_url}


def _settings(kind: str, reg: Registration[T], settings: dict[str, Any], from_url: bool) -> BaseModel:
    model = reg.settings_model
    if from_url and "url" not in model.model_fields:
        raise ConfigError(
            f"{kind} {reg.name!r} takes no URL; pass its name and the settings of {model.__name__} "
            f"({', '.join(model.model_fields)}) instead",
        )
    try:
        # Calling the model (not model_validate) lets pydantic-settings models read their env vars.
        return model(**settings)
    except PydanticValidationError as exc:
        problems = pydantic_problems(exc, root="(settings)")
        raise ConfigError(
            f"invalid settings for {kind} {reg.name!r} ({model.__name__}): {'; '.join(problems)}",
            details={"name": reg.name, "plugin": reg.plugin, "problems": problems},
        ) from None


def _build(
    kind: str,
    registry: Mapping[str, Registration[T]],
    name_or_url: str,
    settings: dict[str, Any],
    expected: type[Any],  # T itself; an abstract class cannot be passed as type[T]
) -> T:
    name, settings = _split_url(kind, name_or_url, settings)
    reg = registry.get(name)
    if reg is None:
        available = ", ".join(sorted(registry)) or "none"
        raise PluginError(
            f"no {kind} named {name!r}; available: {available}. {_remedy(name, registry)}",
            details={"name": name, "available": sorted(registry)},
        )
    validated = _settings(kind, reg, settings, from_url="://" in name_or_url)
    try:
        built = reg.factory(validated)
    except MastraMemoryError:
        raise
    except Exception as exc:
        raise PluginError(
            f"{kind} {reg.name!r} (plugin {reg.plugin!r}) could not be created: {type(exc).__name__}: {exc}",
        ) from exc
    if not isinstance(built, expected):
        raise PluginError(
            f"the factory of {kind} {name_or_url!r} returned {type(built).__name__}, not {expected.__name__}"
        )
    return built


def create_vector(name_or_url: str, **settings: Any) -> MastraVector:
    """Build a registered vector store by name (``create_vector("qdrant", url=...)``) or URL.

    Args:
        name_or_url: a plugin name (``"qdrant"``) or a URL whose scheme names the plugin; the URL becomes
            its ``url`` setting (``sqlite:///memory.db``).
        **settings: the plugin's settings, validated by its settings model.

    Returns:
        The vector store, as the plugin's factory built it.

    Raises:
        ConfigError: the settings are invalid (every problem listed).
        PluginError: no plugin of that name is installed (the available ones listed), or its factory
            failed.
    """
    from ..vector import MastraVector  # the store protocol pulls in the filter machinery: load on use

    return _build("vector store", vector_stores(), name_or_url, settings, MastraVector)


def create_storage(name_or_url: str, **settings: Any) -> MemoryStorage:
    """Build a registered memory storage by name (``create_storage("sqlite", url=...)``) or URL.

    Same rules as [`create_vector`][mastra_memory.create_vector].

    Args:
        name_or_url: a plugin name (``"sqlite"``) or a URL whose scheme names the plugin.
        **settings: the plugin's settings, validated by its settings model.

    Returns:
        The storage, as the plugin's factory built it.

    Raises:
        ConfigError: the settings are invalid (every problem listed).
        PluginError: no plugin of that name is installed (the available ones listed), or its factory
            failed.
    """
    from ..storage import MemoryStorage

    return _build("storage", storages(), name_or_url, settings, MemoryStorage)
