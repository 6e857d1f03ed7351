"""The memory context of one request (``request_context["MastraMemory"]``, docs/spec.md §6.1), read the
same way by every processor."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..config import MemoryConfig
from ..processor import MEMORY_CONTEXT_KEY, _as_str, _get


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
        context = _get(request_context, MEMORY_CONTEXT_KEY)
        thread = _get(context, "thread")
        thread_id = _as_str(_get(thread, "id"))
        if thread_id is None:
            return None
        resource_id = _as_str(_get(context, "resource_id", "resourceId")) or _as_str(
            _get(thread, "resource_id", "resourceId")
        )
        raw = _get(context, "memory_config", "memoryConfig")
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
