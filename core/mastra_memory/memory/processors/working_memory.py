"""The ``WorkingMemory`` processor and the ``updateWorkingMemory`` tool (docs/spec.md §5.8, §5.12).

Input: the working-memory text (or the template while it is empty) and instructions go to the model as one
system message. The model changes the text by calling the tool, whose handler writes through
``Memory.update_working_memory``; the tool's invocation parts are never stored (§5.4 step 1).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from typing import Any, Literal, Protocol

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from ...errors import ConfigError, ThreadOwnershipError, ValidationError
from ...storage import MemoryStorage, Thread
from ..config import MemoryConfig, WorkingMemoryConfig, config_error, merge_config
from ..message_list import MessageList
from ..stored_messages import WORKING_MEMORY_TOOL
from ..working_memory_store import WorkingMemoryStore
from .base import InputCall, InputProcessor, MemoryTool
from .context import MemoryContext, context_value


class WorkingMemoryAccess(Protocol):
    """What the tool needs of ``Memory`` (named structurally: the facade imports this module)."""

    async def get_working_memory(self, thread_id: str, resource_id: str | None = None) -> str | None: ...

    async def get_thread_by_id(self, thread_id: str, resource_id: str | None = None) -> Thread | None: ...

    async def update_working_memory(self, thread_id: str, resource_id: str | None, text: str) -> None: ...

    async def create_thread(
        self,
        resource_id: str,
        thread_id: str | None = None,
        title: str = "",
        metadata: Mapping[str, Any] | None = None,
    ) -> Thread: ...


_logger = logging.getLogger("mastra_memory.processors")

_INSTRUCTIONS = """You keep a working memory about the user: notes that persist across conversations \
({where}). Its current content:
<working_memory>
{content}
</working_memory>
When you learn something worth keeping (names, preferences, goals, facts, ongoing projects), call the \
{tool} tool{how}. Use what it holds to answer; do not tell the user about the tool or the memory."""
_HOW_MARKDOWN = " with the complete updated memory, keeping the structure above"
_HOW_SCHEMA = (
    " with an object holding only the fields that changed (they are merged into what is stored; leave a field"
    " out to keep it)"
)
# docs/spec.md §5.12: under read_only the model gets the stored data only (never the template) and is told it
# cannot change it, as Mastra's read-only instruction does; no tool is named.
_READ_ONLY_INSTRUCTIONS = """You have a working memory about the user: notes kept from earlier conversations \
({where}). It is read-only during this conversation: you cannot change it. Its content:
<working_memory>
{content}
</working_memory>
Use what it holds to answer; do not tell the user about the memory."""
_READ_ONLY_EMPTY = "(nothing stored yet)"
#: The tool's answer when an update would replace stored data with the empty template.
TEMPLATE_REFUSED = (
    "Attempted to replace existing working memory with empty template. Update skipped to prevent data loss."
)


def _squashed(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _schema_of(config: WorkingMemoryConfig) -> dict[str, Any] | None:
    schema = config.schema_
    if schema is None:
        return None
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    return dict(schema)


class WorkingMemory(InputProcessor):
    """Injects working memory into the model's context (Mastra's ``WorkingMemory`` input processor).

    Args mirror ``working_memory`` (docs/spec.md §5.8): a Markdown ``template`` or a ``schema`` (JSON-schema
    dict or pydantic model), and ``scope``. A request's ``memory_config.working_memory`` is merged over these
    options; ``{"enabled": False}`` there injects nothing. In resource scope a request without a resource
    injects nothing (logged as a warning). With ``read_only`` (here or in the request's ``memory_config``),
    or a request's ``working_memory.agent_managed=False``, the message holds the stored data with read-only
    instructions that name no tool.
    """

    id = "working-memory"
    name = "WorkingMemory"

    def __init__(
        self,
        storage: MemoryStorage | None,
        template: str | None = None,
        schema: dict[str, Any] | type[BaseModel] | None = None,
        scope: Literal["thread", "resource"] = "resource",
        read_only: bool = False,
    ) -> None:
        if storage is None:
            raise ConfigError("WorkingMemory requires storage; pass storage=...")
        self.read_only = read_only
        try:
            self.config = WorkingMemoryConfig.model_validate(
                {"enabled": True, "template": template, "schema": schema, "scope": scope}
            )
        except PydanticValidationError as exc:
            raise config_error(exc, "WorkingMemory options") from exc
        self.store = WorkingMemoryStore(storage)

    def _for_request(self, ctx: MemoryContext) -> WorkingMemoryConfig:
        if not ctx.sets("working_memory"):
            return self.config
        return merge_config(MemoryConfig(working_memory=self.config), ctx.memory_config).working_memory

    async def _process_input(self, call: InputCall) -> MessageList:
        """Add the working-memory system message (docs/spec.md §5.12)."""
        message_list = call.message_list
        ctx = MemoryContext.read(call.request_context)
        if ctx is None:
            return message_list
        config = self._for_request(ctx)
        if not config.enabled:
            return message_list
        if config.scope == "resource" and ctx.resource_id is None:
            _logger.warning("working memory: no resource_id for thread %s; nothing injected", ctx.thread_id)
            return message_list
        text = await self.store.get(WorkingMemoryStore.target(config, ctx.thread_id, ctx.resource_id))
        read_only = self.read_only or ctx.read_only or not config.agent_managed
        message_list.add_system(
            working_memory_instructions(config, text, read_only=read_only), source="memory"
        )
        return message_list


def working_memory_instructions(
    config: WorkingMemoryConfig, text: str | None, *, read_only: bool = False
) -> str:
    """The system message ``WorkingMemory`` adds: the stored text (the template, or an empty JSON object in
    schema mode, while nothing is stored) and how to update it. With ``read_only``: the stored text only (a
    placeholder while nothing is stored, never the template) and no update instructions (docs/spec.md
    §5.12)."""
    where = "for this user" if config.scope == "resource" else "for this conversation"
    if read_only:
        content = (text or "").strip() or _READ_ONLY_EMPTY
        return _READ_ONLY_INSTRUCTIONS.format(where=where, content=content)
    schema = _schema_of(config)
    if schema is not None:
        content = text or "{}"
        how = _HOW_SCHEMA
    else:
        content = text or (config.effective_template or "")
        how = _HOW_MARKDOWN
    return _INSTRUCTIONS.format(where=where, content=content.strip(), tool=WORKING_MEMORY_TOOL, how=how)


def _without_optional_nulls(value: Any, schema: Mapping[str, Any]) -> Any:
    """``value`` without the ``null``s given for keys its JSON schema does not require, at every depth (Mastra
    drops them before it merges: a model that pads every optional field with ``null``, as strict tool calling
    does, must not wipe what is stored). docs/spec.md §5.12."""
    if isinstance(value, list):
        items = schema.get("items")
        return [_without_optional_nulls(v, items if isinstance(items, Mapping) else {}) for v in value]
    if isinstance(value, Mapping):
        properties = schema.get("properties")
        required = schema.get("required")
        required = required if isinstance(required, list) else []
        out: dict[str, Any] = {}
        for key, item in value.items():
            if item is None and key not in required:
                continue
            inner = properties.get(key) if isinstance(properties, Mapping) else None
            out[key] = _without_optional_nulls(item, inner if isinstance(inner, Mapping) else {})
        return out
    return value


def _merge(base: dict[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in update.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, Mapping):
            # A nested null removes its key even where the object is new, as Mastra's merge: no null
            # is stored literally.
            current = merged.get(key)
            merged[key] = _merge(current if isinstance(current, dict) else {}, value)
        else:
            merged[key] = value
    return merged


class UpdateWorkingMemoryTool(MemoryTool):
    """The ``updateWorkingMemory`` tool: its definition for the model and its handler.

    ``definition`` is a JSON-schema function definition; `openai_tool` wraps it for OpenAI-compatible
    chat APIs. `execute` takes the model's arguments (``{"memory": ...}``) and the request context and
    writes through ``Memory.update_working_memory``: in Markdown mode ``memory`` is the complete new text;
    in schema mode an object (a JSON string is refused, as Mastra's input validation refuses it) merged into
    the stored JSON object (a ``null`` for a key the schema does not require is ignored, as in Mastra; one
    for a required key removes it), with a pydantic schema validated, and stored as compact
    JSON. Bad arguments raise ``ValidationError`` before anything is written. A thread not stored yet is
    created for the request's resource first, as Mastra's tool does. In Markdown mode, replacing stored
    data with the unchanged template is refused without writing: ``{"success": False, "message": ...}``
    (Mastra's answer), so a model cannot wipe the memory by sending the empty template back.

    It never writes under ``read_only`` (given here, or the request's ``memory_config.read_only``):
    ``ValidationError`` (id ``MASTRA_MEMORY_UPDATE_WORKING_MEMORY_READ_ONLY``) before any I/O. A request whose
    thread is stored under another resource than the request's ``resource_id`` is refused with
    ``ThreadOwnershipError`` before anything is read or written (docs/spec.md §4.5, §5.12).
    """

    name = WORKING_MEMORY_TOOL

    def __init__(
        self, memory: WorkingMemoryAccess, config: WorkingMemoryConfig, read_only: bool = False
    ) -> None:
        self.memory = memory
        self.config = config
        self.read_only = read_only
        schema = _schema_of(config)
        if schema is None:
            memory_param: dict[str, Any] = {
                "type": "string",
                "description": "The complete working memory in Markdown, following its structure.",
            }
            self.description = "Replace the working memory (notes about the user) with an updated version."
        else:
            memory_param = {**schema, "description": "The fields of the working memory that changed."}
            self.description = "Update fields of the working memory (notes about the user)."
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {"memory": memory_param},
            "required": ["memory"],
        }

    async def execute(self, args: Mapping[str, Any] | str, request_context: Any = None) -> dict[str, Any]:
        """Write the update for the request's thread/resource; returns ``{"success": True}``, or
        ``{"success": False, "message": ...}`` when it was refused as data loss (docs/spec.md §5.12)."""
        ctx = MemoryContext.read(request_context)
        if ctx is None:
            raise ValidationError(
                f"{self.name} needs the request context of a thread: pass "
                '{"MastraMemory": {"thread": {"id": ...}, "resource_id": ...}}'
            )
        if isinstance(args, str):
            args = self._json(args, "arguments")
        if not isinstance(args, Mapping) or "memory" not in args:
            raise ValidationError(f'{self.name} arguments must be an object with a "memory" field')
        if self.read_only or ctx.read_only:
            # Mastra offers no tool under readOnly; a host that calls it anyway must not write (§5.12).
            raise ValidationError(
                f"{self.name}: memory is read-only for this request (read_only); nothing was written",
                id="MASTRA_MEMORY_UPDATE_WORKING_MEMORY_READ_ONLY",
                domain="MEMORY",
            )
        value = args["memory"]
        self._check_type(value)
        await self._check_owner(ctx)
        await self._ensure_thread(ctx)
        text = await self._text(value, ctx)
        if await self._wipes_stored_data(text, ctx):
            return {"success": False, "message": TEMPLATE_REFUSED}
        await self.memory.update_working_memory(ctx.thread_id, ctx.resource_id, text)
        return {"success": True}

    def _check_type(self, value: Any) -> None:
        """Mastra's input validation: a string of Markdown, or in schema mode an object (a JSON string too is
        refused there: the model must send the object itself)."""
        if self.config.schema_ is None:
            if not isinstance(value, str):
                raise ValidationError(f"{self.name}: memory must be a string of Markdown")
        elif not isinstance(value, Mapping):
            got = "a JSON string" if isinstance(value, str) else type(value).__name__
            raise ValidationError(
                f"{self.name}: memory must be an object matching the working-memory schema, got {got}; "
                "send the fields themselves, not JSON text"
            )

    async def _ensure_thread(self, ctx: MemoryContext) -> None:
        """Create the request's thread when it is not stored yet (as Mastra's tool does), with the title and
        metadata the request's thread names; without a resource nothing can own it and nothing is made."""
        if ctx.resource_id is None or await self.memory.get_thread_by_id(ctx.thread_id) is not None:
            return
        title = context_value(ctx.thread, "title")
        metadata = context_value(ctx.thread, "metadata")
        await self.memory.create_thread(
            ctx.resource_id,
            ctx.thread_id,
            title=title if isinstance(title, str) else "",
            metadata=metadata if isinstance(metadata, Mapping) else None,
        )

    async def _wipes_stored_data(self, text: str, ctx: MemoryContext) -> bool:
        """Markdown mode: ``text`` is the template (whitespace aside) while the stored text is something else
        (Mastra's rule, docs/spec.md §5.12)."""
        template = self.config.effective_template
        if self.config.schema_ is not None or not template:
            return False
        stored = await self.memory.get_working_memory(ctx.thread_id, ctx.resource_id)
        if not stored:
            return False
        blank = _squashed(template)
        return _squashed(text) == blank and _squashed(stored) != blank

    async def _check_owner(self, ctx: MemoryContext) -> None:
        """docs/spec.md §4.5: the request's thread, when stored, must belong to the request's resource (as
        Mastra's tool checks); the message names the thread and the requested resource, never the owner."""
        if ctx.resource_id is None:
            return
        thread = await self.memory.get_thread_by_id(ctx.thread_id)
        if thread is not None and thread.resource_id != ctx.resource_id:
            raise ThreadOwnershipError(
                f"{self.name}: thread {ctx.thread_id!r} does not belong to resource {ctx.resource_id!r}; "
                "nothing was written",
                id="MASTRA_MEMORY_UPDATE_WORKING_MEMORY_RESOURCE_MISMATCH",
                details={"thread_id": ctx.thread_id, "resource_id": ctx.resource_id},
            )

    async def _text(self, value: Any, ctx: MemoryContext) -> str:
        schema = self.config.schema_
        if schema is None:
            return str(value)
        update: Mapping[str, Any] = _without_optional_nulls(value, _schema_of(self.config) or {})
        stored = await self.memory.get_working_memory(ctx.thread_id, ctx.resource_id)
        try:  # a stored text that is not a JSON object (e.g. from before a schema was set) starts afresh
            current = json.loads(stored) if stored else {}
        except json.JSONDecodeError:
            current = {}
        merged = _merge(current if isinstance(current, dict) else {}, update)
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            try:
                merged = schema.model_validate(merged).model_dump(mode="json", exclude_none=True)
            except PydanticValidationError as exc:
                raise ValidationError(
                    f"{self.name}: the merged working memory does not match the schema: {exc}"
                ) from exc
        # Compact, as Mastra's JSON.stringify writes it: both read the same bytes back.
        return json.dumps(merged, ensure_ascii=False, separators=(",", ":"))

    def _json(self, raw: str, what: str) -> Any:
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"{self.name}: {what} is not valid JSON ({exc.msg})") from exc
