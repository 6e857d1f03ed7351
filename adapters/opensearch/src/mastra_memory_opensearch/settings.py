"""Settings of the OpenSearch vector store: which cluster, how to reach it, and how to name indexes.

``url`` (or ``hosts``, a list of URLs) names the cluster; ``opensearch://host:9200`` is read as
``http://`` and ``opensearchs://`` as ``https://``. Authentication is HTTP basic (``username`` +
``password``) or an ``api_key``; ``verify_certs``/``ca_certs`` control TLS verification. Every field also
accepts its camelCase spelling (``indexPrefix``, ``verifyCerts``), and a field not given is read from the
environment variable ``MASTRA_MEMORY_OPENSEARCH_<FIELD>`` (``MASTRA_MEMORY_OPENSEARCH_URL``,
``..._USERNAME``, ``..._PASSWORD``, ``..._API_KEY``, ``..._INDEX_PREFIX``, ``..._VERIFY_CERTS``, ...).
"""

from __future__ import annotations

import os
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic.alias_generators import to_camel

__all__ = ["DEFAULT_URL", "ENV_PREFIX", "OpenSearchSettings"]

ENV_PREFIX: Final = "MASTRA_MEMORY_OPENSEARCH_"
DEFAULT_URL: Final = "http://localhost:9200"
_SCHEMES: Final = (("opensearch://", "http://"), ("opensearchs://", "https://"))
_ENV_FIELDS: Final = (
    "url",
    "username",
    "password",
    "api_key",
    "index_prefix",
    "verify_certs",
    "ca_certs",
    "timeout",
    "max_retries",
    "shards",
    "replicas",
)


class OpenSearchSettings(BaseModel):
    """Connection settings of the ``opensearch`` vector store (see the module docstring)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

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

    @model_validator(mode="before")
    @classmethod
    def _from_environment(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        given = {_to_snake(k) for k, v in data.items() if v is not None}
        out = dict(data)
        for name in _ENV_FIELDS:
            if name in given or (name == "url" and "hosts" in given):
                continue
            value = os.environ.get(ENV_PREFIX + name.upper(), "").strip()
            if value:
                out[name] = value
        return out

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


def _to_snake(name: str) -> str:
    """``indexPrefix`` -> ``index_prefix`` (field names given in camelCase)."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
