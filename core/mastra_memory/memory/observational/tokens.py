"""Token counting for observational memory's thresholds (docs/spec.md §5.14): unobserved messages against
``observation.messageTokens``, observations against ``reflection.observationTokens``.

Counted with the project's counter (:func:`mastra_memory.memory.tokens.default_token_counter`: tiktoken's
``cl100k_base`` offline with the ``tokens`` extra, else the approximate counter), where Mastra estimates
with ``tokenx`` [Δ]: the thresholds are estimates on both sides and fire at nearly the same point.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...messages import MastraDBMessage
from ..tokens import TokenCounter, default_token_counter, message_tokens


def count_messages(messages: Iterable[MastraDBMessage], counter: TokenCounter | None = None) -> int:
    """The tokens the messages cost in a prompt (text, tool calls and results, per-message overhead)."""
    counter = counter or default_token_counter()
    return sum(message_tokens(m, counter) for m in messages)


def count_text(text: str, counter: TokenCounter | None = None) -> int:
    """The tokens of an observation text."""
    return (counter or default_token_counter()).count(text) if text else 0


def message_threshold(
    message_tokens_limit: int, observation_tokens_limit: int, observation_tokens: int, share: bool
) -> int:
    """The unobserved-message tokens that start an observation: ``message_tokens``, or with
    ``shareTokenBudget`` the shared budget less what the observations use (never below
    ``message_tokens``: messages may borrow the observations' unused room, not the other way)."""
    if not share:
        return message_tokens_limit
    return max(message_tokens_limit, message_tokens_limit + observation_tokens_limit - observation_tokens)
