"""The processors and tools ``Memory`` builds for one request, in Mastra's order (docs/spec.md §5.12)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol

from ...embedders.base import Embedder
from ...storage import MemoryStorage
from ...vector import MastraVector
from ..config import MemoryConfig
from ..stored_messages import WORKING_MEMORY_TOOL
from .history import MessageHistory
from .history_budget import MemoryTokenLimiter
from .input_filter import MemoryInputFilter
from .semantic_recall import ProcessorCache, SemanticRecall
from .working_memory import UpdateWorkingMemoryTool, WorkingMemory, WorkingMemoryAccess


class ChainedMemory(WorkingMemoryAccess, Protocol):
    """What the chain reads of ``Memory`` (a protocol, so this module does not import the facade)."""

    storage: MemoryStorage
    embedder_options: dict[str, Any]

    @property
    def vector(self) -> MastraVector: ...

    @property
    def embedder(self) -> Embedder: ...


class ProcessorChain:
    """Builds the memory processors of a request from its effective configuration; ``SemanticRecall``
    instances are cached per configuration so the input and output sides share one index cache."""

    def __init__(self, memory: ChainedMemory) -> None:
        self.memory = memory
        self._cache = ProcessorCache()

    def inputs(self, cfg: MemoryConfig, existing: Sequence[Any]) -> list[Any]:
        """``MemoryInputFilter`` (history loaded), ``WorkingMemory``, ``MessageHistory``, ``SemanticRecall``
        and, under ``message_history``, the ``memory-token-limiter`` step, as ``cfg`` turns them on, leaving
        out those whose ``id`` is in ``existing`` (Mastra's order, docs/spec.md §5.12)."""
        have = {getattr(p, "id", None) for p in existing}
        limits = cfg.history_limits
        out: list[Any] = []
        if (limits.enabled or "message-history" in have) and "memory-input-filter" not in have:
            out.append(MemoryInputFilter(self.memory.storage, retain_full_input=cfg.retain_full_input))
        if cfg.working_memory.enabled and "working-memory" not in have:
            wm = cfg.working_memory
            out.append(
                WorkingMemory(
                    self.memory.storage,
                    template=wm.template,
                    schema=wm.schema_,
                    scope=wm.scope,
                    # agentManaged=False: another path owns the updates, so the prompt is read-only (§5.8).
                    read_only=cfg.read_only or not wm.agent_managed,
                )
            )
        if cfg.history_on and "message-history" not in have:
            out.append(self._history(cfg))
        out.extend(self._recall(cfg, have))
        if limits.enabled and limits.max_tokens is not None and "memory-token-limiter" not in have:
            out.append(MemoryTokenLimiter(self.memory.storage, limits, read_only=cfg.read_only))
        return out

    def outputs(self, cfg: MemoryConfig, existing: Sequence[Any]) -> list[Any]:
        """``MessageHistory`` (always), then ``SemanticRecall`` (recall on)."""
        have = {getattr(p, "id", None) for p in existing}
        out: list[Any] = []
        if "message-history" not in have:
            out.append(self._history(cfg))
        out.extend(self._recall(cfg, have))
        return out

    def tools(self, cfg: MemoryConfig) -> dict[str, UpdateWorkingMemoryTool]:
        """``{"updateWorkingMemory": tool}`` when working memory is on, agent-managed and the request is not
        ``read_only`` (as Mastra's ``listTools``), else ``{}``."""
        if not cfg.working_memory.enabled or not cfg.working_memory.agent_managed or cfg.read_only:
            return {}
        return {WORKING_MEMORY_TOOL: UpdateWorkingMemoryTool(self.memory, cfg.working_memory)}

    def _history(self, cfg: MemoryConfig) -> MessageHistory:
        limits = cfg.history_limits
        budget = cfg.message_history if limits.max_tokens is not None else None
        last: int | Literal[False] = cfg.last_messages
        if budget is not None:  # the count cap the options set, or none (docs/spec.md §5.1)
            last = limits.max_messages if limits.max_messages is not None else False
        return MessageHistory(
            self.memory.storage,
            last_messages=last,
            history_tokens=cfg.history_tokens,
            read_only=cfg.read_only,
            message_history=budget,
            filter_incomplete_tool_calls=cfg.filter_incomplete_tool_calls,
        )

    def _recall(self, cfg: MemoryConfig, have: set[Any]) -> list[SemanticRecall]:
        recall = cfg.recall
        if recall is None or "semantic-recall" in have:
            return []

        # One instance per effective configuration, for both sides, so input and output share its index
        # cache. The processor also honours the request's memory_config when it runs (merging it again
        # over options that already contain it changes nothing).
        def build() -> SemanticRecall:
            return SemanticRecall(
                storage=self.memory.storage,
                vector=self.memory.vector,
                embedder=self.memory.embedder,
                top_k=recall.top_k,
                message_range=recall.message_range,
                scope=recall.scope,
                threshold=recall.threshold,
                index_name=recall.index_name,
                index_config=recall.index_config,
                filter=recall.filter,
                embedder_options=self.memory.embedder_options,
                read_only=cfg.read_only,
            )

        return [self._cache.get(repr((recall, cfg.read_only)), build)]
