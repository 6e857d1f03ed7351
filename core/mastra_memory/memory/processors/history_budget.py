"""Mastra's token budget on history (``messageHistory: {maxTokens, atMaxRemoveTokens}``, docs/spec.md §5.12):
the per-thread boundary kept in thread metadata, loading history under the budget, and the
``memory-token-limiter`` input step that trims remembered messages and moves the boundary.

The rules are Mastra 1.31's (``@mastra/core`` ``message-history-config``, ``load-message-history`` and
``TokenLimiterProcessor``'s ``memory-only`` mode); only the token count is this project's (§5.12 Tokens).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeGuard

from ...messages import MastraDBMessage, ToolInvocationPart
from ...storage import MemoryStorage
from ...timestamps import canonical_timestamp, parse_timestamp
from ..config import HistoryLimits, js_number
from ..message_list import MessageList
from ..tokens import TokenCounter, default_token_counter, message_tokens
from .base import InputCall, InputProcessor
from .context import MemoryContext

#: The thread-metadata key Mastra keeps the boundary under.
BOUNDARY_KEY = "memoryTokenLimiter"
#: Tokens Mastra adds once per prompt (its ``TOKENS_PER_CONVERSATION``): the prompt's own framing.
PROMPT_OVERHEAD = 24
#: Messages per storage query while history is loaded under a budget (Mastra's page size).
HISTORY_PAGE = 40

#: How one message is counted: its tokens in a prompt.
MessageCost = Callable[[MastraDBMessage], int | float]


def message_cost(counter: TokenCounter | None = None) -> MessageCost:
    """This project's count of one message (``message_tokens``), Mastra's ``countMessage`` here **[Δ]**."""
    chosen = counter or default_token_counter()
    return lambda message: message_tokens(message, chosen)


@dataclass(frozen=True)
class TokenBoundary:
    """Where trimmed history ends in one thread: messages at or before ``created_at`` are no longer loaded,
    except those at exactly ``created_at`` whose id is not in ``message_ids`` (Mastra's
    ``MemoryTokenBoundary``). Valid only for the budget it was written with."""

    created_at: datetime
    message_ids: tuple[str, ...]
    max_tokens: int | float
    at_max_remove_tokens: int | float

    @classmethod
    def of_thread(cls, thread: Any) -> TokenBoundary | None:
        """The boundary in a thread's metadata, or None when there is none or it is malformed (Mastra's
        ``getMemoryTokenBoundary`` rules: an ISO ``createdAt``, a list of string ids, two numbers)."""
        metadata = (
            getattr(thread, "metadata", None) if not isinstance(thread, dict) else thread.get("metadata")
        )
        value = metadata.get(BOUNDARY_KEY) if isinstance(metadata, dict) else None
        if not isinstance(value, dict):
            return None
        stamp, ids = value.get("createdAt"), value.get("messageIds")
        max_tokens, remove = value.get("maxTokens"), value.get("atMaxRemoveTokens")
        if (
            not isinstance(stamp, str)
            or not isinstance(ids, list)
            or not all(isinstance(i, str) for i in ids)
        ):
            return None
        if not _number(max_tokens) or not _number(remove):
            return None
        try:
            created_at = parse_timestamp(stamp)
        except ValueError:
            return None
        return cls(created_at, tuple(ids), max_tokens, remove)

    def for_limits(self, limits: HistoryLimits) -> TokenBoundary | None:
        """This boundary when it was written with ``limits``' budget, else None (a changed budget starts over,
        as in Mastra)."""
        if self.max_tokens == limits.max_tokens and self.at_max_remove_tokens == limits.at_max_remove_tokens:
            return self
        return None

    def admits(self, message: MastraDBMessage) -> bool:
        """Whether ``message`` lies after the boundary (Mastra's ``isAfterMemoryTokenBoundary``)."""
        return message.created_at > self.created_at or (
            message.created_at == self.created_at and message.id not in self.message_ids
        )

    def to_json(self) -> dict[str, Any]:
        """The metadata value, in Mastra's keys and number forms."""
        return {
            "createdAt": canonical_timestamp(self.created_at),
            "messageIds": list(self.message_ids),
            "maxTokens": js_number(self.max_tokens),
            "atMaxRemoveTokens": js_number(self.at_max_remove_tokens),
        }


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def advance_boundary(
    previous: TokenBoundary | None,
    removed: Sequence[MastraDBMessage],
    max_tokens: int | float,
    at_max_remove_tokens: int | float,
) -> TokenBoundary | None:
    """The boundary after ``removed`` left the prompt: at the newest removed message, never earlier than
    ``previous`` (recall may bring older messages back; the boundary does not move back for them)."""
    if not removed:
        return previous
    newest = max(m.created_at for m in removed)
    if previous is not None and newest < previous.created_at:
        return previous
    ids = [m.id for m in removed if m.created_at == newest]
    kept = list(previous.message_ids) if previous is not None and previous.created_at == newest else []
    return TokenBoundary(newest, tuple(dict.fromkeys([*kept, *ids])), max_tokens, at_max_remove_tokens)


def _tool_call_ids(message: MastraDBMessage) -> list[str]:
    ids = [p.tool_invocation.tool_call_id for p in message.content.parts if isinstance(p, ToolInvocationPart)]
    for item in message.content.tool_invocations or []:
        if isinstance(item, dict):
            call_id = item.get("toolCallId", item.get("tool_call_id"))
            if isinstance(call_id, str) and call_id:
                ids.append(call_id)
    return list(dict.fromkeys(i for i in ids if i))


def linked_groups(
    messages: Sequence[MastraDBMessage],
    call_ids: Callable[[MastraDBMessage], Iterable[str]] = _tool_call_ids,
) -> list[list[MastraDBMessage]]:
    """``messages`` grouped so that messages sharing a tool-call id (``call_ids`` of a message) stay
    together (Mastra's ``groupLinkedToolMessages``); groups in the order of their first message, members in
    input order."""
    parent = list(range(len(messages)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}
    for index, message in enumerate(messages):
        for call_id in call_ids(message):
            if call_id not in first:
                first[call_id] = index
            else:
                left, right = find(first[call_id]), find(index)
                if left != right:
                    parent[right] = left
    groups: dict[int, list[MastraDBMessage]] = {}
    for index, message in enumerate(messages):
        groups.setdefault(find(index), []).append(message)
    return list(groups.values())


@dataclass(frozen=True)
class LoadedHistory:
    """History loaded under limits, oldest first: what fits, and (``include_overflow``) the older messages
    read on the way that did not fit the token budget."""

    messages: list[MastraDBMessage]
    overflow: list[MastraDBMessage]


def _partition(
    newest_first: list[MastraDBMessage], limits: HistoryLimits, cost: MessageCost | None, initial: float
) -> tuple[LoadedHistory, str | None]:
    budget = None if limits.max_tokens is None else limits.max_tokens - limits.at_max_remove_tokens
    count, tokens, reached, reason = 0, initial, False, None
    kept: set[str] = set()
    for group in linked_groups(newest_first):
        group_tokens = sum(cost(m) for m in group) if cost is not None else 0
        over_count = limits.max_messages is not None and count + len(group) > limits.max_messages
        over_tokens = budget is not None and tokens + group_tokens > budget
        if reached or over_count or over_tokens:
            if not reached:
                reason = "tokens" if over_tokens else "messages"
            reached = True
            continue
        count += len(group)
        tokens += group_tokens
        kept.update(m.id for m in group)
    messages = [m for m in reversed(newest_first) if m.id in kept]
    overflow = [m for m in reversed(newest_first) if m.id not in kept]
    return LoadedHistory(messages, overflow), reason


async def load_history(
    storage: MemoryStorage,
    thread_id: str,
    resource_id: str | None,
    limits: HistoryLimits,
    cost: MessageCost,
    boundary: TokenBoundary | None = None,
    *,
    initial_tokens: float = 0,
    include_overflow: bool = False,
) -> LoadedHistory:
    """The thread's newest messages after ``boundary`` within ``limits`` (count cap, and
    ``max_tokens - at_max_remove_tokens`` tokens), linked tool messages kept or left together; read newest
    first a page at a time until the limits are passed (Mastra's ``loadMessageHistory``). System and signal
    messages are never history. ``include_overflow`` also returns, when the token budget (not the count)
    ended the history, the older messages read on the way."""
    loaded: dict[str, MastraDBMessage] = {}
    page = 0
    cutoff: datetime | None = None
    date_range = {"start": boundary.created_at} if boundary is not None else None
    while True:
        found = await storage.list_messages(
            thread_id,
            resource_id=resource_id,
            per_page=HISTORY_PAGE,
            page=page,
            filter={"date_range": date_range} if date_range is not None else None,
            order_by={"field": "created_at", "direction": "DESC"},
            include_total=False,
        )
        for message in found.messages:
            if message.role in ("system", "signal") or (
                boundary is not None and not boundary.admits(message)
            ):
                continue
            loaded.setdefault(message.id, message)
        newest_first = sorted(loaded.values(), key=lambda m: (m.created_at, m.id), reverse=True)
        result, reason = _partition(newest_first, limits, cost, initial_tokens)
        if result.overflow:
            cutoff = result.overflow[-1].created_at
        oldest = found.messages[-1].created_at if found.messages else None
        done = (
            not found.has_more
            or oldest is None
            or (cutoff is not None and oldest < cutoff)
            or (boundary is not None and oldest < boundary.created_at)
        )
        if done:
            return result if include_overflow and reason == "tokens" else LoadedHistory(result.messages, [])
        page += 1


class MemoryTokenLimiter(InputProcessor):
    """The last memory input step under ``message_history`` (Mastra's ``memory-token-limiter``).

    It counts the whole prompt — :data:`PROMPT_OVERHEAD`, the system messages and every message — and when
    that is over ``max_tokens`` removes remembered messages (source ``memory``; never the turn's own, never
    a group linked by a tool call to one of them), oldest group first, until the prompt is at most
    ``max_tokens - at_max_remove_tokens``. The thread's boundary then moves past the removed messages of
    this thread, so later turns start after them; nothing is deleted from storage. A ``read_only`` request
    trims but writes no boundary.
    """

    id = "memory-token-limiter"
    name = "Memory Token Limiter"

    def __init__(
        self,
        storage: MemoryStorage,
        limits: HistoryLimits,
        token_counter: TokenCounter | None = None,
        read_only: bool = False,
        cost: MessageCost | None = None,
    ) -> None:
        if limits.max_tokens is None:
            raise ValueError("MemoryTokenLimiter needs limits with max_tokens")
        self.storage = storage
        self.limits = limits
        self.cost = cost or message_cost(token_counter)
        self.read_only = read_only

    async def _process_input(self, call: InputCall) -> MessageList:
        """Trim the oldest remembered messages when the prompt is over budget (docs/spec.md §5.12)."""
        message_list = call.message_list
        max_tokens = self.limits.max_tokens
        assert max_tokens is not None  # checked in __init__
        everything = message_list.all()
        removable = {m.id for m in everything if message_list.source_of(m.id) == "memory"}
        by_time = sorted(everything, key=lambda m: m.created_at)  # stable: Mastra's sort by createdAt
        candidates = [g for g in linked_groups(by_time) if all(m.id in removable for m in g)]
        costs = {m.id: self.cost(m) for m in everything}
        total = (
            PROMPT_OVERHEAD + sum(self.cost(m) for m in message_list.system_messages) + sum(costs.values())
        )
        if total <= max_tokens:
            return message_list
        target = max_tokens - self.limits.at_max_remove_tokens
        removed: list[MastraDBMessage] = []
        for group in candidates:
            if total <= target:
                break
            removed.extend(group)
            total -= sum(costs[m.id] for m in group)
        if not removed:
            return message_list
        await self._advance(call.request_context, removed)
        message_list.remove(m.id for m in removed)
        return message_list

    async def _advance(self, request_context: Any, removed: list[MastraDBMessage]) -> None:
        ctx = MemoryContext.read(request_context)
        if ctx is None or self.read_only or ctx.read_only:
            return
        local = [m for m in removed if m.thread_id == ctx.thread_id]
        if not local:
            return
        thread = await self.storage.get_thread_by_id(ctx.thread_id)
        if thread is None:
            return
        assert self.limits.max_tokens is not None
        stored = TokenBoundary.of_thread(thread)
        previous = stored.for_limits(self.limits) if stored is not None else None
        boundary = advance_boundary(previous, local, self.limits.max_tokens, self.limits.at_max_remove_tokens)
        if boundary is None or boundary is previous:
            return
        updated = await self.storage.update_thread(ctx.thread_id, metadata={BOUNDARY_KEY: boundary.to_json()})
        # The context's thread carries the new boundary for later steps of this request, as in Mastra.
        if isinstance(ctx.thread, dict):
            ctx.thread["metadata"] = dict(updated.metadata or {})
