"""Settings of the embedded SQLite store (storage and vector store share one file)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from ...plugins.settings import StoreSettings

DEFAULT_URL = "./memory.db"


class SQLiteSettings(StoreSettings):
    """Where the SQLite file lives.

    ``url`` takes a path (``./memory.db``), ``file:./memory.db`` (Mastra's LibSQL spelling),
    ``sqlite:///memory.db``, or ``:memory:`` for a private in-memory database; when not given it is read
    from ``MASTRA_MEMORY_SQLITE_URL``, as every store reads ``MASTRA_MEMORY_<STORE>_<FIELD>``.
    """

    model_config = SettingsConfigDict(env_prefix="MASTRA_MEMORY_SQLITE_")

    url: str = Field(default=DEFAULT_URL, min_length=1)
