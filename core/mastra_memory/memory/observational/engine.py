"""The observation and reflection cycles over storage (docs/spec.md §5.14): which messages are
unobserved, when the Observer and Reflector run, what is stored, what is indexed, and who is told.

* Unobserved: the messages of the thread (``scope='thread'``) or of every thread of the resource
  (``'resource'``) created at or after the record's ``last_observed_at`` and not among its
  ``observed_message_ids``; system messages are never observed.
* Observe when their tokens reach ``observation.message_tokens`` (with ``share_token_budget``, the shared
  budget less the observations' tokens). Only the caller whose ``set_observing_flag(id, True)`` flips the
  flag runs the Observer (compare-and-set in storage), so two processes reaching the threshold at once
  observe once. The output is wrapped in one observation group per thread whose range is the first and last
  observed message ids, appended to the active observations (``update_active_observations``), and indexed
  when retrieval has a vector index.
* Reflect when the observations' tokens exceed ``reflection.observation_tokens``: the Reflector's rewrite
  becomes a new generation (``create_reflection_generation``), one group spanning the sources' ranges.
* A failing model never loses or blocks messages: they are stored before any observation and stay
  unobserved (so they stay in the prompt); the flag is cleared and the next turn tries again. The error is
  logged and reported to ``on_observation_end``/``on_reflection_end`` (``error``); :meth:`observe` with
  ``raise_errors`` (``Memory.observe``) raises it.
* A flag left set by a process that died is taken over after :data:`STALE_FLAG_SECONDS`.
"""

from __future__ import annotations

import inspect
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from ...errors import StorageError, ThreadOwnershipError, ValidationError
from ...messages import MastraDBMessage
from ...models import ChatModel, ModelUsage
from ...storage import MemoryStorage
from ...storage.observational_records import (
    CreateReflectionGenerationInput,
    ObservationalMemoryRecord,
    UpdateActiveObservationsInput,
)
from ...timestamps import utc_now
from .groups import message_range, parse_groups, spanning_range, strip_groups, wrap_group
from .observer import agent_model, run_observer
from .options import ObservationalMemoryOptions, UnsupportedOMOptionError
from .reflector import run_reflector
from .retrieval import ObservationIndex
from .tokens import count_messages, count_text, message_threshold

logger = logging.getLogger("mastra_memory.observational")

#: A set observing/reflecting flag older than this is taken for a crashed process's and taken over.
STALE_FLAG_SECONDS = 600


#: The namespace of :func:`initial_record_id`.
_RECORD_NAMESPACE = uuid.UUID("6f6d2d72-6563-4f72-8400-6d656d6f7279")


def initial_record_id(thread_id: str | None, resource_id: str) -> str:
    """The id of a thread's (or resource's) first record: a UUID 5 of its key, so every process that
    creates it names it alike and storage lets only one insert it."""
    key = f"thread:{thread_id}" if thread_id else f"resource:{resource_id}"
    return str(uuid.uuid5(_RECORD_NAMESPACE, f"{resource_id}\x00{key}"))


@dataclass
class OMUsage:
    """Running totals of observational memory's model calls (``Memory.observational_usage``)."""

    observer: ModelUsage = field(default_factory=ModelUsage)
    reflector: ModelUsage = field(default_factory=ModelUsage)


@dataclass(frozen=True)
class CycleResult:
    """What one :meth:`ObservationEngine.observe` call did."""

    observed: bool = False
    reflected: bool = False
    record: ObservationalMemoryRecord | None = None
    observed_message_ids: tuple[str, ...] = ()
    error: BaseException | None = None


