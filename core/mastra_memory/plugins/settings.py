"""The base of every store's settings: keywords first, then ``<env_prefix><FIELD>`` environment variables.

Every adapter's settings (and the built-in SQLite store's) subclass :class:`StoreSettings`, so a setting is
taken the same way everywhere, on pydantic-settings:

* a keyword is a field's name, its camelCase spelling (``apiKey``) or another spelling the class lists in
  :attr:`StoreSettings.spellings` (Mastra's names: ``uri``, ``dbName``); one field under two spellings
  with different values is refused (:func:`~mastra_memory.plugins.aliases.rename_aliases`);
* a field no keyword gives, under any spelling, is read from ``<env_prefix><FIELD>`` (``env_prefix`` of
  the class's ``model_config``, such as ``MASTRA_MEMORY_QDRANT_``), then from the variables the class
  lists in :attr:`StoreSettings.env_fallbacks`; an empty variable counts as unset, and complex fields
  (lists, dicts) take JSON. A keyword always wins, even one given as ``None``;
* a class with a rule about which variables apply (Qdrant reads its mode variables only when no mode is
  given) overrides :meth:`StoreSettings.from_environment`.

Spellings are keywords only, never variable names: pydantic-settings reads a field's ``validation_alias``
from the environment *without* the prefix, so an alias such as ``region`` would let an unrelated
``REGION`` variable redirect a store. That is why spellings are renamed by a validator instead.

``Settings(**keywords)`` and ``Settings.model_validate(keywords)`` both read the environment
(pydantic-settings reads it in ``__init__``, which pydantic's validation calls).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Self, cast

from pydantic import model_validator
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from .aliases import rename_aliases

if TYPE_CHECKING:
    # To mypy a store's settings are a plain model: pydantic's mypy plugin gives every BaseSettings subclass
    # a constructor with pydantic-settings' own typed ``_env_file``-style parameters, so that
    # ``Settings(**options)`` would not type-check for a dict of options. At run time it is BaseSettings.
    from pydantic import BaseModel as _Base
else:
    from pydantic_settings import BaseSettings as _Base

__all__ = ["StoreSettings"]


class StoreSettings(_Base):
    """Settings of a registered store, from keywords and the ``<env_prefix><FIELD>`` variables.

    A subclass sets ``model_config = SettingsConfigDict(env_prefix="MASTRA_MEMORY_<STORE>_")`` (required:
    without a prefix, a field ``url`` would be read from a variable named ``URL``) and may set
    :attr:`spellings`, :attr:`env_fallbacks` and override :meth:`from_environment`. Unknown keywords are
    refused.
    """

    # No .env file or secrets directory: a store's settings come from its caller and the process only.
    model_config = SettingsConfigDict(extra="forbid", env_ignore_empty=True)

    #: Other keyword spellings by the field they name, besides the camelCase spelling of every field.
    spellings: ClassVar[Mapping[str, str]] = {}
    #: Variables (full names) read in order for a field whose ``<env_prefix><FIELD>`` variable is unset.
    env_fallbacks: ClassVar[Mapping[str, tuple[str, ...]]] = {}

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        prefix = cls.model_config.get("env_prefix") or ""
        if not prefix.endswith("_"):
            raise TypeError(
                f"{cls.__name__} needs an env_prefix in its model_config, such as 'MASTRA_MEMORY_<STORE>_' "
                f"(got {prefix!r}): without one its fields are read from unprefixed variables"
            )
        unknown = sorted({*cls.spellings.values(), *cls.env_fallbacks} - set(cls.model_fields))
        if unknown:
            raise TypeError(f"{cls.__name__}: spellings or env_fallbacks name no field: {', '.join(unknown)}")

    @classmethod
    def given(cls, settings: Self | str | None) -> Self:
        """The settings a store's constructor was given: settings as they are, a string as the ``url``
        field (with the other fields from the environment), or ``None`` for the environment alone."""
        if isinstance(settings, str):
            return cls.model_validate({"url": settings})
        return settings if settings is not None else cls()

    @classmethod
    def keyword_spellings(cls) -> dict[str, str]:
        """Every accepted keyword other than a field's own name, to the field it names."""
        camel = {to_camel(name): name for name in cls.model_fields if to_camel(name) != name}
        return {**camel, **cls.spellings}

    @classmethod
    def from_environment(cls, keywords: Mapping[str, Any], found: dict[str, Any]) -> dict[str, Any]:
        """The environment's values to use, given the ``keywords`` (by field name) of this call.

        ``found`` holds, by field name, the variables that are set for the fields no keyword gave. The
        default uses them all; a subclass drops those its rules exclude.
        """
        return found

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Keywords, then the environment as :class:`_Environment` filters it (no dotenv, no secrets)."""
        return init_settings, _Environment(cls, variables=env_settings, keywords=init_settings)

    @model_validator(mode="before")
    @classmethod
    def _rename_spellings(cls, data: Any) -> Any:
        return rename_aliases(data, cls.keyword_spellings())


class _Environment(PydanticBaseSettingsSource):
    """The ``<env_prefix><FIELD>`` variables of the fields no keyword gave, then the class's fallbacks,
    then its :meth:`~StoreSettings.from_environment` rule."""

    def __init__(
        self,
        settings_cls: type[StoreSettings],
        *,
        variables: PydanticBaseSettingsSource,
        keywords: PydanticBaseSettingsSource,
    ) -> None:
        super().__init__(cast("type[BaseSettings]", settings_cls))
        self._store = settings_cls
        self._variables = variables
        self._keywords = keywords

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        # Unused: __call__ reads every field through the pydantic-settings sources it wraps.
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        spellings = self._store.keyword_spellings()
        # Renamed leniently here; two spellings of one field are refused by the model's validator.
        keywords = {spellings.get(key, key): value for key, value in self._keywords().items()}
        found = {name: value for name, value in self._variables().items() if name not in keywords}
        for name, variables in self._store.env_fallbacks.items():
            if name not in keywords and name not in found:
                value = next((os.environ[v] for v in variables if os.environ.get(v)), None)
                if value is not None:
                    found[name] = value
        return self._store.from_environment(keywords, found)
