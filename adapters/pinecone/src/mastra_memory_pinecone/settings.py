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
``..._CLOUD``, ``..._REGION``, ``..._NAMESPACE``); an ``environment`` keyword keeps ``..._CLOUD`` and
``..._REGION`` out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final, Literal

from mastra_memory.plugins.settings import StoreSettings
from pydantic import Field, SecretStr, model_validator
from pydantic_settings import SettingsConfigDict

__all__ = ["DEFAULT_CONTROLLER", "ENV_PREFIX", "PineconeSettings"]

ENV_PREFIX: Final = "MASTRA_MEMORY_PINECONE_"
DEFAULT_CONTROLLER: Final = "https://api.pinecone.io"
_CLOUDS: Final = ("aws", "gcp", "azure")


class PineconeSettings(StoreSettings):
    """Connection settings of the ``pinecone`` vector store (see the module docstring)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX)
    # ``host`` is Mastra's shorthand for the control plane; PINECONE_API_KEY is the SDK's own variable.
    spellings: ClassVar[Mapping[str, str]] = {"host": "controller_host_url"}
    env_fallbacks: ClassVar[Mapping[str, tuple[str, ...]]] = {"api_key": ("PINECONE_API_KEY",)}

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

    @classmethod
    def from_environment(cls, keywords: Mapping[str, Any], found: dict[str, Any]) -> dict[str, Any]:
        """The environment's values, without its cloud and region when ``environment`` names them."""
        if keywords.get("environment") is not None:
            found.pop("cloud", None)
            found.pop("region", None)
        return found

    @model_validator(mode="before")
    @classmethod
    def _environment(cls, data: Any) -> Any:
        """Read Mastra's ``environment`` (``"us-east-1-aws"``) as ``<region>-<cloud>``."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
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
        return out

    @model_validator(mode="after")
    def _has_key(self) -> PineconeSettings:
        if self.api_key is None or not self.api_key.get_secret_value().strip():
            raise ValueError(
                f"a Pinecone API key is required: pass api_key=... or set {ENV_PREFIX}API_KEY "
                "(or PINECONE_API_KEY)"
            )
        return self
