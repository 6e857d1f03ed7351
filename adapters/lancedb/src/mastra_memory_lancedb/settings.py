"""Settings of the LanceDB vector store (environment prefix ``MASTRA_MEMORY_LANCEDB_``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from mastra_memory.plugins.settings import StoreSettings
from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import SettingsConfigDict

DEFAULT_URL = "./lancedb"
#: The prefix a ``lancedb://`` URL (``Memory(vector="lancedb:///data/lance")``) carries before the URI.
URL_SCHEME = "lancedb://"


class LanceDBSettings(StoreSettings):
    """Where the LanceDB database lives and how the store maintains its tables.

    ``url`` is anything ``lancedb.connect_async`` takes: a local directory (``./lancedb``), an object-store
    URI (``s3://bucket/path``, ``gs://…``, ``az://…``) or a LanceDB Cloud URI (``db://name``, with
    ``api_key``). ``lancedb:///abs/path`` and ``lancedb://rel/path`` are accepted too (the scheme names
    the plugin). ``uri`` is an alias of ``url``; camelCase spellings (``apiKey``) are accepted.

    Every field can also come from the environment: ``MASTRA_MEMORY_LANCEDB_URL``,
    ``MASTRA_MEMORY_LANCEDB_API_KEY``, ...
    """

    model_config = SettingsConfigDict(env_prefix="MASTRA_MEMORY_LANCEDB_")
    spellings: ClassVar[Mapping[str, str]] = {"uri": "url"}

    url: str = Field(default=DEFAULT_URL, min_length=1)
    api_key: SecretStr | None = None
    region: str = "us-east-1"
    host_override: str | None = None
    storage_options: dict[str, str] = Field(default_factory=dict)
    #: Seconds between checks for writes made through other connections; 0 checks on every read
    #: (read-your-writes across processes), ``None`` never checks.
    read_consistency_interval: float | None = Field(default=0.0, ge=0)
    #: Rows a table needs before its ANN index (``index_config.type`` hnsw/ivfflat) is trained; below it
    #: queries scan exactly, which is also what an IVF index trained on too few rows would cost.
    index_min_rows: int = Field(default=25_000, ge=256)
    #: Write calls per table between two ``optimize()`` runs (compaction, index update, old versions).
    #: Each write adds a fragment that every later merge and filtered read visits until the next
    #: optimize; at 20 a 10k-row memory ingests about 1.6x faster than at 100 (docs/performance.md).
    optimize_every: int = Field(default=20, ge=1)
    #: Candidates re-ranked with full vectors per result on quantised indexes (exact distances).
    refine_factor: int = Field(default=4, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _url_or_uri(cls, data: Any) -> Any:
        """Refuse ``url`` and ``uri`` with different values (both name the database)."""
        if isinstance(data, dict) and "uri" in data and data.get("url", data["uri"]) != data["uri"]:
            raise ValueError("give either url or uri, not both")
        return data

    @field_validator("url", mode="before")
    @classmethod
    def _strip_scheme(cls, value: Any) -> Any:
        """``lancedb:///data/lance`` is ``/data/lance``: the scheme only names the plugin."""
        if isinstance(value, str) and value.lower().startswith(URL_SCHEME):
            return value[len(URL_SCHEME) :] or DEFAULT_URL
        return value
