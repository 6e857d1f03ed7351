"""What every HTTP embedder shares: options, API key lookup, batching, one client per call.

Options (given when the embedder is resolved, and again per call, where they win):

``api_key``
    Overrides the provider's environment variable(s).
``base_url``
    The API root, e.g. ``http://127.0.0.1:8080/v1``; every HTTP provider accepts it.
``headers``
    Extra request headers (e.g. OpenRouter's ``HTTP-Referer``).
``dimensions``
    Output size for models that support shortening (OpenAI ``text-embedding-3-*``, Gemini).
``max_batch_size``
    Fewer texts per request than the provider allows.
``timeout``, ``max_retries``, ``retry_base_delay``, ``retry_max_delay``
    Transport settings; see :mod:`.http_client`.

Options an embedder does not know are ignored, so one ``embedder_options`` dict can follow a model swap.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx

from ..errors import ConfigError
from .base import EmbedResult, cache_namespace, option_hint
from .credentials import find_api_key, require_api_key
from .http_client import RetryPolicy, post_json, timeout_option
from .validate import check_embeddings


class HttpEmbedder(ABC):
    """Base class of the HTTP providers. Subclasses set the class variables and `_embed_batch`."""

    provider: ClassVar[str]
    default_base_url: ClassVar[str | None] = None
    api_key_env: ClassVar[tuple[str, ...]] = ()
    api_key_required: ClassVar[bool] = True
    batch_limit: ClassVar[int] = 2_048
    # Cap on the UTF-8 bytes of one request. A BPE token covers at least one byte, so a byte cap also
    # keeps a request under a provider's per-request token limit without a tokenizer.
    max_request_bytes: ClassVar[int | None] = None
    native_dimensions: ClassVar[Mapping[str, int]] = {}
    fixed_dimension_models: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, model: str, options: Mapping[str, Any] | None = None, *, provider: str | None = None):
        provider_name = provider or self.provider
        if not model or not model.strip():
            raise ConfigError(
                f"The {provider_name} embedder needs a model name, e.g. '{provider_name}/<model>'",
                details={"provider": provider_name},
            )
        self.model = model.strip()
        self.model_id = f"{provider_name}/{self.model}"
        self.options: dict[str, Any] = dict(options or {})
        self.dimension: int | None = None
        self.max_batch_size = self._batch_size(self.options)
        # Configuration mistakes surface at construction; only the API key waits for first use.
        self._base_url(self.options)
        self._dimensions(self.options)
        self.cache_namespace = cache_namespace(self.model_id, self.options)

    @property
    def native_dimension(self) -> int | None:
        """The model's full output size when known (e.g. 1536 for ``text-embedding-3-small``)."""
        return self.native_dimensions.get(self.model)

    async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
        """Embed ``texts`` in as few requests as the provider's limits allow.

        Raises:
            ConfigError: no API key (naming the environment variable) or an invalid option.
            EmbeddingError: the provider failed after retries, rejected the request, or sent a malformed
                response; the message includes the provider's error text but never the key.
        """
        merged = {**self.options, **options}
        if not texts:
            return EmbedResult([], None)
        base_url = self._base_url(merged)
        dimensions = self._dimensions(merged)
        if self.api_key_required:
            api_key: str | None = require_api_key(merged, self.api_key_env, self.model_id)
        else:
            api_key = find_api_key(merged, self.api_key_env)
        headers = {**self._auth_headers(api_key), **_header_option(merged)}
        policy = RetryPolicy.from_options(merged)
        limit = min(self.batch_limit, self._batch_size(merged))
        embeddings: list[list[float]] = []
        usage: int | None = None
        secrets = (api_key,) if api_key else ()
        # One client per call: connection pools are bound to an event loop, and embedders outlive loops.
        async with httpx.AsyncClient(timeout=timeout_option(merged)) as client:
            request = ProviderRequest(client, base_url, headers, policy, self.model_id, secrets)
            for batch in _batches(texts, limit, self.max_request_bytes):
                vectors, tokens = await self._embed_batch(request, batch, dimensions, merged)
                embeddings.extend(vectors)
                if tokens is not None:
                    usage = (usage or 0) + tokens
        array = check_embeddings(self.model_id, embeddings, len(texts))
        self.dimension = int(array.shape[1])
        return EmbedResult(array.tolist(), usage)

    @abstractmethod
    async def _embed_batch(
        self, request: ProviderRequest, texts: list[str], dimensions: int | None, options: Mapping[str, Any]
    ) -> tuple[list[list[float]], int | None]:
        """Send one request; return the vectors in input order and the reported token usage."""

    @abstractmethod
    def _auth_headers(self, api_key: str | None) -> dict[str, str]:
        """Headers that carry the API key."""

    def _base_url(self, options: Mapping[str, Any]) -> str:
        value = options.get("base_url") or self.default_base_url
        if value is None:
            raise ConfigError(
                f"Embedder {self.model_id} needs the base_url option, the root of an OpenAI-compatible API: "
                f"{option_hint('base_url', 'http://localhost:8000/v1')}",
                details={"model_id": self.model_id},
            )
        if not isinstance(value, str) or not value.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must be an http:// or https:// URL, got {value!r}")
        return value.rstrip("/")

    def _dimensions(self, options: Mapping[str, Any]) -> int | None:
        value = options.get("dimensions")
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"dimensions must be a positive integer, got {value!r}")
        if self.model in self.fixed_dimension_models:
            raise ConfigError(
                f"{self.model_id} has a fixed output size and does not accept the dimensions option; "
                "remove it or use a model that supports shortening (e.g. text-embedding-3-small)"
            )
        native = self.native_dimension
        if native is not None and value > native:
            raise ConfigError(f"dimensions={value} exceeds the {native} dimensions of {self.model_id}")
        return value

    def _batch_size(self, options: Mapping[str, Any]) -> int:
        value = options.get("max_batch_size", self.batch_limit)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"max_batch_size must be a positive integer, got {value!r}")
        return min(value, self.batch_limit)


@dataclass(frozen=True, slots=True)
class ProviderRequest:
    """Everything one provider request needs besides its path and body."""

    client: httpx.AsyncClient
    base_url: str
    headers: dict[str, str]
    policy: RetryPolicy
    model_id: str
    secrets: tuple[str, ...]

    async def post(self, path: str, body: Mapping[str, Any]) -> Any:
        """POST ``body`` to ``base_url + path`` with retries; return the decoded JSON."""
        return await post_json(
            self.client,
            self.base_url + path,
            body,
            headers=self.headers,
            model_id=self.model_id,
            policy=self.policy,
            secrets=self.secrets,
        )


def _header_option(options: Mapping[str, Any]) -> dict[str, str]:
    headers = options.get("headers") or {}
    if not isinstance(headers, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    ):
        raise ConfigError("The headers embedder option must map header names to string values")
    return dict(headers)


def _batches(texts: Sequence[str], limit: int, max_bytes: int | None) -> Iterator[list[str]]:
    """Split into lists of at most ``limit`` texts and ``max_bytes`` UTF-8 bytes (one text may exceed it)."""
    batch: list[str] = []
    size = 0
    for text in texts:
        length = len(text.encode("utf-8"))
        if batch and (len(batch) >= limit or (max_bytes is not None and size + length > max_bytes)):
            yield batch
            batch, size = [], 0
        batch.append(text)
        size += length
    if batch:
        yield batch
