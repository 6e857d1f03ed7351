"""Model-router resolution: ``"provider/model"`` (or an `EmbedderSpec`) to an `Embedder`.

The provider is everything before the first ``/`` and is looked up among the providers registered with
the ``register_embedders`` hook; the rest is the provider's model name (which may itself contain ``/``,
as in ``openrouter/openai/text-embedding-3-small``). A provider nobody registered still resolves when a
``base_url`` is given: it is then an OpenAI-compatible server (vLLM, LM Studio, a gateway, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError as PydanticValidationError

from ..errors import ConfigError, PluginError, pydantic_problems
from .base import Embedder, EmbedderSpec, option_hint

EXAMPLES = "'openai/text-embedding-3-small', 'local/wordllama' or 'hash/64'"


def parse_model_string(value: str) -> tuple[str, str]:
    """Split ``"provider/model"`` at the first ``/`` into ``(provider, model)``; the provider is
    lower-cased and ``model`` may be empty (``"hash"``, ``"fastembed"``).

    Raises:
        ConfigError: the string is empty or has no provider before the ``/``.
    """
    provider, _, model = value.strip().partition("/")
    provider = provider.strip().lower()
    if not provider:
        raise ConfigError(f"Embedder {value!r} names no provider; use 'provider/model', e.g. {EXAMPLES}")
    return provider, model.strip()


def resolve_embedder(
    spec: str | EmbedderSpec | Mapping[str, Any] | Embedder, options: Mapping[str, Any] | None = None
) -> Embedder:
    """Return the embedder named by ``spec``, built with ``options`` (e.g. ``dimensions``, ``base_url``).

    ``spec`` is a model-router string, an `EmbedderSpec` (or a dict of its fields, camelCase accepted), or
    any object implementing `Embedder`, which is returned unchanged. Connection settings in an
    `EmbedderSpec` are defaults that ``options`` override. ``ollama/<model>`` defaults to the local Ollama
    endpoint. Nothing is loaded or called here; API keys are read at the first embedding call.

    Raises:
        ConfigError: unknown provider (the message lists the known ones), a malformed spec, or a missing
            optional extra (the message names it).
        PluginError: a provider's factory failed or returned something that is not an `Embedder`.
    """
    merged: dict[str, Any] = {}
    if isinstance(spec, str):
        provider, model = parse_model_string(spec)
    elif isinstance(spec, EmbedderSpec | Mapping):
        parsed = _spec(spec)
        provider, model = parse_model_string(parsed.router_string())
        merged.update(parsed.connection_options())
    elif isinstance(spec, Embedder):
        return spec
    else:
        raise ConfigError(
            f"embedder must be a 'provider/model' string (e.g. {EXAMPLES}), an EmbedderSpec, or an object "
            f"with model_id, dimension, max_batch_size and async embed_many(); got {type(spec).__name__}"
        )
    merged.update(options or {})

    from ..plugins import embedder_providers

    providers = embedder_providers()
    factory = providers.get(provider)
    if factory is None:
        if merged.get("base_url"):
            from .openai_compatible import OpenAICompatibleEmbedder

            return OpenAICompatibleEmbedder(model, merged, provider=provider)
        raise ConfigError(
            f"Unknown embedder provider {provider!r} (from {_describe(spec)}). Known providers: "
            f"{', '.join(sorted(providers))}. For an OpenAI-compatible server "
            f"{option_hint('base_url', 'http://host:port/v1')}; for another provider install its plugin.",
            details={"provider": provider, "known": sorted(providers)},
        )
    embedder = factory(model, merged)
    if not isinstance(embedder, Embedder):
        raise PluginError(
            f"The factory of embedder provider {provider!r} returned {type(embedder).__name__}, which lacks "
            "model_id, dimension, max_batch_size or embed_many()",
            details={"provider": provider},
        )
    return embedder


def _spec(spec: EmbedderSpec | Mapping[str, Any]) -> EmbedderSpec:
    if isinstance(spec, EmbedderSpec):
        return spec
    try:
        return EmbedderSpec.model_validate(dict(spec))
    except PydanticValidationError as exc:
        problems = "; ".join(pydantic_problems(exc, root="spec"))
        raise ConfigError(f"Invalid embedder spec: {problems}") from None


def _describe(spec: object) -> str:
    if isinstance(spec, EmbedderSpec):
        return f"EmbedderSpec(provider_id={spec.provider_id!r}, model_id={spec.model_id!r})"
    return repr(spec) if isinstance(spec, str) else "the embedder spec"
