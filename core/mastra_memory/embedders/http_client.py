"""JSON POSTs to embedding APIs (and chat models, :mod:`mastra_memory.models.openai`), with retries and
error messages that never reveal the API key.

Retried: HTTP 429, any 5xx, and connection-level failures (refused, reset, timed out), up to
``max_retries`` times (default 3) with exponential backoff and jitter. A ``Retry-After`` header (seconds
or an HTTP date) or ``retry-after-ms`` sets the wait instead, capped at ``retry_max_delay``.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from ..errors import ConfigError, EmbeddingError, MastraMemoryError

logger = logging.getLogger("mastra_memory.embedders")

DEFAULT_TIMEOUT = 60.0
_MAX_ERROR_TEXT = 500


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to wait before retrying a failed request."""

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 30.0

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> RetryPolicy:
        """Read ``max_retries``, ``retry_base_delay`` and ``retry_max_delay`` from embedder options."""
        defaults = cls()
        max_retries = options.get("max_retries", defaults.max_retries)
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ConfigError(f"max_retries must be an integer >= 0, got {max_retries!r}")
        return cls(
            max_retries=max_retries,
            base_delay=_non_negative(options, "retry_base_delay", defaults.base_delay),
            max_delay=_non_negative(options, "retry_max_delay", defaults.max_delay),
        )


def retry_delay(attempt: int, headers: Mapping[str, str] | None, policy: RetryPolicy) -> float:
    """Seconds to wait before retry number ``attempt + 1`` (``attempt`` counts from 0).

    The server's ``retry-after-ms`` or ``Retry-After`` wins when present and valid; otherwise the delay is
    ``base_delay * 2**attempt`` scaled by a random factor in [0.5, 1] so that clients spread out.
    """
    requested = _server_requested_delay(headers) if headers is not None else None
    if requested is None:
        requested = policy.base_delay * 2**attempt * random.uniform(0.5, 1.0)
    return min(max(requested, 0.0), policy.max_delay)


def _server_requested_delay(headers: Mapping[str, str]) -> float | None:
    lowered = {k.lower(): v for k, v in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return float(milliseconds) / 1000.0
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return when.timestamp() - time.time()


def timeout_option(options: Mapping[str, Any]) -> float:
    """The ``timeout`` option in seconds (default 60)."""
    value = options.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"timeout must be a positive number of seconds, got {value!r}")
    return float(value)


async def post_json(
    client: httpx.AsyncClient,
    url: str,
    body: Mapping[str, Any],
    *,
    headers: Mapping[str, str],
    model_id: str,
    policy: RetryPolicy,
    secrets: Sequence[str] = (),
    kind: str = "Embedder",
    error: type[MastraMemoryError] = EmbeddingError,
) -> Any:
    """POST ``body`` as JSON and return the decoded JSON response.

    ``kind`` names the caller in messages and logs and ``error`` is the type raised, so chat models reuse
    this transport with their own typed error (``ModelError``).

    Raises:
        EmbeddingError (or ``error``): a non-retryable HTTP error, retries exhausted, or a body that is
            not JSON. The message carries the provider's own error text with every string of ``secrets``
            masked.
    """
    attempts = policy.max_retries + 1
    for attempt in range(attempts):
        try:
            response = await client.post(url, json=body, headers=dict(headers))
        except httpx.TransportError as exc:
            problem = f"connection failed ({type(exc).__name__}: {_mask(str(exc), secrets) or 'no detail'})"
            if attempt + 1 == attempts:
                raise _exhausted(model_id, attempts, problem, None, kind, error) from exc
            await _wait(model_id, attempt, attempts, problem, None, policy, kind)
            continue
        status = response.status_code
        if status == 429 or status >= 500:
            problem = f"HTTP {status}: {_provider_message(response, secrets)}"
            if attempt + 1 == attempts:
                raise _exhausted(model_id, attempts, problem, status, kind, error)
            await _wait(model_id, attempt, attempts, problem, response.headers, policy, kind)
            continue
        if status >= 400:
            raise error(
                f"{kind} {model_id} request was rejected with HTTP {status}: "
                f"{_provider_message(response, secrets)}{_hint(status)}",
                category="USER" if status in (400, 401, 403, 404, 422) else "THIRD_PARTY",
                details={"model_id": model_id, "status": status},
            )
        try:
            return response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise error(
                f"{kind} {model_id} received a response that is not JSON (HTTP {status}, "
                f"content-type {response.headers.get('content-type', 'unknown')}); check base_url",
                details={"model_id": model_id, "status": status},
            ) from None
    raise AssertionError("unreachable: the loop returns or raises")


async def _wait(
    model_id: str,
    attempt: int,
    attempts: int,
    problem: str,
    headers: Mapping[str, str] | None,
    policy: RetryPolicy,
    kind: str,
) -> None:
    delay = retry_delay(attempt, headers, policy)
    logger.warning(
        "%s %s: %s; retrying in %.2fs (attempt %d of %d)",
        kind,
        model_id,
        problem,
        delay,
        attempt + 2,
        attempts,
    )
    await asyncio.sleep(delay)


def _exhausted(
    model_id: str,
    attempts: int,
    problem: str,
    status: int | None,
    kind: str,
    error: type[MastraMemoryError],
) -> MastraMemoryError:
    return error(
        f"{kind} {model_id} failed after {attempts} attempts, last: {problem}. "
        "The provider may be overloaded or unreachable; try again later or check base_url.",
        details={"model_id": model_id, "status": status, "attempts": attempts},
    )


def _provider_message(response: httpx.Response, secrets: Sequence[str]) -> str:
    """The error message in the body (OpenAI and Google both use ``{"error": {"message": ...}}``)."""
    text = response.text
    try:
        payload = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError):
        payload = None
    message: object = None
    if isinstance(payload, dict):
        error = payload.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        message = message or payload.get("message") or payload.get("detail")
    found = message if isinstance(message, str) and message.strip() else text.strip()
    found = found or response.reason_phrase or "no error message"
    if len(found) > _MAX_ERROR_TEXT:
        found = found[:_MAX_ERROR_TEXT] + "..."
    return _mask(found, secrets)


def _hint(status: int) -> str:
    if status in (401, 403):
        return " (check the API key and that it may use this model)"
    if status == 404:
        return " (check the model name and base_url)"
    return ""


def _mask(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def _non_negative(options: Mapping[str, Any], name: str, default: float) -> float:
    value = options.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigError(f"{name} must be a number of seconds >= 0, got {value!r}")
    return float(value)
