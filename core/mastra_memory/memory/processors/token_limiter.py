"""``TokenLimiter`` (docs/spec.md §5.12): keeps what the model receives, or what it returns, under a token
limit."""

from __future__ import annotations

from typing import Any, Literal

from ...errors import ConfigError, TokenLimitError
from ...messages import MastraDBMessage, TextPart, normalize_messages
from ..message_list import MessageList
from ..tokens import MESSAGE_OVERHEAD, TokenCounter, default_token_counter, message_tokens, truncate_to_tokens
from .base import InputCall, InputProcessor, OutputCall, OutputProcessor

Strategy = Literal["truncate", "abort"]
CountMode = Literal["cumulative", "part"]


class TokenLimiter(InputProcessor, OutputProcessor):
    """Mastra's ``TokenLimiterProcessor``: ``limit`` tokens, ``strategy`` ``truncate`` or ``abort``,
    ``count_mode`` ``cumulative`` (the whole context, or the whole response) or ``part`` (each message).

    Input (``process_input``): system messages and this turn's messages are always kept and counted first;
    memory messages (history, recalled context) are kept newest first while they fit, so the oldest go
    first. ``part`` drops each memory message that alone is over the limit. With ``abort`` nothing is
    dropped: the first excess raises :class:`~mastra_memory.errors.TokenLimitError` (after calling
    ``abort(reason)`` when the host passed a callable, as Mastra's tripwire does). With ``truncate``, system
    and new messages that alone are over the limit are still passed on: only memory messages are dropped.

    Output (``process_output_result``): the response's text is cut at a word boundary so that the response
    (``cumulative``) or each message (``part``) fits; ``abort`` raises instead.
    """

    id = "token-limiter"
    name = "TokenLimiter"

    def __init__(
        self,
        limit: int,
        strategy: Strategy = "truncate",
        count_mode: CountMode = "cumulative",
        token_counter: TokenCounter | None = None,
    ) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ConfigError(f"TokenLimiter limit must be an int >= 1, got {limit!r}")
        if strategy not in ("truncate", "abort"):
            raise ConfigError(f"TokenLimiter strategy must be 'truncate' or 'abort', got {strategy!r}")
        if count_mode not in ("cumulative", "part"):
            raise ConfigError(f"TokenLimiter count_mode must be 'cumulative' or 'part', got {count_mode!r}")
        self.limit = limit
        self.strategy: Strategy = strategy
        self.count_mode: CountMode = count_mode
        self.token_counter = token_counter

    @property
    def counter(self) -> TokenCounter:
        """The counter in use (the default one unless a counter was passed)."""
        return self.token_counter or default_token_counter()

    def _abort(self, abort: Any, what: str, tokens: int) -> None:
        reason = f"{what} is {tokens} tokens, over the TokenLimiter limit of {self.limit}"
        if callable(abort):
            abort(reason)
        raise TokenLimitError(
            f"{reason}; raise the limit, trim the input or use strategy='truncate'",
            details={"limit": self.limit, "tokens": tokens},
        )

    # --- input ----------------------------------------------------------------------------------

    async def _process_input(self, call: InputCall) -> MessageList:
        """Drop the oldest memory messages until the context fits (docs/spec.md §5.12)."""
        message_list, abort = call.message_list, call.abort
        counter = self.counter
        fixed = [*message_list.system_messages, *message_list.new_messages()]
        if self.count_mode == "part":
            for msg in fixed:
                if (cost := message_tokens(msg, counter)) > self.limit and self.strategy == "abort":
                    self._abort(abort, f"message {msg.id}", cost)
            drop = []
            for msg in message_list.all():
                if not message_list.is_new(msg.id) and (cost := message_tokens(msg, counter)) > self.limit:
                    if self.strategy == "abort":
                        self._abort(abort, f"message {msg.id}", cost)
                    drop.append(msg.id)
            return message_list.remove(drop)
        used = sum(message_tokens(m, counter) for m in fixed)
        if used > self.limit and self.strategy == "abort":
            self._abort(abort, "the input", used)
        memory = [m for m in message_list.all() if not message_list.is_new(m.id)]
        drop = []
        for msg in reversed(memory):  # newest first: the oldest are dropped first
            cost = message_tokens(msg, counter)
            if drop or used + cost > self.limit:
                if self.strategy == "abort":
                    self._abort(abort, "the context", used + cost)
                drop.append(msg.id)
            else:
                used += cost
        return message_list.remove(drop)

    # --- output ---------------------------------------------------------------------------------

    async def _process_output(self, call: OutputCall) -> MessageList | list[MastraDBMessage]:
        """Cut (or refuse) a response over the limit (docs/spec.md §5.12)."""
        message_list = call.message_list
        counter = self.counter
        thread_id = message_list.thread_id if message_list else None
        response = normalize_messages(call.messages, thread_id=thread_id)
        budget = self.limit
        out: list[MastraDBMessage] = []
        for msg in response:
            room = self.limit if self.count_mode == "part" else budget
            cost = message_tokens(msg, counter)
            if cost > room:
                if self.strategy == "abort":
                    self._abort(call.abort, "the response", cost)
                msg = self._cut(msg, room)
                cost = message_tokens(msg, counter)
            budget = max(0, budget - cost)
            out.append(msg)
        if message_list is None:
            return out
        message_list.add(out, source="response")
        return message_list

    def _cut(self, msg: MastraDBMessage, room: int) -> MastraDBMessage:
        """``msg`` with its text parts cut so the message fits ``room`` tokens (non-text parts are kept)."""
        counter = self.counter
        left = max(0, room - (message_tokens(msg, counter) - self._text_tokens(msg)))
        parts = []
        for part in msg.content.parts:
            if isinstance(part, TextPart):
                text = truncate_to_tokens(part.text, left, counter)
                left = max(0, left - counter.count(text))
                if not text:
                    continue
                part = part.model_copy(update={"text": text})
            parts.append(part)
        content = msg.content.content
        if isinstance(content, str) and content:
            content = truncate_to_tokens(content, max(0, room - MESSAGE_OVERHEAD), counter)
        return msg.model_copy(
            update={"content": msg.content.model_copy(update={"parts": parts, "content": content})}
        )

    def _text_tokens(self, msg: MastraDBMessage) -> int:
        return sum(self.counter.count(p.text) for p in msg.content.parts if isinstance(p, TextPart))
