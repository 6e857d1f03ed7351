"""Settings of the embedded SQLite store (storage and vector store share one file)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from ...plugins.settings import StoreSettings

DEFAULT_URL = "./memory.db"
#: Matching rows from which a search goes through the approximate index (``ann.py``).
DEFAULT_ANN_THRESHOLD = 50_000


class SQLiteSettings(StoreSettings):
    """Where the SQLite file lives.

    ``url`` takes a path (``./memory.db``), ``file:./memory.db`` (Mastra's LibSQL spelling),
    ``sqlite:///memory.db``, or ``:memory:`` for a private in-memory database; when not given it is read
    from ``MASTRA_MEMORY_SQLITE_URL``, as every store reads ``MASTRA_MEMORY_<STORE>_<FIELD>``.
    """

    model_config = SettingsConfigDict(env_prefix="MASTRA_MEMORY_SQLITE_")

    url: str = Field(default=DEFAULT_URL, min_length=1)
    #: Matching rows from which a search goes through the approximate index (``ann.py``; needs the
    #: ``ann`` extra, exact otherwise): candidates from an HNSW graph, re-ranked exactly.
    ann_threshold: int = Field(default=DEFAULT_ANN_THRESHOLD, ge=1)
    #: Build the approximate index in a background thread on the first large search (False: only
    #: ``SQLiteVector.build_ann_index`` builds it).
    ann_background: bool = True
