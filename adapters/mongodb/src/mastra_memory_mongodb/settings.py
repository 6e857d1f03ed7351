"""Settings of the MongoDB adapter: which server, which database, how the vector store searches.

Every field can also come from the environment with the prefix ``MASTRA_MEMORY_MONGODB_``
(``MASTRA_MEMORY_MONGODB_URL``, or ``..._URI`` when that is unset, ``MASTRA_MEMORY_MONGODB_DB_NAME``,
``MASTRA_MEMORY_MONGODB_SEARCH_MODE``, ``MASTRA_MEMORY_MONGODB_LAYOUT``, ...); explicit arguments win.
Mastra's names are accepted too:
``uri`` and ``connectionString`` for ``url``, ``dbName`` for ``db_name``, and camelCase spellings of every
field (``collectionPrefix``, ``maxPoolSize``, ``serverSelectionTimeoutMS``, ``timeoutMS``, ``searchMode``,
``filterFields``, ...).

Every call is bounded: ``server_selection_timeout_ms`` bounds finding a server, ``connect_timeout_ms``
opening a connection, and ``timeout_ms`` (pymongo's client-side operation timeout, sent to the server as
``maxTimeMS``) each whole operation, retries included.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final, Literal

from mastra_memory.plugins.settings import StoreSettings
from pydantic import Field, ValidationInfo, field_validator, model_validator
from pydantic_settings import SettingsConfigDict

__all__ = ["ENV_PREFIX", "Dialect", "MongoDBSettings", "SearchMode", "StorageLayout"]

ENV_PREFIX: Final = "MASTRA_MEMORY_MONGODB_"

SearchMode = Literal["auto", "atlas", "exact"]
"""``atlas``: ``$vectorSearch`` over an Atlas Vector Search index the adapter manages; ``exact``: every
matching document is scored (any MongoDB, FerretDB); ``auto``: ``atlas`` when the server has Atlas Search
(``listSearchIndexes`` answers), else ``exact``."""

Dialect = Literal["mongodb", "ferretdb"]
"""Which server speaks the wire protocol. ``ferretdb`` (FerretDB v1) lacks ``$expr`` and answers
``$elemMatch`` over documents wrongly, so the adapter evaluates those parts of a filter itself (see
:mod:`.capabilities`). The store refuses to run with ``mongodb`` against a FerretDB server."""

StorageLayout = Literal["mastra-memory", "mastra"]
"""The documents the memory storage works on (docs/spec.md §4.7): this project's own, or
``@mastra/mongodb``'s (to share one database with a Mastra app)."""

#: Mastra's and pymongo's names; the camelCase spelling of every field (``dbName``) is accepted as well.
_SPELLINGS: Final = {
    "uri": "url",
    "connectionString": "url",
    "connection_string": "url",
    "database": "db_name",
    "serverSelectionTimeoutMS": "server_selection_timeout_ms",
    "connectTimeoutMS": "connect_timeout_ms",
    "timeoutMS": "timeout_ms",
}
_SCHEMES: Final = re.compile(r"^mongodb(\+srv)?://", re.IGNORECASE)
_PASSWORD: Final = re.compile(r"(://[^:/@]*:)[^@/]*@")
_PREFIX: Final = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,40}$")
_DB_NAME: Final = re.compile(r"^[^/\\. \"$*<>:|?\x00]{1,63}$")
#: The names MongoDB restricts, by field: the pattern and what the message says of a name that fails it.
_NAMES: Final = {
    "db_name": (_DB_NAME, 'is not a MongoDB database name (1-63 characters, none of /\\. "$*<>:|?)'),
    "collection_prefix": (
        _PREFIX,
        "must be 1-41 letters, digits, '_', '.' or '-' and not start with '.' or '-'",
    ),
}


