"""Settings of the Pinecone vector store: which project, which control plane, where new indexes go.

Fields (each also accepts its camelCase spelling, and Mastra's ``PineconeVector`` option names):

* ``api_key`` (``apiKey``) — the project's API key; else ``MASTRA_MEMORY_PINECONE_API_KEY``, else the
  SDK's own ``PINECONE_API_KEY``;
* ``controller_host_url`` (``controllerHostUrl``, also ``host``) — the control plane, default
  ``https://api.pinecone.io``; a local emulator's URL in tests;
* ``index_hosts`` — known data-plane hosts by index name (skips one ``describe`` per index);
* ``cloud`` / ``region`` — where ``create_index`` puts new serverless indexes (default ``aws`` /
  ``us-east-1``); Mastra's ``environment`` (``"us-east-1-aws"``) is read as ``<region>-<cloud>``;
* ``namespace`` — the namespace every call uses (default ``""``, Pinecone's default namespace);
* ``timeout`` — seconds per request; ``wait_timeout`` — how long ``wait_for_indexing`` waits;
  ``create_timeout`` — how long index creation and deletion may take.

Unset fields are read from ``MASTRA_MEMORY_PINECONE_<FIELD>`` (``..._CONTROLLER_HOST_URL``,
``..._CLOUD``, ``..._REGION``, ``..._NAMESPACE``).
"""

from __future__ import annotations

import os
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic.alias_generators import to_camel

__all__ = ["DEFAULT_CONTROLLER", "ENV_PREFIX", "PineconeSettings"]

ENV_PREFIX: Final = "MASTRA_MEMORY_PINECONE_"
DEFAULT_CONTROLLER: Final = "https://api.pinecone.io"
_ENV_FIELDS: Final = ("api_key", "controller_host_url", "cloud", "region", "namespace")
_CLOUDS: Final = ("aws", "gcp", "azure")


class PineconeSettings(BaseModel):
    """Connection settings of the ``pinecone`` vector store (see the module docstring)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    api_key: SecretStr | None = None
    controller_host_url: str = Field(default=DEFAULT_CONTROLLER, min_length=1)
    index_hosts: dict[str, str] = Field(default_factory=dict)
    cloud: Literal["aws", "gcp", "azure"] = "aws"
    region: str = Field(default="us-east-1", min_length=1)
    namespace: str = ""
    timeout: float = Field(default=30.0, gt=0)
    wait_timeout: float = Field(default=60.0, gt=0)
    #: Seconds ``create_index`` / ``delete_index`` wait for Pinecone to finish.
    create_timeout: float = Field(default=300.0, gt=0)

    @model_validator(mode="before")
    @classmethod
    def _aliases_and_environment(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        out = dict(data)
        if "host" in out:  # Mastra-style shorthand for the control plane
            out.setdefault("controller_host_url", out.pop("host"))
        environment = out.pop("environment", None)
        if environment is not None:
            region, _, cloud = str(environment).rpartition("-")
            if not region or cloud not in _CLOUDS:
                raise ValueError(
                    f"environment {environment!r} is not '<region>-<cloud>' (e.g. 'us-east-1-aws'); "
                    "set cloud and region instead"
                )
            out.setdefault("region", region)
            out.setdefault("cloud", cloud)
        given = {_snake(k) for k, v in out.items() if v is not None}
        for name in _ENV_FIELDS:
            if name not in given:
                value = os.environ.get(ENV_PREFIX + name.upper(), "").strip()
                if value:
                    out[name] = value
        if "api_key" not in {_snake(k) for k, v in out.items() if v is not None}:
            key = os.environ.get("PINECONE_API_KEY", "").strip()
            if key:
                out["api_key"] = key
        return out

    @model_validator(mode="after")
    def _has_key(self) -> PineconeSettings:
        if self.api_key is None or not self.api_key.get_secret_value().strip():
            raise ValueError(
                f"a Pinecone API key is required: pass api_key=... or set {ENV_PREFIX}API_KEY "
                "(or PINECONE_API_KEY)"
            )
        return self


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
