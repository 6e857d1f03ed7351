"""``MemorySession``: the OpenAI Agents SDK ``Session`` protocol over a mastra-memory thread.

Each SDK input item is one stored message of the thread ``session_id`` (owned by ``resource_id``). The item
itself rides verbatim in a ``data-openai-agents-item`` part, so ``get_items`` returns exactly what
``add_items`` was given; beside it the message carries the Mastra view of the item (text, or a
``tool-invocation`` part for a function call or its output), so the thread reads like any other Mastra
thread and its user and assistant text is embedded for semantic recall.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from agents.items import TResponseInputItem
from agents.memory import SessionSettings
from agents.memory.session_settings import resolve_session_limit
from mastra_memory.errors import ThreadOwnershipError, ValidationError
from mastra_memory.memory import Memory
from mastra_memory.messages import DataPart, MastraDBMessage, TextPart, ToolInvocationPart

#: The ``type`` of the part that holds the SDK item verbatim.
ITEM_PART_TYPE = "data-openai-agents-item"
_NEWEST_FIRST = {"field": "created_at", "direction": "DESC"}


class MemorySession:
    """An Agents SDK session whose items are the messages of the mastra-memory thread ``session_id``.

    Pass it as ``Runner.run(agent, input, session=MemorySession(...))``. The thread is created, owned by
    ``resource_id``, on the first ``add_items``; a thread of that id owned by another resource raises
    ``ThreadOwnershipError`` before anything is read or written. With semantic recall on in the
    ``Memory``, user and assistant text is embedded as it is saved, so other sessions of the same
    resource can recall it (see :class:`~mastra_memory_openai_agents.RecallInputFilter`).

    Args:
        session_id: the thread id.
        memory: the ``Memory`` that stores the thread.
        resource_id: the owner of the thread (a user, an account).
        session_settings: the SDK's settings; ``limit`` is the default of ``get_items``.
    """

    session_settings: SessionSettings | None

    def __init__(
        self,
        session_id: str,
        *,
        memory: Memory,
        resource_id: str,
        session_settings: SessionSettings | None = None,
    ) -> None:
        for value, what in ((session_id, "session_id"), (resource_id, "resource_id")):
            if not isinstance(value, str) or not value.strip():
                raise ValidationError(f"{what} must be a non-empty string, got {value!r}")
        if not isinstance(memory, Memory):
            raise ValidationError(f"memory must be a mastra_memory Memory, got {type(memory).__name__}")
        self.session_id = session_id
        self.resource_id = resource_id
        self.memory = memory
        self.session_settings = session_settings
        self._owner_checked = False
        # pop_item is read-then-delete: serialise it with the other writes of this session object.
        self._lock = asyncio.Lock()

    # --- the Session protocol -----------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The session's items, oldest first; with ``limit`` (or ``session_settings.limit``) the newest
        ``limit`` of them. Messages written to the thread by other code become items too (see
        :func:`message_items`)."""
        limit = resolve_session_limit(limit, self.session_settings)
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise ValidationError(f"limit must be None or an int >= 0, got {limit!r}")
        if limit == 0 or not await self._thread_exists():
            return []
        storage = self.memory.storage
        if limit is None:
            page = await storage.list_messages(self.session_id, resource_id=self.resource_id, per_page=False)
            return [item for message in page.messages for item in message_items(message)]
        # Newest first, one page of `limit` messages at a time: most messages are one item each.
        newest: list[TResponseInputItem] = []
        number = 0
        while len(newest) < limit:
            page = await storage.list_messages(
                self.session_id,
                resource_id=self.resource_id,
                per_page=limit,
                page=number,
                order_by=_NEWEST_FIRST,
                include_total=False,
            )
            for message in page.messages:
                newest[:0] = message_items(message)
            if not page.has_more:
                break
            number += 1
        return newest[-limit:]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append items, in order, as messages of the thread (one atomic save; embedded when semantic
        recall is on). An item that is not a JSON object raises ``ValidationError`` before any I/O."""
        messages = [self._message(item, position) for position, item in enumerate(items)]
        if not messages:
            return
        _name_tool_results(messages, await self._recent_calls(messages))
        async with self._lock:
            await self._ensure_thread()
            await self.memory.save_messages(messages)

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove the newest message of the thread and return its (last) item; None when empty."""
        async with self._lock:
            if not await self._thread_exists():
                return None
            page = await self.memory.storage.list_messages(
                self.session_id,
                resource_id=self.resource_id,
                per_page=1,
                order_by=_NEWEST_FIRST,
                include_total=False,
            )
            if not page.messages:
                return None
            newest = page.messages[0]
            await self.memory.delete_messages([newest.id])  # its vectors go too
            items = message_items(newest)
            return items[-1] if items else None

    async def clear_session(self) -> None:
        """Delete the thread, its messages and their vectors; the next ``add_items`` starts it again."""
        async with self._lock:
            if await self._thread_exists():
                await self.memory.delete_thread(self.session_id)

    # --- helpers ------------------------------------------------------------------------------

    async def _thread_exists(self) -> bool:
        await self.memory.init()
        thread = await self.memory.storage.get_thread_by_id(self.session_id)
        if thread is None:
            return False
        if thread.resource_id != self.resource_id:
            raise ThreadOwnershipError(
                f"thread {self.session_id!r} belongs to another resource than {self.resource_id!r}; "
                "use another session_id or the resource_id that owns it"
            )
        return True

    async def _ensure_thread(self) -> None:
        if not await self._thread_exists():
            # create_thread replaces an existing thread, so it runs only when there is none.
            await self.memory.create_thread(resource_id=self.resource_id, thread_id=self.session_id)

    def _message(self, item: Any, position: int) -> dict[str, Any]:
        if not isinstance(item, Mapping):
            raise ValidationError(
                f"item [{position}] must be a dict (a Responses input item), got {type(item).__name__}"
            )
        try:
            # The stored form is JSON: anything that would not come back equal is refused now.
            verbatim = json.loads(json.dumps(item, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise ValidationError(f"item [{position}] is not JSON-serialisable: {exc}") from None
        if verbatim != item:  # a tuple, a non-str key: the stored form would differ
            raise ValidationError(f"item [{position}] does not survive a JSON round trip unchanged")
        return {
            "thread_id": self.session_id,
            "resource_id": self.resource_id,
            **_mastra_view(verbatim),
        }

    async def _recent_calls(self, messages: Sequence[dict[str, Any]]) -> dict[str, str]:
        """Tool names by call id for outputs whose call is not in this batch (the SDK saves a run's
        call and output together, so this reads storage only in the rare other case)."""
        in_batch = {
            item["call_id"]: item.get("name", "")
            for item in (_item_of(m) for m in messages)
            if item.get("type") in _CALL_TYPES and isinstance(item.get("call_id"), str)
        }
        missing = [
            item["call_id"]
            for item in (_item_of(m) for m in messages)
            if item.get("type") in _OUTPUT_TYPES and item.get("call_id") not in in_batch
        ]
        if missing and await self._thread_exists():
            page = await self.memory.storage.list_messages(
                self.session_id, resource_id=self.resource_id, per_page=False
            )
            for stored in page.messages:
                for part in stored.content.parts:
                    if isinstance(part, ToolInvocationPart):
                        in_batch.setdefault(part.tool_invocation.tool_call_id, part.tool_invocation.tool_name)
        return in_batch


_CALL_TYPES = frozenset({"function_call", "custom_tool_call"})
_OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})
_TEXT_PART_TYPES = frozenset({"input_text", "output_text", "text"})


