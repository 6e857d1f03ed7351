"""How long the HTTP embedders wait before a retry, and the retry options."""

from __future__ import annotations

import email.utils
import time

import pytest

from mastra_memory.embedders.http_client import RetryPolicy, retry_delay, timeout_option
from mastra_memory.errors import ConfigError

POLICY = RetryPolicy(max_retries=3, base_delay=1.0, max_delay=30.0)


@pytest.mark.parametrize("attempt", [0, 1, 2])
def test_backoff_doubles_per_attempt_with_jitter(attempt: int) -> None:
    delays = [retry_delay(attempt, None, POLICY) for _ in range(50)]

    assert all(0.5 * 2**attempt <= d <= 2**attempt for d in delays)


def test_retry_after_seconds_wins_over_backoff() -> None:
    assert retry_delay(0, {"Retry-After": "7"}, POLICY) == 7.0


def test_retry_after_http_date_is_honoured() -> None:
    when = email.utils.formatdate(time.time() + 10, usegmt=True)

    delay = retry_delay(0, {"retry-after": when}, POLICY)

    assert 8.0 <= delay <= 10.0


def test_retry_after_ms_wins_over_retry_after() -> None:
    assert retry_delay(0, {"retry-after-ms": "250", "retry-after": "9"}, POLICY) == 0.25


def test_server_delay_is_capped() -> None:
    assert retry_delay(0, {"Retry-After": "3600"}, POLICY) == 30.0


def test_past_date_means_no_wait() -> None:
    assert retry_delay(0, {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, POLICY) == 0.0


def test_unreadable_retry_after_falls_back_to_backoff() -> None:
    assert 0.5 <= retry_delay(0, {"Retry-After": "soon"}, POLICY) <= 1.0


def test_policy_from_options() -> None:
    policy = RetryPolicy.from_options({"max_retries": 5, "retry_base_delay": 0, "retry_max_delay": 2})

    assert policy == RetryPolicy(max_retries=5, base_delay=0.0, max_delay=2.0)
    assert RetryPolicy.from_options({}) == RetryPolicy()


@pytest.mark.parametrize(
    "options", [{"max_retries": -1}, {"max_retries": 1.5}, {"retry_base_delay": -1}, {"retry_max_delay": "x"}]
)
def test_bad_retry_options_are_config_errors(options: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        RetryPolicy.from_options(options)


def test_timeout_option() -> None:
    assert timeout_option({}) == 60.0
    assert timeout_option({"timeout": 5}) == 5.0
    with pytest.raises(ConfigError, match="timeout"):
        timeout_option({"timeout": 0})