class MongoDBSettings(StoreSettings):
    """How to reach MongoDB (or a MongoDB wire-protocol server) and how to use it.

    Attributes:
        url: a MongoDB connection string (``mongodb://...`` or ``mongodb+srv://...``); aliases ``uri``,
            ``connectionString``.
        db_name: the database of every collection the adapter creates (alias ``dbName``).
        collection_prefix: prepended to every collection name (``mastra_threads``, ``mastra_vec_<index>``).
        max_pool_size, min_pool_size: bounds of pymongo's connection pool.
        server_selection_timeout_ms: how long to look for a usable server before failing.
        connect_timeout_ms: how long opening one connection may take.
        timeout_ms: the bound of every operation (pymongo's ``timeoutMS``), retries included.
        search_mode: ``auto``, ``atlas`` or ``exact`` (see :data:`SearchMode`).
        dialect: ``mongodb`` or ``ferretdb`` (see :data:`Dialect`).
        num_candidates_factor: ``$vectorSearch`` ``numCandidates`` is ``top_k`` times this (atlas mode),
            at least 100 and at most ``max_num_candidates``; a query may pass ``num_candidates``.
        max_num_candidates: Atlas's ceiling of ``numCandidates`` (10,000).
        filter_fields: metadata paths indexed as Atlas ``filter`` fields besides ``thread_id`` and
            ``resource_id``; a ``$vectorSearch`` pre-filters only on indexed fields.
        search_index_timeout: seconds to wait for an Atlas search index to become queryable.
        app_name: shown in the server's logs and ``currentOp``.
        layout: the collections the memory storage works on (docs/spec.md §4.7): ``"mastra-memory"``
            (this project's own, the default) or ``"mastra"`` (``@mastra/mongodb``'s collections and
            documents, to share one database with a Mastra app; then ``collection_prefix`` must stay
            ``mastra_``, the names Mastra uses). A database holding the other layout is refused with
            ``StorageLayoutError``. The vector store does not use it.
    """

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, frozen=True)
    spellings: ClassVar[Mapping[str, str]] = _SPELLINGS
    env_fallbacks: ClassVar[Mapping[str, tuple[str, ...]]] = {"url": (f"{ENV_PREFIX}URI",)}

    url: str | None = None
    db_name: str = "mastra"
    collection_prefix: str = "mastra_"
    max_pool_size: int = Field(default=10, ge=1)
    min_pool_size: int = Field(default=0, ge=0)
    server_selection_timeout_ms: int = Field(default=10_000, ge=1)
    connect_timeout_ms: int = Field(default=10_000, ge=1)
    timeout_ms: int = Field(default=60_000, ge=1)
    search_mode: SearchMode = "auto"
    dialect: Dialect = "mongodb"
    num_candidates_factor: int = Field(default=20, ge=1, le=10_000)
    max_num_candidates: int = Field(default=10_000, ge=1)
    filter_fields: tuple[str, ...] = ()
    search_index_timeout: float = Field(default=300.0, gt=0)
    app_name: str = "mastra-memory"
    layout: StorageLayout = "mastra-memory"

    @field_validator("url")
    @classmethod
    def _known_scheme(cls, value: str | None) -> str | None:
        if value is not None and not _SCHEMES.match(value):
            raise ValueError("url must be a MongoDB connection string (mongodb:// or mongodb+srv://)")
        return value

    @field_validator("db_name", "collection_prefix")
    @classmethod
    def _name(cls, value: str, info: ValidationInfo) -> str:
        pattern, rule = _NAMES[info.field_name or ""]
        if not pattern.fullmatch(value):
            raise ValueError(f"{info.field_name} {value!r} {rule}")
        return value

    @field_validator("filter_fields")
    @classmethod
    def _fields(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for path in value:
            if not path or any(not part or part.startswith("$") for part in path.split(".")):
                raise ValueError(f"filter_fields: {path!r} is not a dotted metadata path")
        return tuple(dict.fromkeys(value))

    @model_validator(mode="after")
    def _checks(self) -> MongoDBSettings:
        if self.url is None:
            raise ValueError(
                "no MongoDB connection string: pass url= (or uri=), or set MASTRA_MEMORY_MONGODB_URL"
            )
        if self.layout == "mastra" and self.collection_prefix != "mastra_":
            # Mastra's MongoDBStore has fixed collection names; another prefix would share nothing.
            raise ValueError(
                "layout='mastra' works on Mastra's own collections (mastra_threads, mastra_messages, "
                f"mastra_resources): leave collection_prefix at 'mastra_' (got {self.collection_prefix!r})"
            )
        if self.min_pool_size > self.max_pool_size:
            raise ValueError("min_pool_size must not exceed max_pool_size")
        return self

    def describe(self) -> str:
        """Where the adapter connects, without the password (for error messages)."""
        shown = _PASSWORD.sub(r"\1***@", self.url or "")
        return f"{shown} (database {self.db_name})"

    def client_options(self) -> dict[str, Any]:
        """Keyword arguments of :class:`pymongo.AsyncMongoClient`."""
        from datetime import UTC

        return {
            "maxPoolSize": self.max_pool_size,
            "minPoolSize": self.min_pool_size,
            "serverSelectionTimeoutMS": self.server_selection_timeout_ms,
            "connectTimeoutMS": self.connect_timeout_ms,
            "timeoutMS": self.timeout_ms,
            "appname": self.app_name,
            "tz_aware": True,
            "tzinfo": UTC,
            "uuidRepresentation": "standard",
        }
