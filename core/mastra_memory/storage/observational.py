"""Observational-memory storage of the ``MemoryStorage`` template (docs/spec.md §4.8).

Mastra's OM methods of ``MemoryStorage`` (``@mastra/core`` 1.71.0 ``storage/domains/memory/base.d.ts``) in
snake_case, written once over five hooks a backend implements (:class:`ObservationalMemoryHooks`): load a
record by id, list a key's generations newest first, insert a row, update fields of a row *where* given
fields still hold given values, and delete a key's rows. Everything else — argument checks before any I/O,
the activation arithmetic, deep-merged config, generations — is here, so every storage behaves alike.

Concurrency. The flag setters are compare-and-set: ``set_observing_flag(id, True)`` returns ``True`` only
to the caller whose write flipped the flag, so two processes that reach the threshold at once observe
once ([Δ] Mastra returns nothing). Every read-modify-write (buffered chunks, swaps, config) updates its row
only where ``updated_at`` is still what it read and retries otherwise, so no write is lost even on a
backend without row locks; the SQL backends also lock the row for the unit of work.

Tenant isolation. A record is found by its key *and* its resource: a thread's record is never returned
for another resource's id ([Δ] Mastra looks thread-scoped records up by thread id alone).

A storage without OM keeps ``supports_observational_memory = False`` and every method refuses with
CapabilityError ``..._OBSERVATIONAL_MEMORY_UNSUPPORTED`` naming issue 27, before any I/O.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from ..errors import CapabilityError, StorageError
from ..timestamps import canonical_timestamp, next_after, utc_now
from .arguments import non_blank, parse_model, validate_resource_id
from .codec import json_text
from .observational_hooks import (
    ObservationalMemoryHooks,
    ObservationalMemoryNotFoundError,
    deep_merge,
    plan_activation,
)
from .observational_records import (
    BufferedObservationChunk,
    CreateObservationalMemoryInput,
    CreateReflectionGenerationInput,
    ObservationalMemoryHistoryOptions,
    ObservationalMemoryRecord,
    OMKey,
    SwapBufferedReflectionToActiveInput,
    SwapBufferedToActiveInput,
    SwapBufferedToActiveResult,
    SwapChunkResult,
    UpdateActiveObservationsInput,
    UpdateBufferedObservationsInput,
    UpdateBufferedReflectionInput,
    UpdateObservationalMemoryConfigInput,
    om_values,
    plain,
)

__all__ = [
    "DEFAULT_HISTORY_LIMIT",
    "ObservationalMemoryHooks",
    "ObservationalMemoryNotFoundError",
    "ObservationalMemoryStorage",
    "deep_merge",
    "plan_activation",
]

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

#: Mastra's default ``limit`` of ``getObservationalMemoryHistory``.
DEFAULT_HISTORY_LIMIT = 10
#: Attempts of a read-modify-write whose row changed under it before it gives up (StorageError CONFLICT).
_ATTEMPTS = 20


class _Conflict(Exception):
    """The row changed between the read and the conditional write: roll back and try again."""


class ObservationalMemoryStorage(ObservationalMemoryHooks):
    """The OM methods of ``MemoryStorage``: Mastra's names in snake_case; every input model also accepts
    its camelCase dict."""

    # --- reads ----------------------------------------------------------------------------------

    async def get_observational_memory(
        self, thread_id: str | None, resource_id: str
    ) -> ObservationalMemoryRecord | None:
        """The current (newest) generation of the thread's (or, ``thread_id`` ``None``, the resource's)
        observations, or ``None``."""
        operation = "GET_OBSERVATIONAL_MEMORY"
        key = self._om_key(operation, thread_id, resource_id)

        async def work(tx: Any) -> ObservationalMemoryRecord | None:
            found = await self._om_generations(tx, key, limit=1)
            return found[0] if found else None

        return await self._run_unit(operation, work, write=False)

    async def get_observational_memory_history(
        self,
        thread_id: str | None,
        resource_id: str,
        limit: int = DEFAULT_HISTORY_LIMIT,
        options: ObservationalMemoryHistoryOptions | Mapping[str, Any] | None = None,
    ) -> list[ObservationalMemoryRecord]:
        """Generations newest first (the current one included, as Mastra returns them), at most ``limit``,
        optionally within ``options.from``/``to`` (inclusive, on ``created_at``) and after ``offset``."""
        operation = "GET_OBSERVATIONAL_MEMORY_HISTORY"
        key = self._om_key(operation, thread_id, resource_id)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise self._invalid(operation, "INVALID_ARGS", f"limit must be an int >= 0, got {limit!r}")
        opts = (
            ObservationalMemoryHistoryOptions()
            if options is None
            else self._om_parse(ObservationalMemoryHistoryOptions, options, operation, "options")
        )

        async def work(tx: Any) -> list[ObservationalMemoryRecord]:
            return await self._om_generations(
                tx, key, limit=limit, offset=opts.offset or 0, start=opts.from_, end=opts.to
            )

        return await self._run_unit(operation, work, write=False)

    # --- records --------------------------------------------------------------------------------

    async def initialize_observational_memory(
        self, input: CreateObservationalMemoryInput | Mapping[str, Any]
    ) -> ObservationalMemoryRecord:
        """Create generation 0 (``origin_type`` ``"initial"``) for a thread or a resource and return it."""
        operation = "INITIALIZE_OBSERVATIONAL_MEMORY"
        self._om_supported(operation)
        args = self._om_parse(CreateObservationalMemoryInput, input, operation, "input")
        self._om_key(operation, args.thread_id, args.resource_id)
        self._check_text(operation, (args.observed_timezone, "observed_timezone"))
        json_text(args.config, "config")
        now = utc_now()
        record = ObservationalMemoryRecord(
            id=str(uuid.uuid4()),
            scope=args.scope,
            thread_id=args.thread_id,
            resource_id=args.resource_id,
            created_at=now,
            updated_at=now,
            config=args.config,
            observed_timezone=args.observed_timezone,
        )

        async def work(tx: Any) -> None:
            if not await self._om_insert(tx, om_values(record)):  # a fresh uuid4: never in practice
                raise self._invalid(operation, "DUPLICATE_ID", f"record id {record.id!r} exists")

        await self._run_unit(operation, work, write=True)
        return record

    async def insert_observational_memory_record(
        self, record: ObservationalMemoryRecord | Mapping[str, Any]
    ) -> None:
        """Insert a complete record as given (Mastra uses it to copy OM state into a cloned thread); an id
        that exists already is refused with ValidationError ``..._DUPLICATE_ID``."""
        operation = "INSERT_OBSERVATIONAL_MEMORY_RECORD"
        self._om_supported(operation)
        parsed = self._om_parse(ObservationalMemoryRecord, record, operation, "record")
        self._om_key(operation, parsed.thread_id, parsed.resource_id)
        self._check_text(
            operation,
            (parsed.id, "id"),
            (parsed.active_observations, "active_observations"),
            (parsed.buffered_reflection, "buffered_reflection"),
        )
        values = om_values(parsed)
        for name in ("config", "metadata", "buffered_observation_chunks", "observed_message_ids"):
            json_text(values[name], name)

        async def work(tx: Any) -> None:
            # The id's unique index decides, so of two concurrent inserts of one id exactly one succeeds.
            if not await self._om_insert(tx, values):
                raise self._invalid(
                    operation, "DUPLICATE_ID", f"an observational memory record with id {parsed.id!r} exists"
                )

        await self._run_unit(operation, work, write=True)

    async def clear_observational_memory(self, thread_id: str | None, resource_id: str) -> None:
        """Delete every generation of the thread's (or the resource's) observations."""
        operation = "CLEAR_OBSERVATIONAL_MEMORY"
        key = self._om_key(operation, thread_id, resource_id)
        await self._run_unit(operation, lambda tx: self._om_delete(tx, key), write=True)

    # --- observations ---------------------------------------------------------------------------

    async def update_active_observations(
        self, input: UpdateActiveObservationsInput | Mapping[str, Any]
    ) -> None:
        """Replace the active observations after a synchronous observation: ``observation_token_count`` is
        ``token_count``, ``total_tokens_observed`` grows by it, pending tokens return to 0, and
        ``observed_message_ids`` becomes the given list (as Mastra stores it)."""
        operation = "UPDATE_ACTIVE_OBSERVATIONS"
        self._om_supported(operation)
        args = self._om_parse(UpdateActiveObservationsInput, input, operation, "input")
        self._check_text(operation, (args.observations, "observations"))

        def change(current: ObservationalMemoryRecord) -> tuple[dict[str, Any], None]:
            changes: dict[str, Any] = {
                "active_observations": args.observations,
                "last_observed_at": args.last_observed_at,
                "pending_message_tokens": 0,
                "observation_token_count": args.token_count,
                "total_tokens_observed": current.total_tokens_observed + args.token_count,
                "observed_message_ids": args.observed_message_ids,
            }
            if args.observed_timezone is not None:
                changes["observed_timezone"] = args.observed_timezone
            return changes, None

        await self._om_change(operation, args.id, change)

    async def update_buffered_observations(
        self, input: UpdateBufferedObservationsInput | Mapping[str, Any]
    ) -> None:
        """Append a buffered chunk (a chunk whose ``cycle_id`` is there already is not added twice) and
        move ``last_buffered_at_time`` when given."""
        operation = "UPDATE_BUFFERED_OBSERVATIONS"
        self._om_supported(operation)
        args = self._om_parse(UpdateBufferedObservationsInput, input, operation, "input")
        self._check_text(operation, (args.chunk.observations, "chunk.observations"))
        json_text(args.chunk.extracted_values, "chunk.extracted_values")

        def change(current: ObservationalMemoryRecord) -> tuple[dict[str, Any] | None, None]:
            chunks = list(current.buffered_observation_chunks or [])
            if any(chunk.cycle_id == args.chunk.cycle_id for chunk in chunks):
                return None, None
            chunk = BufferedObservationChunk(
                id=f"ombuf-{uuid.uuid4()}", created_at=utc_now(), **args.chunk.model_dump()
            )
            changes: dict[str, Any] = {"buffered_observation_chunks": [*chunks, chunk]}
            if args.last_buffered_at_time is not None:
                changes["last_buffered_at_time"] = args.last_buffered_at_time
            return changes, None

        await self._om_change(operation, args.id, change)

    async def swap_buffered_to_active(
        self, input: SwapBufferedToActiveInput | Mapping[str, Any]
    ) -> SwapBufferedToActiveResult:
        """Activate leading buffered chunks (`plan_activation`): their observations join the active
        ones after a dated message-boundary line, their tokens leave the pending count, the rest stay
        buffered. With no chunks, nothing changes and the result counts zero."""
        operation = "SWAP_BUFFERED_TO_ACTIVE"
        self._om_supported(operation)
        args = self._om_parse(SwapBufferedToActiveInput, input, operation, "input")

        def change(
            current: ObservationalMemoryRecord,
        ) -> tuple[dict[str, Any] | None, SwapBufferedToActiveResult]:
            stored = list(current.buffered_observation_chunks or [])
            if not stored:
                return None, SwapBufferedToActiveResult()
            # Refreshed token weights decide the boundary; the stored chunks are what moves.
            weights = args.buffered_chunks if args.buffered_chunks is not None else stored
            count = plan_activation(weights, args) if weights else 1
            activated, remaining = stored[:count], stored[count:]
            content = "\n\n".join(chunk.observations for chunk in activated)
            tokens = sum(chunk.token_count for chunk in activated)
            message_tokens = sum(chunk.message_tokens for chunk in activated)
            last = activated[-1]
            observed_at = args.last_observed_at or last.last_observed_at or utc_now()
            boundary = f"\n\n--- message boundary ({canonical_timestamp(observed_at)}) ---\n\n"
            active = (
                f"{current.active_observations}{boundary}{content}"
                if current.active_observations
                else content
            )
            changes = {
                "active_observations": active,
                "observation_token_count": current.observation_token_count + tokens,
                "pending_message_tokens": max(0, current.pending_message_tokens - message_tokens),
                "buffered_observation_chunks": remaining or None,
                "last_observed_at": observed_at,
            }
            result = SwapBufferedToActiveResult(
                chunks_activated=len(activated),
                message_tokens_activated=message_tokens,
                observation_tokens_activated=tokens,
                messages_activated=sum(len(chunk.message_ids) for chunk in activated),
                activated_cycle_ids=[chunk.cycle_id for chunk in activated if chunk.cycle_id],
                activated_message_ids=[mid for chunk in activated for mid in chunk.message_ids],
                observations=content,
                per_chunk=[
                    SwapChunkResult(
                        cycle_id=chunk.cycle_id,
                        message_tokens=chunk.message_tokens,
                        observation_tokens=chunk.token_count,
                        message_count=len(chunk.message_ids),
                        observations=chunk.observations,
                    )
                    for chunk in activated
                ],
                suggested_continuation=last.suggested_continuation,
                current_task=last.current_task,
            )
            return changes, result

        return await self._om_change(operation, args.id, change)

    async def set_pending_message_tokens(self, id: str, token_count: int) -> None:
        """Record the pending (unobserved) message tokens of the context window."""
        operation = "SET_PENDING_MESSAGE_TOKENS"
        self._om_supported(operation)
        non_blank(id, "id", store=self.store_name, operation=operation)
        self._om_count(operation, token_count, "token_count")
        await self._om_set(operation, id, {"pending_message_tokens": token_count})

    # --- reflections ----------------------------------------------------------------------------

    async def create_reflection_generation(
        self, input: CreateReflectionGenerationInput | Mapping[str, Any]
    ) -> ObservationalMemoryRecord:
        """Start a new generation whose active observations are the reflection; the previous generation
        stays, readable through the history."""
        operation = "CREATE_REFLECTION_GENERATION"
        self._om_supported(operation)
        args = self._om_parse(CreateReflectionGenerationInput, input, operation, "input")
        self._check_text(operation, (args.reflection, "reflection"))

        def change(current: ObservationalMemoryRecord) -> tuple[dict[str, Any], ObservationalMemoryRecord]:
            return {}, self._next_generation(current, args.reflection, args.token_count)

        return await self._om_change(operation, args.current_record.id, change, insert_result=True)

    async def update_buffered_reflection(
        self, input: UpdateBufferedReflectionInput | Mapping[str, Any]
    ) -> None:
        """Append to the buffered reflection (a blank line between parts), add its output and input
        tokens, and remember how many active-observation lines it covered."""
        operation = "UPDATE_BUFFERED_REFLECTION"
        self._om_supported(operation)
        args = self._om_parse(UpdateBufferedReflectionInput, input, operation, "input")
        self._check_text(operation, (args.reflection, "reflection"))

        def change(current: ObservationalMemoryRecord) -> tuple[dict[str, Any], None]:
            before = current.buffered_reflection
            return {
                "buffered_reflection": f"{before}\n\n{args.reflection}" if before else args.reflection,
                "buffered_reflection_tokens": (current.buffered_reflection_tokens or 0) + args.token_count,
                "buffered_reflection_input_tokens": (current.buffered_reflection_input_tokens or 0)
                + args.input_token_count,
                "reflected_observation_line_count": args.reflected_observation_line_count,
            }, None

        await self._om_change(operation, args.id, change)

    async def swap_buffered_reflection_to_active(
        self, input: SwapBufferedReflectionToActiveInput | Mapping[str, Any]
    ) -> ObservationalMemoryRecord:
        """A new generation of the buffered reflection followed by the active lines it did not cover; the
        buffered reflection is cleared from the previous generation. ValidationError ``..._NO_CONTENT``
        when nothing is buffered."""
        operation = "SWAP_BUFFERED_REFLECTION_TO_ACTIVE"
        self._om_supported(operation)
        args = self._om_parse(SwapBufferedReflectionToActiveInput, input, operation, "input")

        def change(current: ObservationalMemoryRecord) -> tuple[dict[str, Any], ObservationalMemoryRecord]:
            reflection = current.buffered_reflection
            if not reflection:
                raise self._invalid(operation, "NO_CONTENT", "no buffered reflection to swap")
            lines = current.active_observations.split("\n")
            rest = "\n".join(lines[current.reflected_observation_line_count or 0 :]).strip()
            observations = f"{reflection}\n\n{rest}" if rest else reflection
            cleared = {
                "buffered_reflection": None,
                "buffered_reflection_tokens": None,
                "buffered_reflection_input_tokens": None,
                "reflected_observation_line_count": None,
            }
            return cleared, self._next_generation(current, observations, args.token_count)

        return await self._om_change(operation, args.current_record.id, change, insert_result=True)

    async def update_observational_memory_config(
        self, input: UpdateObservationalMemoryConfigInput | Mapping[str, Any]
    ) -> None:
        """Deep-merge ``config`` into the record's config (nested dicts merge, other values replace)."""
        operation = "UPDATE_OM_CONFIG"
        self._om_supported(operation)
        args = self._om_parse(UpdateObservationalMemoryConfigInput, input, operation, "input")
        json_text(args.config, "config")

        def change(current: ObservationalMemoryRecord) -> tuple[dict[str, Any], None]:
            return {"config": deep_merge(current.config, args.config)}, None

        await self._om_change(operation, args.id, change)

    # --- flags ----------------------------------------------------------------------------------

    async def set_reflecting_flag(self, id: str, is_reflecting: bool) -> bool:
        """Set ``is_reflecting``; ``True`` only if this call changed it (compare-and-set, [Δ])."""
        return await self._om_flag("SET_REFLECTING_FLAG", id, "is_reflecting", is_reflecting)

    async def set_observing_flag(self, id: str, is_observing: bool) -> bool:
        """Set ``is_observing``; ``True`` only if this call changed it, so of two callers that both want to
        start observing exactly one gets ``True`` (compare-and-set, [Δ])."""
        return await self._om_flag("SET_OBSERVING_FLAG", id, "is_observing", is_observing)

    async def set_buffering_observation_flag(
        self, id: str, is_buffering: bool, last_buffered_at_tokens: int | None = None
    ) -> bool:
        """Set ``is_buffering_observation`` (compare-and-set: ``True`` only if this call changed it) and,
        when given, ``last_buffered_at_tokens`` (written whether or not the flag changed)."""
        operation = "SET_BUFFERING_OBSERVATION_FLAG"
        if last_buffered_at_tokens is not None:
            self._om_count(operation, last_buffered_at_tokens, "last_buffered_at_tokens")
        extra = (
            {} if last_buffered_at_tokens is None else {"last_buffered_at_tokens": last_buffered_at_tokens}
        )
        return await self._om_flag(operation, id, "is_buffering_observation", is_buffering, extra)

    async def set_buffering_reflection_flag(self, id: str, is_buffering: bool) -> bool:
        """Set ``is_buffering_reflection``; ``True`` only if this call changed it (compare-and-set)."""
        return await self._om_flag(
            "SET_BUFFERING_REFLECTION_FLAG", id, "is_buffering_reflection", is_buffering
        )

    # --- steps ----------------------------------------------------------------------------------

    def _om_supported(self, operation: str) -> None:
        if not self.supports_observational_memory:
            raise CapabilityError(
                f"{type(self).__name__} does not store observational memory (issue 27); use "
                "a storage whose supports_observational_memory is True (SQLite, LibSQL, pgvector, mongodb)",
                id=self._error_id(operation, "OBSERVATIONAL_MEMORY_UNSUPPORTED"),
                domain="STORAGE",
                details={"store": self.store_name, "issue": 27},
            )

    def _om_key(self, operation: str, thread_id: Any, resource_id: Any) -> OMKey:
        self._om_supported(operation)
        resource = validate_resource_id(
            resource_id, store=self.store_name, operation=operation, required=True
        )
        assert resource is not None
        if thread_id is not None:
            non_blank(
                thread_id,
                "thread_id (None for the resource's record)",
                store=self.store_name,
                operation=operation,
            )
        self._check_text(operation, (thread_id, "thread_id"))
        return OMKey(thread_id, resource)

    def _om_parse(self, model: type[M], raw: Any, operation: str, what: str) -> M:
        return parse_model(
            model, raw, store=self.store_name, operation=operation, status="INVALID_ARGS", what=what
        )

    def _om_count(self, operation: str, value: Any, name: str) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self._invalid(operation, "INVALID_ARGS", f"{name} must be an int >= 0, got {value!r}")

    def _om_missing(self, operation: str, om_id: str) -> ObservationalMemoryNotFoundError:
        return ObservationalMemoryNotFoundError(
            f"observational memory record not found: {om_id!r}",
            id=self._error_id(operation, "NOT_FOUND"),
            details={"id": om_id},
        )

    def _next_generation(
        self, current: ObservationalMemoryRecord, observations: str, token_count: int
    ) -> ObservationalMemoryRecord:
        now = next_after(current.created_at)
        return ObservationalMemoryRecord(
            id=str(uuid.uuid4()),
            scope=current.scope,
            thread_id=current.thread_id,
            resource_id=current.resource_id,
            created_at=now,
            updated_at=now,
            last_observed_at=current.last_observed_at,
            origin_type="reflection",
            generation_count=current.generation_count + 1,
            active_observations=observations,
            total_tokens_observed=current.total_tokens_observed,
            observation_token_count=token_count,
            config=current.config,
            metadata=current.metadata,
            observed_timezone=current.observed_timezone,
        )

    async def _om_change(
        self,
        operation: str,
        om_id: str,
        change: Callable[[ObservationalMemoryRecord], tuple[dict[str, Any] | None, T]],
        *,
        insert_result: bool = False,
    ) -> T:
        """Read the record, compute ``(changes, result)``, write the changes only if the record is unchanged
        since the read (its ``updated_at``), retrying otherwise; with ``insert_result`` the result is a new
        generation, inserted in the same unit after the conditional write succeeded."""
        self._check_text(operation, (om_id, "id"))

        async def work(tx: Any) -> T:
            current = await self._om_load(tx, om_id, lock=True)
            if current is None:
                raise self._om_missing(operation, om_id)
            if insert_result:
                # A generation grows from the newest one only: of two reflections of the same record,
                # the second finds a newer generation and is refused rather than forking the history.
                newest = await self._om_generations(tx, current.key, limit=1)
                if newest and newest[0].id != current.id:
                    raise self._invalid(
                        operation,
                        "STALE_GENERATION",
                        f"record {om_id!r} is not the current generation any more (a reflection already "
                        "created a newer one); read the current record again",
                    )
            changes, result = change(current)
            if changes is not None and (changes or insert_result):
                stamp = {"updated_at": next_after(current.updated_at)}
                changes = {name: plain(name, value) for name, value in changes.items()}
                if not await self._om_update(
                    tx, om_id, {**changes, **stamp}, {"updated_at": current.updated_at}
                ):
                    raise _Conflict
            if insert_result:
                assert isinstance(result, ObservationalMemoryRecord)
                if not await self._om_insert(tx, om_values(result)):
                    raise _Conflict  # a fresh uuid4 taken: try again with another
            return result

        for _ in range(_ATTEMPTS):
            try:
                return await self._run_unit(operation, work, write=True, idempotent=not insert_result)
            except _Conflict:
                continue
        raise StorageError(
            f"observational memory record {om_id!r} kept changing during {operation.lower()}; try again",
            id=self._error_id(operation, "CONFLICT"),
            details={"id": om_id},
        )

    async def _om_set(self, operation: str, om_id: str, changes: dict[str, Any]) -> None:
        self._check_text(operation, (om_id, "id"))

        async def work(tx: Any) -> None:
            if not await self._om_update(tx, om_id, {**changes, "updated_at": utc_now()}, {}):
                raise self._om_missing(operation, om_id)

        await self._run_unit(operation, work, write=True)

    async def _om_flag(
        self, operation: str, om_id: str, flag: str, value: Any, extra: Mapping[str, Any] | None = None
    ) -> bool:
        self._om_supported(operation)
        non_blank(om_id, "id", store=self.store_name, operation=operation)
        if not isinstance(value, bool):
            raise self._invalid(operation, "INVALID_ARGS", f"{flag} must be a bool, got {value!r}")
        self._check_text(operation, (om_id, "id"))
        more = dict(extra or {})

        async def work(tx: Any) -> bool:
            now = utc_now()
            # One conditional write decides who flips the flag (docs/spec.md §4.8, compare-and-set).
            if await self._om_update(tx, om_id, {flag: value, **more, "updated_at": now}, {flag: not value}):
                return True
            if more:
                found = await self._om_update(tx, om_id, {**more, "updated_at": now}, {})
            else:
                found = await self._om_load(tx, om_id) is not None
            if not found:
                raise self._om_missing(operation, om_id)
            return False

        return await self._run_unit(operation, work, write=True)
