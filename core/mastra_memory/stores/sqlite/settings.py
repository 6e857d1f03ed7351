"""Settings of the embedded SQLite store (storage and vector store share one file)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

DEFAULT_URL = "./memory.db"


class SQLiteSettings(BaseModel):
    """Where the SQLite file lives.

    ``url`` takes a path (``./memory.db``), ``file:./memory.db`` (Mastra's LibSQL spelling),
    ``sqlite:///memory.db``, or ``:memory:`` for a private in-memory database.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    url: str = Field(default=DEFAULT_URL, min_length=1)
