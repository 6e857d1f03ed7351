"""API keys for HTTP embedders: from the ``api_key`` option or the provider's environment variables."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ConfigError
from .base import option_hint


def find_api_key(options: Mapping[str, Any], env_vars: Sequence[str]) -> str | None:
    """The ``api_key`` option if set, else the first non-empty variable of ``env_vars``, else ``None``."""
    explicit = options.get("api_key")
    if explicit is not None:
        value = explicit.get_secret_value() if hasattr(explicit, "get_secret_value") else explicit
        if not isinstance(value, str):
            raise ConfigError("The api_key embedder option must be a string")
        if value.strip():
            return value.strip()
    for name in env_vars:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def require_api_key(options: Mapping[str, Any], env_vars: Sequence[str], model_id: str) -> str:
    """Like :func:`find_api_key`, but a missing key raises `ConfigError` naming the variables to set."""
    key = find_api_key(options, env_vars)
    if key is None:
        names = " or ".join(env_vars)
        raise ConfigError(
            f"Embedder {model_id} needs an API key: set the environment variable {names}, "
            f"or {option_hint('api_key', '...')}",
            details={"model_id": model_id, "env_vars": list(env_vars)},
        )
    return key