def item_text(item: Mapping[str, Any]) -> str:
    """The text of a message item: its string content, or its text parts joined by newlines."""
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            part["text"]
            for part in content
            if isinstance(part, Mapping)
            and part.get("type") in _TEXT_PART_TYPES
            and isinstance(part.get("text"), str)
        ]
        return "\n".join(t for t in texts if t)
    return ""


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _mastra_view(item: dict[str, Any]) -> dict[str, Any]:
    """Role and content of the message that stores ``item``: the item verbatim in a data part, plus text
    (embedded) for user and assistant messages, or a tool-invocation part for calls and their outputs.

    System and developer items are stored as assistant messages without text: the core never persists
    role ``system`` (docs/spec.md §5.4 step 1), and instructions are not something to recall.
    """
    data = {"type": ITEM_PART_TYPE, "data": item}
    kind = item.get("type")
    role = item.get("role")
    if isinstance(role, str) and kind in (None, "message"):
        text = item_text(item)
        if role in ("user", "assistant") and text.strip():
            return {"role": role, "content": {"format": 2, "content": text, "parts": [_text(text), data]}}
        return {"role": "user" if role == "user" else "assistant", "content": {"format": 2, "parts": [data]}}
    if kind in _CALL_TYPES and isinstance(item.get("call_id"), str):
        invocation = {
            "state": "call",
            "tool_call_id": item["call_id"],
            "tool_name": str(item.get("name", "")),
            "args": _arguments(item.get("arguments", item.get("input"))),
        }
        parts = [{"type": "tool-invocation", "tool_invocation": invocation}, data]
        return {"role": "assistant", "content": {"format": 2, "parts": parts}}
    if kind in _OUTPUT_TYPES and isinstance(item.get("call_id"), str):
        invocation = {
            "state": "result",
            "tool_call_id": item["call_id"],
            "tool_name": "",  # filled from the call by _name_tool_results
            "args": {},
            "result": item.get("output"),
        }
        parts = [{"type": "tool-invocation", "tool_invocation": invocation}, data]
        return {"role": "assistant", "content": {"format": 2, "parts": parts}}
    # Reasoning, hosted-tool calls, item references, compaction items: kept verbatim, nothing to embed.
    return {"role": "assistant", "content": {"format": 2, "parts": [data]}}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _item_of(message: Mapping[str, Any]) -> dict[str, Any]:
    for part in message["content"]["parts"]:
        if part.get("type") == ITEM_PART_TYPE:
            return cast(dict[str, Any], part["data"])
    return {}


