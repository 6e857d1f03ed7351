"""Settings of the OpenSearch vector store: which cluster, how to reach it, and how to name indexes.

``url`` (or ``hosts``, a list of URLs) names the cluster; ``opensearch://host:9200`` is read as
``http://`` and ``opensearchs://`` as ``https://``. Authentication is HTTP basic (``username`` +
``password``) or an ``api_key``; ``verify_certs``/``ca_certs`` control TLS verification. Every field also
accepts its camelCase spelling (``indexPrefix``, ``verifyCerts``), and a field not given is read from the
environment variable ``MASTRA_MEMORY_OPENSEARCH_<FIELD>`` (``MASTRA_MEMORY_OPENSEARCH_URL``,
``..._USERNAME``, ``..._PASSWORD``, ``..._API_KEY``, ``..._INDEX_PREFIX``, ``..._VERIFY_CERTS``, ...); the
environment's ``url`` is not read when ``hosts`` is given, nor its ``hosts`` when ``url`` is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mastra_memory.plugins.settings import StoreSettings
from pydantic import Field, SecretStr, model_validator
from pydantic_settings import SettingsConfigDict

__all__ = ["DEFAULT_URL", "ENV_PREFIX", "OpenSearchSettings"]

ENV_PREFIX: Final = "MASTRA_MEMORY_OPENSEARCH_"
DEFAULT_URL: Final = "http://localhost:9200"
_SCHEMES: Final = (("opensearch://", "http://"), ("opensearchs://", "https://"))
#: Each of the two ways to name the cluster, by the other one.
_OTHER_WAY: Final = {"url": "hosts", "hosts": "url"}


class OpenSearchSettings(StoreSettings):
    """Connection settings of the ``opensearch`` vector store (see the module docstring)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX)

    url: str | None = Field(default=None, min_length=1)
    hosts: list[str] | None = Field(default=None, min_length=1)
    username: str | None = Field(default=None, min_length=1)
    password: SecretStr | None = None
    api_key: SecretStr | None = None
    #: Verify the server's TLS certificate (``https`` only); ``ca_certs`` is a CA bundle path.
    verify_certs: bool = True
    ca_certs: str | None = None
    #: Request timeout in seconds.
    timeout: float = Field(default=60.0, gt=0)
    #: Retries of a request that failed on a transient error (connection, timeout, 429/502/503/504);
    #: every request the store sends is idempotent.
    max_retries: int = Field(default=3, ge=0, le=10)
    #: Prepended to every index name (``<prefix><name>``); ``list_indexes`` shows names without it.
    index_prefix: str = Field(default="", pattern=r"^[a-z0-9][a-z0-9_.-]*$|^$")
    #: Primary shards of a new index.
    shards: int = Field(default=1, ge=1)
    #: Replicas of a new index (``None``: the cluster's default).
    replicas: int | None = Field(default=None, ge=0)
    #: Bytes of one bulk request body at most (requests are also cut at 500 actions).
    max_bulk_bytes: int = Field(default=8 * 1024 * 1024, ge=64 * 1024)

    @classmethod
    def from_environment(cls, keywords: Mapping[str, Any], found: dict[str, Any]) -> dict[str, Any]:
        """The environment's values, without its way of naming the cluster when a keyword names it."""
        for way, other in _OTHER_WAY.items():
            if keywords.get(way) is not None:
                found.pop(other, None)
        return found

    @model_validator(mode="after")
    def _check(self) -> OpenSearchSettings:
        if self.url is not None and self.hosts is not None:
            raise ValueError("give url or hosts, not both")
        if self.password is not None and self.username is None:
            raise ValueError("password needs a username")
        if self.api_key is not None and self.username is not None:
            raise ValueError("use basic authentication (username/password) or an api_key, not both")
        return self

    @property
    def host_urls(self) -> list[str]:
        """The cluster's URLs as opensearch-py takes them (``opensearch://`` read as ``http://``)."""
        urls = self.hosts or [self.url or DEFAULT_URL]
        out = []
        for url in urls:
            for scheme, replacement in _SCHEMES:
                if url.startswith(scheme):
                    url = replacement + url[len(scheme) :]
            out.append(url)
        return out
