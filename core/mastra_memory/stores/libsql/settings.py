"""Settings of the LibSQL store: which file (keywords, then ``MASTRA_MEMORY_LIBSQL_URL``)."""

from __future__ import annotations

from typing import Final

from pydantic import Field, field_validator
from pydantic_settings import SettingsConfigDict

from ...plugins.settings import StoreSettings

#: Mastra's own default (``new LibSQLStore({ url: "file:./local.db" })`` in its templates).
DEFAULT_URL: Final = "file:./local.db"
_PREFIXES: Final = ("libsql:///", "libsql://", "file://", "file:")


def libsql_path(url: str) -> str:
    """The file path of ``libsql:///path``, ``file:./path`` (Mastra's spelling), or a plain path."""
    for prefix in _PREFIXES:
        if url.startswith(prefix):
            return url[len(prefix) :] or ":memory:"
    return url


class LibSQLSettings(StoreSettings):
    """Where Mastra's LibSQL file is.

    ``url`` takes ``libsql:///path/to/local.db`` (the scheme that selects this plugin), Mastra's
    ``file:./local.db``, a plain path, or ``:memory:``. A remote libSQL server (``libsql://host``, Turso)
    is not supported: the store works on a local file.
    """

    model_config = SettingsConfigDict(env_prefix="MASTRA_MEMORY_LIBSQL_", frozen=True)

    url: str = Field(default=DEFAULT_URL, min_length=1)

    @field_validator("url")
    @classmethod
    def _local_file(cls, value: str) -> str:
        if value.startswith("libsql://") and not value.startswith("libsql:///"):
            raise ValueError(
                "url must name a local file (libsql:///path, file:./path or a path); a remote libSQL "
                "server is not supported"
            )
        if value.startswith(("http://", "https://", "ws://", "wss://")):
            raise ValueError("url must name a local file; a remote libSQL server is not supported")
        return value

    @property
    def path(self) -> str:
        """The file path (or ``:memory:``)."""
        return libsql_path(self.url)
