"""Settings of the pgvector adapter: where PostgreSQL is, which schema to use, how big the pool is.

Every field can also come from the environment with the prefix ``MASTRA_MEMORY_PGVECTOR_``
(``MASTRA_MEMORY_PGVECTOR_URL``, ``MASTRA_MEMORY_PGVECTOR_SCHEMA_NAME`` or ``..._SCHEMA``,
``MASTRA_MEMORY_PGVECTOR_POOL_MAX_SIZE``, ``MASTRA_MEMORY_PGVECTOR_LAYOUT``, ...).
Explicit arguments win over the environment.

A connection is given either as a URL/DSN (``url``, alias ``dsn`` and ``connectionString``) or as parts
(``host``, ``port``, ``user``, ``password``, ``database``); parts given next to a URL override the URL's
values. ``pgvector://`` URLs (the scheme that selects this plugin in ``Memory(vector="pgvector://...")``)
mean the same as ``postgresql://``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final, Literal

from mastra_memory.plugins.settings import StoreSettings
from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import SettingsConfigDict

ENV_PREFIX: Final = "MASTRA_MEMORY_PGVECTOR_"
#: PostgreSQL truncates identifiers to 63 bytes; longer names are refused rather than truncated.
MAX_IDENTIFIER_BYTES: Final = 63
#: libpq's and Mastra's names; the camelCase spelling of every field (``poolMaxSize``) is accepted as well.
_SPELLINGS: Final = {
    "dsn": "url",
    "connectionString": "url",
    "connection_string": "url",
    "schema": "schema_name",
    "dbname": "database",
}
_SCHEMES: Final = re.compile(r"^(pgvector|postgres|postgresql)(\+[a-z0-9]+)?://", re.IGNORECASE)


def check_identifier(name: str, what: str) -> str:
    """``name`` if PostgreSQL can hold it as one identifier (non-empty, ≤ 63 bytes, no NUL); else
    ValueError."""
    if not name or "\x00" in name:
        raise ValueError(f"{what} must be a non-empty identifier without NUL characters")
    if len(name.encode("utf-8", "surrogatepass")) > MAX_IDENTIFIER_BYTES:
        raise ValueError(
            f"{what} {name!r} is longer than PostgreSQL's {MAX_IDENTIFIER_BYTES}-byte identifier limit"
        )
    return name


class PgVectorSettings(StoreSettings):
    """How to reach PostgreSQL (with the pgvector extension) and how to use it.

    Attributes:
        url: a libpq URL or key/value DSN (``postgresql://user:pw@host:5432/db``, ``host=... dbname=...``);
            ``pgvector://`` is accepted as a synonym of ``postgresql://``.
        host, port, user, password, database: connection parts (override the URL's).
        schema_name: the schema of every table the adapter creates (alias ``schema``); created if missing.
        pool_min_size, pool_max_size: bounds of the psycopg connection pool.
        connect_timeout: seconds to wait for a connection (also the pool's wait timeout).
        retries: how often an idempotent operation is retried after a lost connection.
        create_extension: run ``CREATE EXTENSION IF NOT EXISTS vector`` when it is missing.
        application_name: shown in ``pg_stat_activity``.
        layout: the tables the memory storage and the vector store work on (docs/spec.md §4.7):
            ``"mastra-memory"`` (this project's own, the default) or ``"mastra"`` (``@mastra/pg``'s memory
            tables and per-index vector tables, to share one database with a Mastra app). A schema or an
            index table holding the other layout is refused with ``StorageLayoutError``.
    """

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, frozen=True)
    spellings: ClassVar[Mapping[str, str]] = _SPELLINGS
    env_fallbacks: ClassVar[Mapping[str, tuple[str, ...]]] = {"schema_name": (f"{ENV_PREFIX}SCHEMA",)}

    url: str | None = None
    host: str | None = None
    port: int | None = Field(default=None, ge=1, le=65535)
    user: str | None = None
    password: SecretStr | None = None
    database: str | None = None
    schema_name: str = Field(default="public")
    pool_min_size: int = Field(default=1, ge=0)
    pool_max_size: int = Field(default=10, ge=1)
    connect_timeout: float = Field(default=10.0, gt=0)
    retries: int = Field(default=2, ge=0, le=10)
    create_extension: bool = Field(default=True)
    application_name: str = Field(default="mastra-memory")
    layout: Literal["mastra-memory", "mastra"] = Field(default="mastra-memory")

    @field_validator("url")
    @classmethod
    def _known_scheme(cls, value: str | None) -> str | None:
        if value is None or "://" not in value:
            return value
        if not _SCHEMES.match(value):
            raise ValueError("url must start with postgresql://, postgres:// or pgvector://")
        return value

    @field_validator("schema_name")
    @classmethod
    def _schema(cls, value: str) -> str:
        return check_identifier(value, "schema")

    @model_validator(mode="after")
    def _pool_bounds(self) -> PgVectorSettings:
        if self.pool_min_size > self.pool_max_size:
            raise ValueError("pool_min_size must not exceed pool_max_size")
        return self

    def conninfo(self) -> str:
        """The libpq connection string: the URL (scheme normalised) with the given parts applied."""
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        params: dict[str, Any] = {}
        if self.url:
            params = conninfo_to_dict(_SCHEMES.sub("postgresql://", self.url, count=1))
        parts: dict[str, Any] = {
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "password": self.password.get_secret_value() if self.password else None,
            "dbname": self.database,
        }
        params.update({k: v for k, v in parts.items() if v is not None})
        params.setdefault("connect_timeout", max(1, round(self.connect_timeout)))
        params.setdefault("application_name", self.application_name)
        return make_conninfo(**params)

    def describe(self) -> str:
        """Where the adapter connects, without the password (for error messages)."""
        from psycopg.conninfo import conninfo_to_dict

        info = conninfo_to_dict(self.conninfo())
        host = info.get("host") or "localhost"
        port = info.get("port") or 5432
        return f"{host}:{port}/{info.get('dbname') or info.get('user') or ''}"
