"""``MessageHistory`` (docs/spec.md §5.12): loads the thread's newest messages on input, persists the
turn's new messages on output."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, Literal

from ...errors import ConfigError
from ...messages import MastraDBMessage, ToolInvocationPart, normalize_messages
from ...storage import MemoryStorage
from ..config import HistoryLimits, MemoryConfig, MessageHistoryConfig
from ..incomplete_tool_calls import filter_incomplete_tool_calls
from ..message_list import MessageList
from ..stored_messages import messages_to_store
from ..tokens import TokenCounter, default_token_counter, message_tokens
from .base import InputCall, InputProcessor, OutputCall, OutputProcessor
from .context import MemoryContext, context_value
from .history_budget import TokenBoundary, load_history, message_cost
from .input_filter import is_client_update, with_updates

#: Messages fetched per storage query while a token budget is being filled.
_PAGE = 50


class MessageHistory(InputProcessor, OutputProcessor):
    """Recent history in, the turn out (Mastra's ``MessageHistory``).

    Input: the newest ``last_messages`` messages of the thread (of the request's resource, when known),
    oldest first, tagged ``memory``. With ``message_history`` (Mastra's ``{maxTokens, atMaxRemoveTokens}``)
    history starts after the thread's stored boundary and is read under the budget as Mastra reads it
    (`history_budget.load_history`, the older messages read on the way included); the
    ``memory-token-limiter`` step that follows trims the prompt. With the deprecated ``history_tokens``,
    only the newest messages that fit that budget (contiguous: it stops at the first that does not fit).
    A message the request sent again under its stored id becomes the stored copy (plus the request's tool
    outcomes for calls it still has pending), as in Mastra. Output: the turn's new messages (the response
    plus the list's input and response messages) stored with ``save_messages`` semantics — system and
    signal messages and working-memory markup are not stored; the thread is created for the request's
    resource when it does not exist yet. ``read_only`` (here or in the request) stores nothing.

    ``filter_incomplete_tool_calls`` (Mastra's ``filterIncompleteToolCalls``) shapes the history in the
    prompt: tool calls still waiting for a result are left out (True) or kept with a pending result (False).

    A request's ``memory_config`` replaces ``last_messages``, ``history_tokens``, ``read_only`` and
    ``filter_incomplete_tool_calls`` for that request. Storage errors propagate: a turn that cannot be
    stored must not pass silently.
    """

    id = "message-history"
    name = "MessageHistory"

    def __init__(
        self,
        storage: MemoryStorage | None,
        last_messages: int | Literal[False] | None = 10,
        history_tokens: int | None = None,
        token_counter: TokenCounter | None = None,
        read_only: bool = False,
        message_history: MessageHistoryConfig | Mapping[str, Any] | None = None,
        filter_incomplete_tool_calls: bool = True,
    ) -> None:
        if storage is None:
            raise ConfigError("MessageHistory requires storage; pass storage=...")
        # Validated with MemoryConfig's rules, so the processor accepts exactly what Memory accepts (the
        # deprecation of history_tokens is announced by Memory's options, not again for every request).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            cfg = MemoryConfig.from_any(
                {
                    "last_messages": False if last_messages is None else last_messages,
                    "history_tokens": history_tokens,
                    "message_history": message_history,
                }
            )
        self.storage = storage
        self.last_messages: int | Literal[False] = cfg.last_messages
        self.history_tokens = cfg.history_tokens
        self.message_history = cfg.message_history
        self.token_counter = token_counter
        self.read_only = read_only
        if not isinstance(filter_incomplete_tool_calls, bool):
            raise ConfigError(
                f"filter_incomplete_tool_calls must be True or False, got {filter_incomplete_tool_calls!r}"
            )
        self.filter_incomplete_tool_calls = filter_incomplete_tool_calls

    # --- input ----------------------------------------------------------------------------------

    async def _process_input(self, call: InputCall) -> MessageList:
        """Add the thread's recent history ahead of the new input (docs/spec.md §5.12)."""
        message_list = call.message_list
        ctx = MemoryContext.read(call.request_context)
        if ctx is None:
            return message_list
        limit = ctx.option("last_messages", self.last_messages)
        budget = ctx.option("history_tokens", self.history_tokens)
        tokens: MessageHistoryConfig | None = ctx.option("message_history", self.message_history)
        if tokens is not None:
            if tokens.max_tokens == 0 or (limit == 0 and limit is not False):
                return message_list  # Mastra's messageHistory.maxTokens=0: history off (docs/spec.md §5.1)
            history = await self._under_budget(ctx, limit, tokens)
        else:
            if limit is False or not isinstance(limit, int) or limit == 0:
                return message_list
            history = await self._newest(ctx, limit, budget)
        fresh = [m for m in history if m.id not in message_list]
        if fresh:
            message_list.add(fresh, source="memory")
        self._stored_copies_win(message_list, [m for m in history if m.id not in {f.id for f in fresh}])
        self._prompt_tool_calls(
            message_list, ctx.option("filter_incomplete_tool_calls", self.filter_incomplete_tool_calls)
        )
        return message_list

    @staticmethod
    def _prompt_tool_calls(message_list: MessageList, filter_incomplete: bool) -> None:
        """Mastra's ``filterIncompleteToolCalls`` on the history this step put in the prompt (docs/spec.md
        §5.11, §5.12): the rule is decided over the whole list (which assistant turn is still open depends on
        the turn's input), and applied to the remembered messages only; the turn's own messages are never
        changed, since output stores them as they are [Δ]. This is the one place stored messages become
        prompt messages (recalled context arrives as a system message)."""
        everything = message_list.all()
        if not any(isinstance(p, ToolInvocationPart) for m in everything for p in m.content.parts):
            return
        kept = {
            m.id: m for m in filter_incomplete_tool_calls(everything, filter_incomplete=filter_incomplete)
        }
        remembered = [m for m in everything if not message_list.is_new(m.id)]
        message_list.remove(m.id for m in remembered if m.id not in kept)
        changed = [kept[m.id] for m in remembered if m.id in kept and kept[m.id] is not m]
        if changed:
            message_list.add(changed, source="memory")  # an id present keeps its source

    @staticmethod
    def _stored_copies_win(message_list: MessageList, stored: list[MastraDBMessage]) -> None:
        """A message the request sent again under its stored id becomes the stored copy (its text, metadata
        and ``created_at``), with the request's tool outcomes for calls it still has pending; it stays
        the turn's, so output stores it as it now is (docs/spec.md §5.12, as Mastra's ``MessageList``)."""
        if not stored:
            return
        given = {m.id: m for m in message_list.new_messages()}
        for copy in stored:
            sent = given.get(copy.id)
            if sent is None:
                continue
            updates = [
                p for p in sent.content.parts if isinstance(p, ToolInvocationPart) and is_client_update(p)
            ]
            message_list.add([with_updates(copy, updates) or copy], source="memory")  # keeps its source

    async def _under_budget(
        self, ctx: MemoryContext, limit: int | Literal[False], tokens: MessageHistoryConfig
    ) -> list[MastraDBMessage]:
        # docs/spec.md §5.12: a count cap only when last_messages is a number (Memory passes False when
        # its options set none), the boundary only when it was written with this budget.
        limits = HistoryLimits(
            enabled=True,
            max_messages=limit if limit is not False else None,
            max_tokens=tokens.max_tokens,
            at_max_remove_tokens=tokens.remove_tokens,
        )
        stored = TokenBoundary.of_thread(await self.storage.get_thread_by_id(ctx.thread_id))
        boundary = stored.for_limits(limits) if stored is not None else None
        loaded = await load_history(
            self.storage,
            ctx.thread_id,
            ctx.resource_id,
            limits,
            message_cost(self.token_counter),
            boundary,
            include_overflow=True,
        )
        return [*loaded.overflow, *loaded.messages]

    async def _newest(self, ctx: MemoryContext, limit: int, budget: int | None) -> list[MastraDBMessage]:
        counter = (self.token_counter or default_token_counter()) if budget is not None else None
        kept: list[MastraDBMessage] = []  # newest first
        used = 0
        page = 0
        per_page = limit if budget is None else min(limit, _PAGE)
        while len(kept) < limit:
            found = await self.storage.list_messages(
                ctx.thread_id,
                resource_id=ctx.resource_id,
                per_page=per_page,
                page=page,
                order_by={"field": "created_at", "direction": "DESC"},
                include_total=False,
            )
            for msg in found.messages:
                if len(kept) >= limit:
                    break
                if budget is not None and counter is not None:
                    cost = message_tokens(msg, counter)
                    if used + cost > budget:
                        return kept[::-1]
                    used += cost
                kept.append(msg)
            if len(found.messages) < per_page:
                break
            page += 1
        return kept[::-1]

    # --- output ---------------------------------------------------------------------------------

    async def _process_output(self, call: OutputCall) -> MessageList | list[MastraDBMessage]:
        """Store the turn's new messages (docs/spec.md §5.12); returns what it was given."""
        message_list = call.message_list
        ctx = MemoryContext.read(call.request_context)
        response = normalize_messages(call.messages, thread_id=ctx.thread_id if ctx else None)
        done: MessageList | list[MastraDBMessage] = message_list if message_list is not None else response
        if ctx is None or self.read_only or ctx.read_only:
            return done
        turn: dict[str, MastraDBMessage] = {}
        if message_list is not None:
            turn.update((m.id, m) for m in message_list.new_messages())
        for m in response:
            if message_list is None or m.id not in message_list or message_list.is_new(m.id):
                turn[m.id] = m
        # History and recalled context are already stored; only this turn's messages are written.
        todo = messages_to_store(
            [
                m.model_copy(update={"thread_id": ctx.thread_id}) if not m.thread_id else m
                for m in turn.values()
            ]
        )
        if not todo:
            return done
        await self._ensure_thread(ctx)
        await self.storage.save_messages(todo)
        return done

    async def _ensure_thread(self, ctx: MemoryContext) -> None:
        if await self.storage.get_thread_by_id(ctx.thread_id) is not None or ctx.resource_id is None:
            return  # without a resource the write raises ThreadNotFoundError, which says what is missing
        title = context_value(ctx.thread, "title")
        metadata = context_value(ctx.thread, "metadata")
        await self.storage.save_thread(
            {
                "id": ctx.thread_id,
                "resource_id": ctx.resource_id,
                "title": title if isinstance(title, str) else "",
                "metadata": dict(metadata) if isinstance(metadata, dict) else None,
            }
        )
