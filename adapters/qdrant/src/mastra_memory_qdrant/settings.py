"""Settings of the Qdrant vector store: which Qdrant, and how to reach it.

Exactly one mode is chosen:

* ``url`` — a Qdrant server (``http://localhost:6333``, ``https://….cloud.qdrant.io``, or
  ``qdrant://host:6333``, read as ``http://``), with an optional ``api_key``; ``url=":memory:"`` is
  qdrant-client's in-memory local mode;
* ``path`` — qdrant-client's local mode persisted in a directory (pure Python, for tests and small data);
* ``edge_path`` — the embedded engine (``qdrant-edge-py``): Qdrant's Rust shard in this process, one
  shard per index under that directory.

When none of the three is given, the environment variables ``MASTRA_MEMORY_QDRANT_URL``,
``MASTRA_MEMORY_QDRANT_PATH`` and ``MASTRA_MEMORY_QDRANT_EDGE_PATH`` are read (and
``MASTRA_MEMORY_QDRANT_API_KEY`` for a server URL without an ``api_key``); the other fields are read from
``MASTRA_MEMORY_QDRANT_<FIELD>`` when not given. Every field also accepts its camelCase spelling
(``apiKey``, ``edgePath``, ``preferGrpc``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from mastra_memory.plugins.settings import StoreSettings
from pydantic import Field, SecretStr, model_validator
from pydantic_settings import SettingsConfigDict

__all__ = ["ENV_PREFIX", "MEMORY_URL", "QdrantMode", "QdrantSettings"]

ENV_PREFIX: Final = "MASTRA_MEMORY_QDRANT_"
#: ``url`` value of qdrant-client's in-memory local mode.
MEMORY_URL: Final = ":memory:"

QdrantMode = Literal["server", "memory", "local", "edge"]
_MODE_FIELDS: Final = ("url", "path", "edge_path")


class QdrantSettings(StoreSettings):
    """Connection settings of the ``qdrant`` vector store (see the module docstring for the modes)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX)

    url: str | None = Field(default=None, min_length=1)
    api_key: SecretStr | None = None
    path: str | None = Field(default=None, min_length=1)
    edge_path: str | None = Field(default=None, min_length=1)
    #: Use gRPC instead of REST for a server (qdrant-client's ``prefer_grpc``).
    prefer_grpc: bool = False
    #: Request timeout in seconds for a server.
    timeout: int | None = Field(default=None, ge=1)
    #: Edge mode: build the HNSW index once this many points of an index are not yet indexed
    #: (``0`` never builds it automatically; ``QdrantVector.optimize`` builds it on demand).
    edge_optimize_threshold: int = Field(default=20_000, ge=0)
    #: Edge mode: threads of each shard's search pool (``None``: Qdrant's default, one per CPU).
    edge_search_threads: int | None = Field(default=None, ge=1)

    @classmethod
    def from_environment(cls, keywords: Mapping[str, Any], found: dict[str, Any]) -> dict[str, Any]:
        """The environment's values: its mode only when no keyword chose one (an explicit mode wins), its
        API key only for a server URL."""
        if any(keywords.get(name) is not None for name in _MODE_FIELDS):
            for name in _MODE_FIELDS:
                found.pop(name, None)
        url = keywords.get("url") or found.get("url")
        if url in (None, "", MEMORY_URL):
            found.pop("api_key", None)
        return found

    @model_validator(mode="after")
    def _one_mode(self) -> QdrantSettings:
        chosen = [name for name in _MODE_FIELDS if getattr(self, name) is not None]
        if len(chosen) != 1:
            problem = "none was given" if not chosen else f"got {', '.join(chosen)}"
            raise ValueError(
                "set exactly one of url (a Qdrant server, or ':memory:'), path (qdrant-client local mode) "
                f"or edge_path (the embedded qdrant-edge engine); {problem}"
            )
        if self.api_key is not None and self.mode != "server":
            raise ValueError("api_key applies to a Qdrant server URL only")
        return self

    @property
    def mode(self) -> QdrantMode:
        """``server``, ``memory`` (client in-memory), ``local`` (client on disk) or ``edge`` (engine)."""
        if self.edge_path is not None:
            return "edge"
        if self.path is not None:
            return "local"
        return "memory" if self.url == MEMORY_URL else "server"

    @property
    def server_url(self) -> str | None:
        """The server URL as qdrant-client takes it (``qdrant://`` read as ``http://``)."""
        if self.mode != "server" or self.url is None:
            return None
        for scheme, replacement in (("qdrant://", "http://"), ("qdrants://", "https://")):
            if self.url.startswith(scheme):
                return replacement + self.url[len(scheme) :]
        return self.url
