"""The processors and tools ``Memory`` builds for one request, in Mastra's order (docs/spec.md §5.12)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal, Protocol

from ...embedders.base import Embedder
from ...storage import MemoryStorage
from ...vector import MastraVector
from ..config import MemoryConfig
from ..observational.engine import ObservationEngine, OMUsage
from ..observational.options import ObservationalMemoryOptions
from ..observational.processor import PROCESSOR_ID, ObservationalMemory
from ..observational.retrieval import RECALL_TOOL, ObservationIndex, RecallTool
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

    def indexer(self, recall: Any = None, *, embed: bool = True) -> Any: ...


class ProcessorChain:
    """Builds the memory processors of a request from its effective configuration; ``SemanticRecall``
    instances are cached per configuration so the input and output sides share one index cache."""

    def __init__(self, memory: ChainedMemory) -> None:
        self.memory = memory
        self._cache = ProcessorCache()
        #: Observational memory's model calls, over every request of this Memory (docs/spec.md §5.14).
        self.om_usage = OMUsage()
        self._engines: dict[str, ObservationEngine] = {}
        self._om_index: ObservationIndex | None = None

    def engine(self, options: ObservationalMemoryOptions) -> ObservationEngine:
        """The observation engine of ``options`` (one per distinct options, sharing :attr:`om_usage`).

        Raises:
            ConfigError: no model, a model that cannot be resolved, or a storage without observational
                memory (docs/spec.md §5.14), before any I/O.
        """
        # Models and hooks are objects: they key by identity (a model's repr may change as it is used).
        key = json.dumps(
            options.model_dump(), sort_keys=True, default=lambda o: f"{type(o).__name__}@{id(o)}"
        )
        engine = self._engines.pop(key, None)
        if engine is None:
            retrieval = options.retrieval_config
            index = self.observation_index() if retrieval is not None and retrieval.vector else None
            engine = ObservationEngine(self.memory.storage, options, index, self.om_usage)
        self._engines[key] = engine  # most recently used last; the oldest beyond 32 are dropped
        while len(self._engines) > 32:
            del self._engines[next(iter(self._engines))]
        return engine

    def observation_index(self) -> ObservationIndex:
        """The ``memory_observations_<dim>`` index on the Memory's vector store and embedder."""
        if self._om_index is None:
            self._om_index = ObservationIndex(self.memory.vector, self.memory.indexer())
        return self._om_index

    def inputs(self, cfg: MemoryConfig, existing: Sequence[Any]) -> list[Any]:
        """``MemoryInputFilter`` (history loaded), ``WorkingMemory``, ``MessageHistory``, ``SemanticRecall``
        and, under ``message_history``, the ``memory-token-limiter`` step, as ``cfg`` turns them on, leaving
        out those whose ``id`` is in ``existing`` (Mastra's order, docs/spec.md §5.12)."""
        have = {getattr(p, "id", None) for p in existing}
        limits = cfg.history_limits
        om = cfg.observational
        out: list[Any] = []
        loads_history = limits.enabled or "message-history" in have or om is not None or PROCESSOR_ID in have
        if loads_history and "memory-input-filter" not in have:
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
        # With observational memory, its processor loads the history (Mastra leaves MessageHistory and the
        # token limiter out then, docs/spec.md §5.14).
        if cfg.history_on and "message-history" not in have and om is None:
            out.append(self._history(cfg))
        out.extend(self._recall(cfg, have))
        if (
            om is None
            and limits.enabled
            and limits.max_tokens is not None
            and "memory-token-limiter" not in have
        ):
            out.append(MemoryTokenLimiter(self.memory.storage, limits, read_only=cfg.read_only))
        out.extend(self._observational(cfg, have))
        return out

    def outputs(self, cfg: MemoryConfig, existing: Sequence[Any]) -> list[Any]:
        """``MessageHistory`` (always; with observational memory its processor stores the turn instead), then
        ``SemanticRecall`` (recall on), then ``ObservationalMemory`` (on)."""
        have = {getattr(p, "id", None) for p in existing}
        out: list[Any] = []
        if "message-history" not in have and cfg.observational is None:
            out.append(self._history(cfg))
        out.extend(self._recall(cfg, have))
        out.extend(self._observational(cfg, have))
        return out

    def tools(self, cfg: MemoryConfig) -> dict[str, Any]:
        """``{"updateWorkingMemory": tool}`` when working memory is on, agent-managed and the request is not
        ``read_only`` (as Mastra's ``listTools``), and ``{"recall": tool}`` when observational memory's
        ``retrieval`` is on (docs/spec.md §5.14)."""
        out: dict[str, Any] = {}
        if cfg.working_memory.enabled and cfg.working_memory.agent_managed and not cfg.read_only:
            out[WORKING_MEMORY_TOOL] = UpdateWorkingMemoryTool(self.memory, cfg.working_memory)
        om = cfg.observational
        retrieval = om.retrieval_config if om is not None else None
        if om is not None and retrieval is not None:
            index = self.observation_index() if retrieval.vector else None
            out[RECALL_TOOL] = RecallTool(self.memory.storage, index, retrieval.scope)
        return out

    def _observational(self, cfg: MemoryConfig, have: set[Any]) -> list[ObservationalMemory]:
        om = cfg.observational
        if om is None or PROCESSOR_ID in have:
            return []
        return [ObservationalMemory(self.engine(om), read_only=cfg.read_only)]

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
