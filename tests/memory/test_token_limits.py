"""TokenLimiter and token counting (docs/spec.md §5.12): what the model receives under a limit, the typed
error on abort, a plugged-in counter, and the offline default."""

from __future__ import annotations

import pytest

from mastra_memory.errors import ConfigError, TokenLimitError
from mastra_memory.memory import (
    ApproximateTokenCounter,
    MessageList,
    TiktokenCounter,
    TokenLimiter,
    default_token_counter,
    message_tokens,
)


class Words:
    """A user-supplied counter: one token per word."""

    def count(self, text: str) -> int:
        return len(text.split())


def turn() -> MessageList:
    listing = MessageList(thread_id="t", resource_id="r")
    history = [{"id": f"h{i}", "thread_id": "t", "role": "user", "content": "w " * 10} for i in range(5)]
    listing.add(history, source="memory")
    listing.add([{"id": "new", "thread_id": "t", "role": "user", "content": "question"}], source="input")
    listing.add_system("system words here")
    return listing


def test_the_default_counter_is_tiktoken_from_the_bundled_file() -> None:
    # The suite blocks every socket beyond loopback: this loads cl100k_base without any download.
    counter = default_token_counter()
    assert isinstance(counter, TiktokenCounter)
    assert counter.count("hello world") == 2
    # ceil(5/4) per word, one per punctuation mark and per non-ASCII character: 2 + 2 + 1 + 2.
    assert ApproximateTokenCounter().count("hello world, 日本") == 7


async def test_truncate_drops_the_oldest_history_first() -> None:
    listing = turn()
    # system 3+4, input 1+4, each history message 10+4: room for two history messages in 40.
    await TokenLimiter(40, token_counter=Words()).process_input([], listing)
    assert [m.id for m in listing.all()] == ["h3", "h4", "new"]
    assert len(listing.system_messages) == 1


async def test_abort_raises_a_typed_error_and_calls_the_hosts_abort() -> None:
    reasons: list[str] = []
    with pytest.raises(TokenLimitError) as err:
        await TokenLimiter(40, strategy="abort", token_counter=Words()).process_input(
            [], turn(), reasons.append
        )
    assert err.value.details["limit"] == 40
    assert reasons
    assert "over the TokenLimiter limit of 40" in reasons[0]


async def test_part_mode_drops_only_messages_over_the_limit_alone() -> None:
    listing = turn()
    listing.add([{"id": "big", "thread_id": "t", "role": "user", "content": "w " * 50}], source="memory")
    await TokenLimiter(20, count_mode="part", token_counter=Words()).process_input([], listing)
    assert "big" not in listing
    assert "h0" in listing


async def test_output_truncation_cuts_the_response_text() -> None:
    response = [
        {
            "id": "a",
            "thread_id": "t",
            "role": "assistant",
            "content": {"format": 2, "parts": [{"type": "text", "text": "w " * 30}]},
        }
    ]
    [cut] = await TokenLimiter(14, token_counter=Words()).process_output_result(response)
    assert message_tokens(cut, Words()) <= 14
    assert cut.content.parts[0].text.split() == ["w"] * 10
    with pytest.raises(TokenLimitError):
        await TokenLimiter(14, strategy="abort", token_counter=Words()).process_output_result(response)


def test_bad_options_are_config_errors() -> None:
    for bad in ({"limit": 0}, {"limit": 5, "strategy": "drop"}, {"limit": 5, "count_mode": "all"}):
        with pytest.raises(ConfigError):
            TokenLimiter(**bad)  # type: ignore[arg-type]


def _tool_turn() -> MessageList:
    """History with a tool call stored in one message and its result in a later one, then a big message."""
    listing = MessageList(thread_id="t", resource_id="r")
    call = {"state": "call", "toolCallId": "c1", "toolName": "w", "args": {}}
    listing.add(
        [
            {"id": "h1", "thread_id": "t", "role": "user", "content": "w " * 5},
            {
                "id": "h2",
                "thread_id": "t",
                "role": "assistant",
                "content": {"format": 2, "parts": [{"type": "tool-invocation", "toolInvocation": call}]},
            },
            {
                "id": "h3",
                "thread_id": "t",
                "role": "assistant",
                "content": {
                    "format": 2,
                    "parts": [
                        {
                            "type": "tool-invocation",
                            "toolInvocation": {**call, "state": "result", "result": "ok"},
                        }
                    ],
                },
            },
            {"id": "h4", "thread_id": "t", "role": "user", "content": "w " * 50},
            {"id": "h5", "thread_id": "t", "role": "user", "content": "w " * 5},
        ],
        source="memory",
    )
    listing.add([{"id": "new", "thread_id": "t", "role": "user", "content": "question"}], source="input")
    return listing


async def test_best_fit_is_the_default_and_passes_over_what_does_not_fit() -> None:
    listing = _tool_turn()
    await TokenLimiter(40, token_counter=Words()).process_input([], listing)
    # Words: new 5, h5 9, h4 54, the h2+h3 pair 6+7, h1 9. h4 does not fit; older messages still do.
    assert [m.id for m in listing.all()] == ["h1", "h2", "h3", "h5", "new"]


async def test_contiguous_stops_at_the_first_message_that_does_not_fit() -> None:
    listing = _tool_turn()
    await TokenLimiter(40, trim_mode="contiguous", token_counter=Words()).process_input([], listing)
    assert [m.id for m in listing.all()] == ["h5", "new"]


async def test_a_tool_call_and_its_result_stored_apart_are_kept_or_dropped_together() -> None:
    listing = _tool_turn()
    # 5 + 9 used; the pair (13) does not fit in 25, though h3 (7) alone would; h1 (9) then does.
    await TokenLimiter(25, token_counter=Words()).process_input([], listing)
    assert [m.id for m in listing.all()] == ["h1", "h5", "new"]


async def test_memory_only_waits_for_the_limit_then_frees_at_max_remove_tokens() -> None:
    listing = _tool_turn()
    # The whole context is 90 tokens: under the limit nothing is touched.
    await TokenLimiter(200, trim_mode="memory-only", token_counter=Words()).process_input([], listing)
    assert len(listing.all()) == 6
    listing = _tool_turn()
    limiter = TokenLimiter(80, trim_mode="memory-only", at_max_remove_tokens=60, token_counter=Words())
    await limiter.process_input([], listing)
    # Oldest first until at most 20: h1, the h2+h3 pair, h4 go; h5 and the question stay.
    assert [m.id for m in listing.all()] == ["h5", "new"]
    response = [{"id": "out", "thread_id": "t", "role": "assistant", "content": "w " * 500}]
    [kept] = await limiter.process_output_result(response)
    assert message_tokens(kept, Words()) > 80  # memory-only leaves the response alone


def test_trim_mode_and_at_max_remove_tokens_are_checked() -> None:
    with pytest.raises(ConfigError, match="trim_mode"):
        TokenLimiter(10, trim_mode="oldest")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="at_max_remove_tokens"):
        TokenLimiter(10, at_max_remove_tokens=11)
    assert TokenLimiter(100).at_max_remove_tokens == 25
