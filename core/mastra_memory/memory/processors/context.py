"""The memory context of one request (``request_context["MastraMemory"]``, docs/spec.md §6.1), read the
same way by every processor."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..config import MemoryConfig

#: The request-context key Mastra keeps the memory context under.
MEMORY_CONTEXT_KEY = "MastraMemory"


def context_value(obj: Any, *names: str) -> Any:
    """Read a key from a dict (or a ``get``-able context object) or an attribute, trying each spelling."""
    if obj is None:
        return None
    for name in names:
        if isinstance(obj, Mapping):
            if name in obj:
                return obj[name]
        elif hasattr(obj, name):
            return getattr(obj, name)
        elif callable(getattr(obj, "get", None)):
            # Mastra's RequestContext is a Map-like object read with get().
            value = obj.get(name)
            if value is not None:
                return value
    return None


def nonempty_str(value: Any) -> str | None:
    """``value`` when it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def request_memory_config(request_context: Any) -> Any:
    """The request's ``memory_config`` (Mastra's ``requestContext.get("MastraMemory").memoryConfig``), or
    None when the request sets none. Accepts a dict or a ``get``-able context object."""
    return context_value(context_value(request_context, MEMORY_CONTEXT_KEY), "memory_config", "memoryConfig")


@dataclass(frozen=True)
class MemoryContext:
    """Thread, resource and the request's ``memory_config`` (validated; None when the request sets none)."""

    thread_id: str
    resource_id: str | None
    thread: Any
    memory_config: MemoryConfig | None

    @classmethod
    def read(cls, request_context: Any) -> MemoryContext | None:
        """The context, or None when the request names no thread (the processor then does nothing).

        An invalid ``memory_config`` raises ``ConfigError``."""
        context = context_value(request_context, MEMORY_CONTEXT_KEY)
        thread = context_value(context, "thread")
        thread_id = nonempty_str(context_value(thread, "id"))
        if thread_id is None:
            return None
        resource_id = nonempty_str(context_value(context, "resource_id", "resourceId")) or nonempty_str(
            context_value(thread, "resource_id", "resourceId")
        )
        raw = context_value(context, "memory_config", "memoryConfig")
        return cls(thread_id, resource_id, thread, None if raw is None else MemoryConfig.from_any(raw))

    def sets(self, field: str) -> bool:
        """Whether the request's ``memory_config`` sets ``field`` (snake_case)."""
        return self.memory_config is not None and field in self.memory_config.model_fields_set

    def option(self, field: str, default: Any) -> Any:
        """The request's value of ``field`` when its ``memory_config`` sets it, else ``default``."""
        if self.memory_config is not None and field in self.memory_config.model_fields_set:
            return getattr(self.memory_config, field)
        return default

    @property
    def read_only(self) -> bool:
        """The request's ``read_only``."""
        return self.memory_config is not None and self.memory_config.read_only
