"""Chat models over the OpenAI chat-completions wire format (docs/spec.md §5.13): OpenAI, OpenRouter, Ollama
and any OpenAI-compatible server (vLLM, LM Studio, llama.cpp, a gateway) given its ``base_url``.

Request: ``POST {base_url}/chat/completions`` with ``{"model", "messages", "response_format"?, "tools"?}``.
Reply: ``choices[0].message`` (``content``, ``tool_calls``) and ``usage`` (``prompt_tokens``,
``completion_tokens``). The transport — timeout, retries with backoff on 429/5xx and connection failures,
masked error text — is the embedders' (:mod:`mastra_memory.embedders.http_client`), raising ``ModelError``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from ..embedders.credentials import find_api_key
from ..embedders.http_client import RetryPolicy, post_json, timeout_option
from ..errors import ConfigError, ModelError
from .protocol import ChatMessage, ChatModel, ModelReply, ToolCall, Usage, parse_structured

EXAMPLES = "'openai/gpt-4o-mini', 'openrouter/openai/gpt-4o-mini' or 'ollama/llama3.2'"


@dataclass(frozen=True, slots=True)
class _Provider:
    base_url: str | None
    api_key_env: tuple[str, ...]
    api_key_required: bool


# The providers a model-router string may name without a base_url; any other name needs one.
PROVIDERS: Mapping[str, _Provider] = {
    "openai": _Provider("https://api.openai.com/v1", ("OPENAI_API_KEY",), True),
    "openrouter": _Provider("https://openrouter.ai/api/v1", ("OPENROUTER_API_KEY",), True),
    "ollama": _Provider("http://localhost:11434/v1", (), False),
}
# Per-call options that go into the request body as they are.
_BODY_OPTIONS = ("temperature", "max_tokens", "top_p", "seed")


class OpenAIChatModel:
    """A chat model spoken to in the OpenAI chat-completions format (implements :class:`ChatModel`).

    Options: ``api_key`` (else the provider's environment variable), ``base_url``, ``headers``, ``timeout``
    (seconds per attempt, default 60), ``max_retries`` (default 3), ``retry_base_delay``,
    ``retry_max_delay``, and ``temperature``, ``max_tokens``, ``top_p``, ``seed`` sent as they are.
    Configuration mistakes raise ``ConfigError`` here; the API key is only read at the first call.
    """

    def __init__(self, provider: str, model: str, options: Mapping[str, Any] | None = None) -> None:
        if not model.strip():
            raise ConfigError(f"Model {provider!r} names no model; use 'provider/model', e.g. {EXAMPLES}")
        self.provider = provider
        self.model = model.strip()
        self.model_id = f"{provider}/{self.model}"
        self.options: dict[str, Any] = dict(options or {})
        known = PROVIDERS.get(provider)
        base_url = self.options.get("base_url") or (known.base_url if known else None)
        if not base_url:
            raise ConfigError(
                f"Unknown model provider {provider!r} (from {self.model_id!r}). Known providers: "
                f"{', '.join(sorted(PROVIDERS))}; for an OpenAI-compatible server give "
                "{'base_url': 'http://host:port/v1'}",
                details={"provider": provider, "known": sorted(PROVIDERS)},
            )
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must be an http:// or https:// URL, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self._provider = known or _Provider(self.base_url, (), False)
        self._timeout = timeout_option(self.options)
        self._policy = RetryPolicy.from_options(self.options)
        headers = self.options.get("headers") or {}
        if not isinstance(headers, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
        ):
            raise ConfigError("The headers model option must map header names to string values")
        self._headers = dict(headers)

    def __repr__(self) -> str:
        return f"OpenAIChatModel({self.model_id!r}, base_url={self.base_url!r})"

    async def __call__(
        self,
        messages: Sequence[ChatMessage],
        *,
        schema: Mapping[str, Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> ModelReply:
        """One chat completion (docs/spec.md §5.13).

        Raises:
            ConfigError: a provider that needs an API key has none (the message names the variable).
            ModelError: the request was rejected, failed after retries or timed out, or the body is not a
                chat completion.
            ModelOutputError: ``schema`` was given and the reply is not valid JSON for it.
        """
        api_key = find_api_key(self.options, self._provider.api_key_env)
        if api_key is None and self._provider.api_key_required:
            names = " or ".join(self._provider.api_key_env)
            raise ConfigError(
                f"Model {self.model_id} needs an API key: set the environment variable {names}, or give "
                "the api_key option",
                details={"model_id": self.model_id, "env_vars": list(self._provider.api_key_env)},
            )
        body: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in messages]}
        body.update({k: self.options[k] for k in _BODY_OPTIONS if k in self.options})
        if schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": dict(schema)},
            }
        if tools:
            body["tools"] = [dict(t) for t in tools]
        headers = {**({"Authorization": f"Bearer {api_key}"} if api_key else {}), **self._headers}
        async with httpx.AsyncClient(timeout=self._timeout) as client:
            payload = await post_json(
                client,
                self.base_url + "/chat/completions",
                body,
                headers=headers,
                model_id=self.model_id,
                policy=self._policy,
                secrets=(api_key,) if api_key else (),
                kind="Model",
                error=ModelError,
            )
        reply = parse_completion(self.model_id, payload)
        if schema is not None:
            parsed = parse_structured(self.model_id, reply.text, schema)
            return ModelReply(
                reply.text, reply.usage, reply.model_id, reply.tool_calls, parsed, reply.finish_reason
            )
        return reply


def parse_completion(model_id: str, payload: Any) -> ModelReply:
    """A :class:`ModelReply` from a chat-completions response body.

    Raises:
        ModelError: the body has no ``choices[0].message`` or a tool call's arguments are not JSON.
    """
    choices = payload.get("choices") if isinstance(payload, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        raise ModelError(
            f"Model {model_id} received a body that is not a chat completion (no choices[0].message); "
            "check that base_url points at an OpenAI-compatible /chat/completions API",
            details={"model_id": model_id},
        )
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    calls: list[ToolCall] = []
    for raw in message.get("tool_calls") or ():
        function = raw.get("function") if isinstance(raw, dict) else None
        if not isinstance(function, dict):
            continue
        arguments = function.get("arguments")
        try:
            decoded = json.loads(arguments) if isinstance(arguments, str) else arguments
        except json.JSONDecodeError:
            raise ModelError(
                f"Model {model_id} called tool {function.get('name')!r} with arguments that are not JSON",
                details={"model_id": model_id},
            ) from None
        calls.append(ToolCall(str(raw.get("id", "")), str(function.get("name", "")), decoded))
    usage = payload.get("usage")
    return ModelReply(
        text=text,
        usage=Usage(_count(usage, "prompt_tokens"), _count(usage, "completion_tokens")),
        model_id=model_id,
        tool_calls=tuple(calls),
        finish_reason=first.get("finish_reason") if isinstance(first, dict) else None,
    )


def _count(usage: Any, name: str) -> int:
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def resolve_model(
    spec: str | Mapping[str, Any] | ChatModel, options: Mapping[str, Any] | None = None
) -> ChatModel:
    """The chat model named by ``spec`` (docs/spec.md §5.13).

    ``spec`` is a model-router string ``"provider/model"`` (``openai/gpt-4o-mini``,
    ``openrouter/<vendor>/<model>``, ``ollama/<model>``, or any ``name/<model>`` with a ``base_url``
    option), Mastra's OpenAI-compatible config ``{"id": "provider/model", "url": ..., "apiKey": ...,
    "headers": ...}``, or an object implementing :class:`ChatModel`, returned unchanged.

    Raises:
        ConfigError: a malformed spec, or an unknown provider without a ``base_url``.
    """
    if isinstance(spec, ChatModel):
        return spec
    merged: dict[str, Any] = {}
    if isinstance(spec, Mapping):
        ident = spec.get("id", spec.get("model_id"))
        if not isinstance(ident, str):
            raise ConfigError(f"A model config needs 'id': 'provider/model', e.g. {EXAMPLES}")
        url = spec.get("url", spec.get("base_url"))
        if url is not None:
            merged["base_url"] = url
        key = spec.get("apiKey", spec.get("api_key"))
        if key is not None:
            merged["api_key"] = key
        if spec.get("headers") is not None:
            merged["headers"] = spec["headers"]
        spec = ident
    if not isinstance(spec, str):
        raise ConfigError(
            f"model must be a 'provider/model' string (e.g. {EXAMPLES}), a {{'id', 'url'}} config, or an "
            f"object implementing ChatModel; got {type(spec).__name__}"
        )
    merged.update(options or {})
    provider, _, model = spec.strip().partition("/")
    if not provider.strip():
        raise ConfigError(f"Model {spec!r} names no provider; use 'provider/model', e.g. {EXAMPLES}")
    return OpenAIChatModel(provider.strip().lower(), model, merged)