class ObservationEngine:
    """Observation and reflection for one ``Memory``'s storage, under one set of options."""

    def __init__(
        self,
        storage: MemoryStorage,
        options: ObservationalMemoryOptions,
        index: ObservationIndex | None = None,
        usage: OMUsage | None = None,
    ) -> None:
        if not getattr(storage, "supports_observational_memory", False):
            raise UnsupportedOMOptionError(
                "enabled",
                f"{type(storage).__name__} does not store observational memory; use a storage that does "
                "(sqlite, pgvector, mongodb) or turn observational_memory off",
            )
        self.storage = storage
        self.options = options
        self.index = index
        self.usage = usage or OMUsage()
        self._observer: ChatModel | None = None
        self._reflector: ChatModel | None = None
        # Models are resolved now, so a missing or malformed model is a ConfigError before any I/O.
        self.observer_model()
        self.reflector_model()

    def observer_model(self) -> ChatModel:
        """The Observer's chat model (resolved once)."""
        if self._observer is None:
            opts = self.options
            self._observer = agent_model(opts.observer_model, opts.observation.model_settings, "Observer")
        return self._observer

    def reflector_model(self) -> ChatModel:
        """The Reflector's chat model (resolved once)."""
        if self._reflector is None:
            opts = self.options
            self._reflector = agent_model(opts.reflector_model, opts.reflection.model_settings, "Reflector")
        return self._reflector

    # --- records and unobserved messages -------------------------------------------------------

    def key(self, thread_id: str, resource_id: str) -> tuple[str | None, str]:
        """The record's key: the thread (thread scope) or the resource alone (resource scope)."""
        return (thread_id if self.options.scope == "thread" else None, resource_id)

    async def current(self, thread_id: str, resource_id: str) -> ObservationalMemoryRecord | None:
        """The record in force for the thread/resource (the newest generation), or None before the first
        cycle."""
        key_thread, key_resource = self.key(thread_id, resource_id)
        return await self.storage.get_observational_memory(key_thread, key_resource)

    async def record(self, thread_id: str, resource_id: str) -> ObservationalMemoryRecord:
        """The record in force, created when there is none.

        Generation 0 gets an id derived from its key (:func:`initial_record_id`) and is inserted with
        ``insert_observational_memory_record``, which refuses an id that exists: of two processes that find
        no record at once exactly one creates it and both then use it (Mastra's ``initialize`` would
        create two, and the flags of two records cannot make one observer)."""
        record = await self.current(thread_id, resource_id)
        if record is not None:
            return record
        key_thread, key_resource = self.key(thread_id, resource_id)
        try:
            await self.storage.insert_observational_memory_record(
                ObservationalMemoryRecord(
                    id=initial_record_id(key_thread, key_resource),
                    scope=self.options.scope,
                    thread_id=key_thread,
                    resource_id=key_resource,
                    config=self.options.model_dump(
                        mode="json", by_alias=True, include={"scope", "share_token_budget"}
                    ),
                )
            )
        except (ValidationError, StorageError):
            # The id exists (refused, or a backend's unique key hit in a race): another process created
            # it; read it below. Anything else leaves no record and is raised there.
            if await self.current(thread_id, resource_id) is None:
                raise
        record = await self.current(thread_id, resource_id)
        if record is None:
            raise StorageError(
                f"the observational memory record of {key_thread or key_resource} was not created"
            )
        return record

    async def check_owner(self, thread_id: str, resource_id: str) -> None:
        """Refuse a thread stored under another resource (docs/spec.md §4.5): its messages must never reach
        this resource's observations."""
        thread = await self.storage.get_thread_by_id(thread_id)
        if thread is not None and thread.resource_id != resource_id:
            raise ThreadOwnershipError(
                f"thread {thread_id!r} belongs to another resource than {resource_id!r}",
                details={"thread_id": thread_id},
            )

    async def unobserved(
        self, record: ObservationalMemoryRecord, thread_id: str, resource_id: str
    ) -> list[MastraDBMessage]:
        """The messages not observed yet (oldest first): of the thread, or of the resource in resource
        scope."""
        flt: dict[str, Any] | None = None
        if record.last_observed_at is not None:
            # Inclusive: a message stored later in the same millisecond is still seen; the observed ids
            # keep the ones already observed out.
            flt = {"date_range": {"start": record.last_observed_at}}
        if self.options.scope == "thread":
            page = await self.storage.list_messages(
                thread_id, resource_id=resource_id, per_page=False, filter=flt
            )
        else:
            page = await self.storage.list_messages_by_resource_id(resource_id, per_page=False, filter=flt)
        seen = set(record.observed_message_ids or ())
        out = [m for m in page.messages if m.role != "system" and m.id not in seen]
        return [m for m in out if m.resource_id in (None, resource_id)]

    def threshold(self, record: ObservationalMemoryRecord) -> int:
        """Unobserved-message tokens at which the Observer runs for this record."""
        o = self.options
        return message_threshold(
            o.observation.message_tokens,
            o.reflection.observation_tokens,
            record.observation_token_count,
            o.share_token_budget,
        )

    # --- the cycles ----------------------------------------------------------------------------

    async def observe(
        self,
        thread_id: str,
        resource_id: str,
        *,
        force: bool = False,
        trigger: str = "turn-sync",
        raise_errors: bool = False,
    ) -> CycleResult:
        """Observe the unobserved messages when they reach the threshold (or ``force``), then reflect
        when the observations exceed theirs. Never raises a model failure unless ``raise_errors``."""
        await self.check_owner(thread_id, resource_id)
        record = await self.record(thread_id, resource_id)
        pending = await self.unobserved(record, thread_id, resource_id)
        if not pending:
            return CycleResult(record=record)
        tokens = count_messages(pending)
        if not force and tokens < self.threshold(record):
            return CycleResult(record=record)
        if not await self._claim(record, "observing"):
            return CycleResult(record=record)  # another process observes these messages right now
        context = {"thread_id": thread_id, "resource_id": resource_id, "trigger": trigger}
        try:
            # Read again under the flag: the winner of a previous race may have observed them already.
            record = await self.record(thread_id, resource_id)
            pending = await self.unobserved(record, thread_id, resource_id)
            if not pending:
                return CycleResult(record=record)
            by_thread: dict[str, list[MastraDBMessage]] = {}
            for message in pending:
                by_thread.setdefault(message.thread_id, []).append(message)
            await _hook(self.options, "on_observation_start", {**context, "message_count": len(pending)})
            try:
                model = self.observer_model()
                result = await run_observer(
                    model,
                    strip_groups(record.active_observations),
                    by_thread,
                    self.options.observation.instruction,
                )
            except Exception as exc:
                self.usage.observer.fail()
                logger.warning("observation failed for %s; the messages stay unobserved: %s", thread_id, exc)
                await _hook(self.options, "on_observation_end", {**context, "error": exc, "usage": None})
                if raise_errors:
                    raise
                return CycleResult(record=record, error=exc)
            self.usage.observer.add(result.usage)
            groups = self._groups(result.output.observations, by_thread)
            joined = "\n\n".join(text for _, _, text in groups)
            active = record.active_observations.strip()
            observations = f"{active}\n\n{joined}" if active else joined
            last = max(m.created_at for m in pending)
            await self.storage.update_active_observations(
                UpdateActiveObservationsInput(
                    id=record.id,
                    observations=observations,
                    token_count=count_text(observations),
                    last_observed_at=last,
                    observed_message_ids=[m.id for m in pending],
                )
            )
            await self._index(groups, resource_id, last)
            await _hook(
                self.options,
                "on_observation_end",
                {
                    **context,
                    "usage": result.usage,
                    "model_id": result.model_id,
                    "observations": joined,
                    "message_ids": [m.id for m in pending],
                    "error": None,
                },
            )
        finally:
            await self._release(record.id, "observing")
        record = await self.record(thread_id, resource_id)
        reflected = await self.reflect(
            record, thread_id, resource_id, trigger=trigger, raise_errors=raise_errors
        )
        if reflected is not None:
            record = reflected
        return CycleResult(True, reflected is not None, record, tuple(m.id for m in pending))

    async def reflect(
        self,
        record: ObservationalMemoryRecord,
        thread_id: str,
        resource_id: str,
        *,
        force: bool = False,
        trigger: str = "turn-sync",
        raise_errors: bool = False,
    ) -> ObservationalMemoryRecord | None:
        """Condense the observations into a new generation when they exceed
        ``reflection.observation_tokens`` (or ``force``); the new record, or None when nothing ran."""
        if not record.active_observations.strip():
            return None
        if not force and record.observation_token_count <= self.options.reflection.observation_tokens:
            return None
        if not await self._claim(record, "reflecting"):
            return None
        context = {"thread_id": thread_id, "resource_id": resource_id, "trigger": trigger}
        try:
            await _hook(
                self.options,
                "on_reflection_start",
                {**context, "observation_tokens": record.observation_token_count},
            )
            try:
                result = await run_reflector(
                    self.reflector_model(),
                    strip_groups(record.active_observations),
                    self.options.reflection.instruction,
                )
            except Exception as exc:
                self.usage.reflector.fail()
                logger.warning(
                    "reflection failed for %s; the observations stay as they are: %s", thread_id, exc
                )
                await _hook(self.options, "on_reflection_end", {**context, "error": exc, "usage": None})
                if raise_errors:
                    raise
                return None
            self.usage.reflector.add(result.usage)
            span = spanning_range(parse_groups(record.active_observations))
            text = result.output.observations
            reflection = wrap_group(text, span, kind="reflection") if span else text
            new = await self.storage.create_reflection_generation(
                CreateReflectionGenerationInput(
                    current_record=record, reflection=reflection, token_count=count_text(reflection)
                )
            )
            for group in parse_groups(reflection):
                await self._index(
                    [(group, self._group_thread(record, thread_id), group.content)],
                    resource_id,
                    record.last_observed_at,
                )
            await _hook(
                self.options,
                "on_reflection_end",
                {
                    **context,
                    "usage": result.usage,
                    "model_id": result.model_id,
                    "observations": text,
                    "error": None,
                },
            )
            return new
        finally:
            await self._release(record.id, "reflecting")

    # --- helpers -------------------------------------------------------------------------------

    def _groups(
        self, observations: str, by_thread: Mapping[str, Sequence[MastraDBMessage]]
    ) -> list[tuple[Any, str, str]]:
        """(group, thread id, text to append) for one Observer answer: one group over the observed messages.
        With several threads (resource scope) the answer is one text, so it is one group spanning every
        observed message, indexed under the first thread (a cursor finds its own thread) [Δ: Mastra asks
        for one section per thread]."""
        ids = [m.id for msgs in by_thread.values() for m in msgs]
        text = wrap_group(observations, message_range(ids))
        return [(parse_groups(text)[0], next(iter(by_thread)), text)]

    @staticmethod
    def _group_thread(record: ObservationalMemoryRecord, thread_id: str) -> str:
        return record.thread_id or thread_id

    async def _index(
        self, groups: Sequence[tuple[Any, str, str]], resource_id: str, observed_at: Any
    ) -> None:
        if self.index is None:
            return
        for group, thread_id, _ in groups:
            try:
                await self.index.index_observation(
                    text=group.content,
                    group_id=group.id,
                    range=group.range,
                    thread_id=thread_id,
                    resource_id=resource_id,
                    observed_at=observed_at,
                )
            except Exception:
                # The observation is stored; a missing vector only hides it from search, so it is logged.
                logger.exception("indexing observation group %s failed", group.id)

    async def _claim(self, record: ObservationalMemoryRecord, what: str) -> bool:
        setter = getattr(self.storage, f"set_{what}_flag")
        if await setter(record.id, True):
            return True
        current = await self.storage.get_observational_memory(record.thread_id, record.resource_id)
        stale = (
            current is not None
            and current.id == record.id
            and utc_now() - current.updated_at > timedelta(seconds=STALE_FLAG_SECONDS)
        )
        if stale:
            logger.warning(
                "taking over a %s flag left set since %s", what, current.updated_at if current else "?"
            )
            await setter(record.id, False)
            return bool(await setter(record.id, True))
        return False

    async def _release(self, record_id: str, what: str) -> None:
        try:
            await getattr(self.storage, f"set_{what}_flag")(record_id, False)
        except StorageError:
            logger.exception("clearing the %s flag of %s failed", what, record_id)


async def _hook(options: ObservationalMemoryOptions, name: str, payload: dict[str, Any]) -> None:
    """Call a lifecycle hook; its own failure is logged, never fails the cycle (Mastra's default)."""
    hook = getattr(options.hooks, name, None) if options.hooks is not None else None
    if hook is None:
        return
    try:
        result = hook(payload)
        if inspect.isawaitable(result):
            await result
    except Exception:
        logger.exception("observational memory hook %s failed", name)