def _name_tool_results(messages: Sequence[dict[str, Any]], names: Mapping[str, str]) -> None:
    for message in messages:
        for part in message["content"]["parts"]:
            invocation = part.get("tool_invocation")
            if invocation is not None and invocation["state"] == "result":
                invocation["tool_name"] = names.get(invocation["tool_call_id"], "")


def message_items(message: MastraDBMessage) -> list[TResponseInputItem]:
    """The SDK items of a stored message: the verbatim item of a message the session wrote; for any
    other message of the thread (written through ``Memory`` directly), its text as a message item and
    each tool invocation as a ``function_call`` (plus ``function_call_output`` once it has a result)."""
    parts = message.content.parts
    for part in parts:
        if isinstance(part, DataPart) and part.type == ITEM_PART_TYPE and isinstance(part.data, dict):
            return [cast(TResponseInputItem, part.data)]
    items: list[dict[str, Any]] = []
    text = message.content.content
    if not (isinstance(text, str) and text.strip()):
        text = "\n".join(p.text for p in parts if isinstance(p, TextPart) and p.text)
    if text and message.role in ("user", "assistant"):
        items.append({"role": message.role, "content": text})
    for part in parts:
        if not isinstance(part, ToolInvocationPart):
            continue
        call = part.tool_invocation
        args = call.args if isinstance(call.args, str) else json.dumps(call.args)
        items.append(
            {"type": "function_call", "call_id": call.tool_call_id, "name": call.tool_name, "arguments": args}
        )
        if call.state == "result":
            output = call.result if isinstance(call.result, str) else json.dumps(call.result)
            items.append({"type": "function_call_output", "call_id": call.tool_call_id, "output": output})
    return [cast(TResponseInputItem, item) for item in items]
