"""The embedder contract: the `Embedder` protocol, its result, and `EmbedderSpec`.

An embedder turns texts into vectors. Built-in providers are addressed by model-router strings
(``"openai/text-embedding-3-small"``, ``"local/wordllama"``, ``"hash/64"``); any object with the
members of :class:`Embedder` can be passed instead.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr


def option_hint(key: str, example: str) -> str:
    """How to pass the embedder option ``key``, for errors: in Python and on the command line, since the
    same message reaches users of both."""
    python = f"embedder_options={{{key!r}: {example!r}}}"
    return f"pass {python} (on the command line: --embedder-option {key}={example})"


@dataclass(frozen=True, slots=True)
class EmbedResult:
    """Vectors for a batch of texts, in input order.

    Attributes:
        embeddings: one vector per input text.
        usage_tokens: tokens the provider reported for the call, or ``None`` when it reports none.
    """

    embeddings: list[list[float]] = field(default_factory=list)
    usage_tokens: int | None = None


@runtime_checkable
class Embedder(Protocol):
    """Anything that embeds texts.

    Attributes:
        model_id: stable name of the model (``"openai/text-embedding-3-small"``); part of the cache key.
        dimension: length of the vectors, known after the first call (``None`` before).
        max_batch_size: most texts one ``embed_many`` call should receive.

    An implementation may also define ``cache_namespace: str`` when construction options change its
    output (e.g. a reduced ``dimensions``); the cache then keys entries by it instead of ``model_id``.
    """

    model_id: str
    dimension: int | None
    max_batch_size: int

    async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
        """Return one vector per text, in order. ``options`` are provider options (e.g. ``dimensions``)."""
        ...


EmbedderFactory = Callable[[str, Mapping[str, Any]], Embedder]
"""``factory(model, options)``: what a provider registers with ``register_embedders``."""


class EmbedderSpec(BaseModel):
    """An embedder named by provider and model, with connection settings.

    Accepted wherever a model-router string is. ``EmbedderSpec(provider_id="openrouter",
    model_id="openai/text-embedding-3-small")`` equals ``"openrouter/openai/text-embedding-3-small"``;
    camelCase (``providerId``, ``modelId``, ``baseURL``/``url``, ``apiKey``) is accepted. Without
    ``provider_id``, ``model_id`` is read as a full ``provider/model`` string.
    """

    model_config = ConfigDict(populate_by_name=True, frozen=True, extra="forbid")

    provider_id: str | None = Field(default=None, validation_alias=AliasChoices("provider_id", "providerId"))
    model_id: str = Field(validation_alias=AliasChoices("model_id", "modelId"))
    base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("base_url", "baseURL", "baseUrl", "url")
    )
    api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("api_key", "apiKey"))
    headers: dict[str, str] | None = None

    @property
    def url(self) -> str | None:
        """The endpoint base URL (alias of ``base_url``)."""
        return self.base_url

    def router_string(self) -> str:
        """The equivalent model-router string, e.g. ``"openrouter/openai/text-embedding-3-small"``."""
        return f"{self.provider_id}/{self.model_id}" if self.provider_id else self.model_id

    def connection_options(self) -> dict[str, Any]:
        """The settings given here as embedder options (``base_url``, ``api_key``, ``headers``)."""
        options: dict[str, Any] = {}
        if self.base_url:
            options["base_url"] = self.base_url
        if self.api_key is not None:
            options["api_key"] = self.api_key.get_secret_value()
        if self.headers:
            options["headers"] = dict(self.headers)
        return options


# Options that change how a request travels, not which vectors come back; they stay out of cache keys
# (and keys must never end up in a key that could be logged).
TRANSPORT_OPTIONS = frozenset(
    {"api_key", "headers", "timeout", "max_retries", "max_batch_size", "retry_base_delay", "retry_max_delay"}
)


def cache_namespace(model_id: str, options: Mapping[str, Any]) -> str:
    """Name the vector space of ``model_id`` under ``options``: the model id, plus a short digest of the
    options that change the output (``dimensions``, ``base_url``, ``task_type``, ...) when there are any."""
    relevant = {k: v for k, v in options.items() if k not in TRANSPORT_OPTIONS and v is not None}
    if not relevant:
        return model_id
    encoded = json.dumps(relevant, sort_keys=True, default=str).encode()
    return f"{model_id}#{hashlib.blake2b(encoded, digest_size=8).hexdigest()}"
