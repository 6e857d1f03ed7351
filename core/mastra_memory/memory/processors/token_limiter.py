"""``TokenLimiter`` (docs/spec.md §5.12): keeps what the model receives, or what it returns, under a token
limit."""

from __future__ import annotations

from typing import Any, Literal

from ...errors import ConfigError, TokenLimitError
from ...messages import MastraDBMessage, TextPart, ToolInvocationPart, normalize_messages
from ..message_list import MessageList
from ..tokens import MESSAGE_OVERHEAD, TokenCounter, default_token_counter, message_tokens, truncate_to_tokens
from .base import InputCall, InputProcessor, OutputCall, OutputProcessor
from .history_budget import linked_groups

Strategy = Literal["truncate", "abort"]
CountMode = Literal["cumulative", "part"]
TrimMode = Literal["best-fit", "contiguous", "memory-only"]


class TokenLimiter(InputProcessor, OutputProcessor):
    """Mastra's ``TokenLimiterProcessor``: ``limit`` tokens, ``strategy`` ``truncate`` or ``abort``,
    ``count_mode`` ``cumulative`` (the whole context, or the whole response) or ``part`` (each message).

    Input (``process_input``): system messages and this turn's messages are always kept and counted first;
    memory messages (history, recalled context) are kept newest first while they fit. Messages that share a
    tool call id (a call and its result stored apart) are kept or dropped together. ``trim_mode``, as
    Mastra's ``trimMode``: ``best-fit`` (default) passes over a message that does not fit and keeps older
    ones that do; ``contiguous`` stops at the first that does not fit, so the history kept has no gap;
    ``memory-only`` does nothing until the whole context is over ``limit``, then drops the oldest memory
    messages until it is at most ``limit - at_max_remove_tokens`` (default a quarter of ``limit``) and
    leaves the response alone. ``part`` drops each memory message that alone is over the limit. With
    ``abort`` nothing is dropped: the first excess raises `TokenLimitError`
    (after calling ``abort(reason)`` when the host passed a callable, as Mastra's tripwire does). With
    ``truncate``, system and new messages that alone are over the limit are still passed on: only memory
    messages are dropped.

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
        *,
        trim_mode: TrimMode = "best-fit",
        at_max_remove_tokens: int | None = None,
    ) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ConfigError(f"TokenLimiter limit must be an int >= 1, got {limit!r}")
        if strategy not in ("truncate", "abort"):
            raise ConfigError(f"TokenLimiter strategy must be 'truncate' or 'abort', got {strategy!r}")
        if count_mode not in ("cumulative", "part"):
            raise ConfigError(f"TokenLimiter count_mode must be 'cumulative' or 'part', got {count_mode!r}")
        if trim_mode not in ("best-fit", "contiguous", "memory-only"):
            raise ConfigError(
                f"TokenLimiter trim_mode must be 'best-fit', 'contiguous' or 'memory-only', got {trim_mode!r}"
            )
        if at_max_remove_tokens is not None and (
            isinstance(at_max_remove_tokens, bool)
            or not isinstance(at_max_remove_tokens, int)
            or not 0 <= at_max_remove_tokens <= limit
        ):
            raise ConfigError(
                "TokenLimiter at_max_remove_tokens must be an int between 0 and limit, got "
                f"{at_max_remove_tokens!r}"
            )
        self.limit = limit
        self.trim_mode: TrimMode = trim_mode
        # Mastra's default: free a quarter of the limit each time memory-only trims.
        self.at_max_remove_tokens = limit // 4 if at_max_remove_tokens is None else at_max_remove_tokens
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
        """Drop memory messages until the context fits, by ``trim_mode`` (docs/spec.md §5.12)."""
        message_list, abort = call.message_list, call.abort
        counter = self.counter
        fixed = [*message_list.system_messages, *message_list.new_messages()]
        groups = _tool_groups(message_list)
        if self.trim_mode == "memory-only":
            return self._trim_memory(message_list, groups)
        if self.count_mode == "part":
            for msg in fixed:
                if (cost := message_tokens(msg, counter)) > self.limit and self.strategy == "abort":
                    self._abort(abort, f"message {msg.id}", cost)
            drop: list[str] = []
            for group in groups:
                over = [m for m in group if (cost := message_tokens(m, counter)) > self.limit]
                if over and self.strategy == "abort":
                    self._abort(abort, f"message {over[0].id}", message_tokens(over[0], counter))
                if over:
                    drop.extend(m.id for m in group)
            return message_list.remove(drop)
        used = sum(message_tokens(m, counter) for m in fixed)
        if used > self.limit and self.strategy == "abort":
            self._abort(abort, "the input", used)
        drop = []
        for group in reversed(groups):  # newest first: the oldest are dropped first
            cost = sum(message_tokens(m, counter) for m in group)
            if (drop and self.trim_mode == "contiguous") or used + cost > self.limit:
                if self.strategy == "abort":
                    self._abort(abort, "the context", used + cost)
                drop.extend(m.id for m in group)
            else:
                used += cost
        return message_list.remove(drop)

    def _trim_memory(self, message_list: MessageList, groups: list[list[MastraDBMessage]]) -> MessageList:
        """``memory-only``: over ``limit``, drop the oldest memory groups until the context is at most
        ``limit - at_max_remove_tokens`` (Mastra's rule; ``strategy`` plays no part)."""
        counter = self.counter
        total = sum(message_tokens(m, counter) for m in [*message_list.system_messages, *message_list.all()])
        if total <= self.limit:
            return message_list
        target = self.limit - self.at_max_remove_tokens
        drop: list[str] = []
        for group in groups:  # oldest first
            if total <= target:
                break
            drop.extend(m.id for m in group)
            total -= sum(message_tokens(m, counter) for m in group)
        return message_list.remove(drop)

    # --- output ---------------------------------------------------------------------------------

    async def _process_output(self, call: OutputCall) -> MessageList | list[MastraDBMessage]:
        """Cut (or refuse) a response over the limit (docs/spec.md §5.12); ``memory-only`` leaves it alone."""
        message_list = call.message_list
        counter = self.counter
        thread_id = message_list.thread_id if message_list else None
        response = normalize_messages(call.messages, thread_id=thread_id)
        budget = self.limit
        out: list[MastraDBMessage] = []
        for msg in response:
            if self.trim_mode == "memory-only":
                out.append(msg)
                continue
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


def _tool_groups(message_list: MessageList) -> list[list[MastraDBMessage]]:
    """The list's memory messages in order, in groups that share a tool call id (a call and its result
    stored apart must be kept or dropped together, as Mastra's limiter keeps them). A group with one of
    this turn's messages in it is not memory's to drop, so it is left out."""
    groups = linked_groups(message_list.all(), _call_ids)
    return [g for g in groups if not any(message_list.is_new(m.id) for m in g)]


def _call_ids(msg: MastraDBMessage) -> set[str]:
    ids = {p.tool_invocation.tool_call_id for p in msg.content.parts if isinstance(p, ToolInvocationPart)}
    for invocation in msg.content.tool_invocations or []:
        call_id = getattr(invocation, "tool_call_id", None)
        if call_id is None and isinstance(invocation, dict):
            call_id = invocation.get("toolCallId") or invocation.get("tool_call_id")
        if isinstance(call_id, str):
            ids.add(call_id)
    return ids
