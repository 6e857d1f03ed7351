"""Observational-memory storage (docs/spec.md §4.8): records, buffering, generations, scopes and tenants,
the compare-and-set flags (two clients and two processes claiming at once: one wins) and bad input.

A storage whose ``supports_observational_memory`` is ``False`` must refuse every OM method with
``CapabilityError`` naming issue 27; the tests then record "unsupported" and stop there.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from typing import Any

import pytest

from mastra_memory.errors import CapabilityError, ValidationError
from mastra_memory.plugins import create_storage
from mastra_memory.storage import MemoryStorage, ObservationalMemoryRecord

from ...report import Outcome
from ...scenarios import at
from ...targets import ConformanceTarget, TargetSettings
from .base import new_prefix

__all__ = ["ObservationalMemorySuite"]

#: One claimant of the two-process test: opens the target's storage, waits for the common start time and
#: tries to start observing; prints whether it won.
_CLAIMANT = """
import asyncio, json, sys, time
from mastra_memory.plugins import create_storage

args = json.loads(sys.argv[1])

async def main():
    storage = create_storage(args["adapter"], **args["settings"])
    await storage.init()
    await storage.get_observational_memory(None, args["resource"])  # connected before the start
    await asyncio.sleep(max(0.0, args["start"] - time.time()))
    won = await storage.set_observing_flag(args["id"], True)
    await storage.close()
    print(json.dumps(won))

asyncio.run(main())
"""
_PROCESS_TIMEOUT = 120.0


def _supported(storage: MemoryStorage) -> bool:
    return bool(getattr(storage, "supports_observational_memory", False))


async def _thread_record(storage: MemoryStorage, prefix: str, **extra: Any) -> ObservationalMemoryRecord:
    return await storage.initialize_observational_memory(
        {"threadId": prefix + "t", "resourceId": prefix + "r", "scope": "thread", "config": {}, **extra}
    )


async def _current(storage: MemoryStorage, record: ObservationalMemoryRecord) -> ObservationalMemoryRecord:
    found = await storage.get_observational_memory(record.thread_id, record.resource_id)
    assert found is not None, f"the record of {record.thread_id or record.resource_id} is missing"
    return found


def _chunk(cycle: str, message_tokens: int, tokens: int, ids: list[str], seconds: float) -> dict[str, Any]:
    return {
        "cycleId": cycle,
        "observations": f"* observed in {cycle}",
        "tokenCount": tokens,
        "messageIds": ids,
        "messageTokens": message_tokens,
        "lastObservedAt": at(seconds),
    }


@pytest.mark.asyncio
class ObservationalMemorySuite:
    """Observational memory's storage methods (a part of ``MemoryStorageSuite``)."""

    @pytest.mark.conformance(domain="storage", item="observational_memory")
    async def test_observational_memory_records(self, storage: MemoryStorage, outcome: Outcome) -> None:
        if not _supported(storage):
            with pytest.raises(CapabilityError, match="issue 27"):
                await storage.get_observational_memory("t", "r")
            with pytest.raises(CapabilityError, match="issue 27"):
                await storage.set_observing_flag("some-id", True)
            outcome.unsupported("observational_memory", "supports_observational_memory is False")
            return
        p = new_prefix()
        assert await storage.get_observational_memory(p + "t", p + "r") is None
        config = {"observation": {"messageTokens": 30000}, "scope": "thread"}
        record = await _thread_record(storage, p, config=config, observedTimezone="Europe/London")
        assert (record.scope, record.thread_id, record.resource_id) == ("thread", p + "t", p + "r")
        assert (record.origin_type, record.generation_count, record.active_observations) == ("initial", 0, "")
        assert (record.config, record.observed_timezone) == (config, "Europe/London")
        assert not (record.is_observing)
        assert not (record.is_reflecting)
        assert not (record.is_buffering_observation)
        assert (record.last_buffered_at_tokens, record.last_buffered_at_time, record.last_observed_at) == (
            0,
            None,
            None,
        )
        assert await _current(storage, record) == record, "the record reads back as initialised"

        await storage.update_active_observations(
            {
                "id": record.id,
                "observations": "* one",
                "tokenCount": 7,
                "lastObservedAt": at(5),
                "observedMessageIds": [p + "m1"],
            }
        )
        first = await _current(storage, record)
        assert (first.active_observations, first.observation_token_count, first.total_tokens_observed) == (
            "* one",
            7,
            7,
        )
        assert (first.last_observed_at, first.observed_message_ids) == (at(5), [p + "m1"])
        assert first.updated_at > record.updated_at
        await storage.set_pending_message_tokens(record.id, 123)
        assert (await _current(storage, record)).pending_message_tokens == 123
        await storage.update_active_observations(
            {"id": record.id, "observations": "* one\n* two", "tokenCount": 3, "lastObservedAt": at(6)}
        )
        second = await _current(storage, record)
        assert (second.observation_token_count, second.total_tokens_observed) == (3, 10)
        assert second.pending_message_tokens == 0, "an observation empties the pending count"

        await storage.update_observational_memory_config(
            {"id": record.id, "config": {"observation": {"bufferTokens": 5}, "extra": [1]}}
        )
        merged = (await _current(storage, record)).config
        assert merged == {
            "observation": {"messageTokens": 30000, "bufferTokens": 5},
            "scope": "thread",
            "extra": [1],
        }

        copy = second.model_copy(update={"id": p + "copy", "thread_id": p + "t2"})
        await storage.insert_observational_memory_record(copy)
        assert await storage.get_observational_memory(p + "t2", p + "r") == copy
        with pytest.raises(ValidationError):
            await storage.insert_observational_memory_record(copy)

        await storage.clear_observational_memory(p + "t", p + "r")
        assert await storage.get_observational_memory(p + "t", p + "r") is None
        assert await storage.get_observational_memory_history(p + "t", p + "r") == []
        assert await storage.get_observational_memory(p + "t2", p + "r") == copy, "clear is per thread"

    @pytest.mark.conformance(domain="storage", item="observational_memory_buffering")
    async def test_observational_memory_buffering(self, storage: MemoryStorage, outcome: Outcome) -> None:
        if not _supported(storage):
            outcome.unsupported("observational_memory", "supports_observational_memory is False")
            return
        p = new_prefix()
        record = await _thread_record(storage, p)
        await storage.update_active_observations(
            {"id": record.id, "observations": "* base", "tokenCount": 5, "lastObservedAt": at(1)}
        )
        c1 = _chunk("c1", 400, 20, [p + "m1", p + "m2"], 10)
        c2 = _chunk("c2", 600, 30, [p + "m3"], 20)
        await storage.update_buffered_observations(
            {"id": record.id, "chunk": c1, "lastBufferedAtTime": at(11)}
        )
        await storage.update_buffered_observations({"id": record.id, "chunk": c1})
        await storage.update_buffered_observations({"id": record.id, "chunk": c2})
        buffered = await _current(storage, record)
        chunks = buffered.buffered_observation_chunks or []
        assert [c.cycle_id for c in chunks] == ["c1", "c2"], "a cycle's chunk is buffered once"
        assert len({c.id for c in chunks}) == 2
        assert all(c.id for c in chunks)
        assert (chunks[0].message_ids, chunks[0].message_tokens, chunks[0].last_observed_at) == (
            [p + "m1", p + "m2"],
            400,
            at(10),
        )
        assert buffered.last_buffered_at_time == at(11)

        result = await storage.swap_buffered_to_active(
            {
                "id": record.id,
                "activationRatio": 1,
                "messageTokensThreshold": 1000,
                "currentPendingTokens": 400,
            }
        )
        assert (
            result.chunks_activated,
            result.message_tokens_activated,
            result.observation_tokens_activated,
        ) == (
            1,
            400,
            20,
        )
        assert (result.messages_activated, result.activated_cycle_ids) == (2, ["c1"])
        assert result.activated_message_ids == [p + "m1", p + "m2"]
        assert result.observations == "* observed in c1"
        after = await _current(storage, record)
        assert after.active_observations.startswith("* base\n\n--- message boundary (")
        assert after.active_observations.endswith(") ---\n\n* observed in c1")
        assert (after.observation_token_count, after.last_observed_at) == (25, at(10))
        assert [c.cycle_id for c in after.buffered_observation_chunks or []] == ["c2"]

        rest = await storage.swap_buffered_to_active(
            {
                "id": record.id,
                "activationRatio": 1,
                "messageTokensThreshold": 1000,
                "currentPendingTokens": 600,
                "lastObservedAt": at(30),
            }
        )
        assert (rest.chunks_activated, rest.activated_cycle_ids) == (1, ["c2"])
        done = await _current(storage, record)
        assert (done.buffered_observation_chunks or [], done.last_observed_at) == ([], at(30))
        nothing = await storage.swap_buffered_to_active(
            {"id": record.id, "activationRatio": 1, "messageTokensThreshold": 1000, "currentPendingTokens": 0}
        )
        assert (nothing.chunks_activated, nothing.activated_message_ids) == (0, [])
        assert await _current(storage, record) == done, "an empty buffer changes nothing"

    @pytest.mark.conformance(domain="storage", item="observational_memory_generations")
    async def test_observational_memory_generations(self, storage: MemoryStorage, outcome: Outcome) -> None:
        if not _supported(storage):
            outcome.unsupported("observational_memory", "supports_observational_memory is False")
            return
        p = new_prefix()
        g0 = await _thread_record(storage, p, config={"k": 1})
        await storage.update_active_observations(
            {"id": g0.id, "observations": "line1\nline2", "tokenCount": 9, "lastObservedAt": at(3)}
        )
        current = await _current(storage, g0)
        g1 = await storage.create_reflection_generation(
            {"currentRecord": current, "reflection": "reflected", "tokenCount": 4}
        )
        assert (g1.generation_count, g1.origin_type, g1.active_observations) == (1, "reflection", "reflected")
        assert (g1.observation_token_count, g1.total_tokens_observed, g1.config) == (4, 9, {"k": 1})
        assert (g1.thread_id, g1.resource_id, g1.last_observed_at) == (p + "t", p + "r", at(3))
        assert g1.id != g0.id
        assert not g1.is_observing
        assert await _current(storage, g0) == g1, "the newest generation is the current record"
        history = await storage.get_observational_memory_history(p + "t", p + "r")
        assert [h.id for h in history] == [g1.id, g0.id], "history is newest first, the current one included"
        assert history[1].active_observations == "line1\nline2", "the previous generation is kept"
        assert [h.id for h in await storage.get_observational_memory_history(p + "t", p + "r", 1)] == [g1.id]
        offset = await storage.get_observational_memory_history(p + "t", p + "r", 10, {"offset": 1})
        assert [h.id for h in offset] == [g0.id]
        newer = await storage.get_observational_memory_history(p + "t", p + "r", 10, {"from": g1.created_at})
        assert [h.id for h in newer] == [g1.id]
        older = await storage.get_observational_memory_history(p + "t", p + "r", 10, {"to": g0.created_at})
        assert [h.id for h in older] == [g0.id]
        with pytest.raises(ValidationError):
            # g0 is no longer the current generation: a second reflection of it would fork the history.
            await storage.create_reflection_generation(
                {"currentRecord": current, "reflection": "again", "tokenCount": 1}
            )

        await storage.update_active_observations(
            {"id": g1.id, "observations": "reflected\nnew line", "tokenCount": 6, "lastObservedAt": at(4)}
        )
        await storage.update_buffered_reflection(
            {
                "id": g1.id,
                "reflection": "summary",
                "tokenCount": 2,
                "inputTokenCount": 10,
                "reflectedObservationLineCount": 1,
            }
        )
        await storage.update_buffered_reflection(
            {
                "id": g1.id,
                "reflection": "more",
                "tokenCount": 1,
                "inputTokenCount": 5,
                "reflectedObservationLineCount": 1,
            }
        )
        buffered = await _current(storage, g1)
        assert (buffered.buffered_reflection, buffered.buffered_reflection_tokens) == ("summary\n\nmore", 3)
        assert (buffered.buffered_reflection_input_tokens, buffered.reflected_observation_line_count) == (
            15,
            1,
        )
        g2 = await storage.swap_buffered_reflection_to_active({"currentRecord": buffered, "tokenCount": 6})
        assert (g2.generation_count, g2.active_observations) == (2, "summary\n\nmore\n\nnew line")
        assert g2.observation_token_count == 6
        previous = (await storage.get_observational_memory_history(p + "t", p + "r"))[1]
        assert (previous.id, previous.buffered_reflection, previous.reflected_observation_line_count) == (
            g1.id,
            None,
            None,
        )
        with pytest.raises(ValidationError):
            await storage.swap_buffered_reflection_to_active({"currentRecord": g2, "tokenCount": 1})

    @pytest.mark.conformance(domain="storage", item="observational_memory_isolation")
    async def test_observational_memory_scopes_and_tenants(
        self, storage: MemoryStorage, outcome: Outcome
    ) -> None:
        if not _supported(storage):
            outcome.unsupported("observational_memory", "supports_observational_memory is False")
            return
        p = new_prefix()
        alice, bob, ta = p + "alice", p + "bob", p + "ta"
        thread = await storage.initialize_observational_memory(
            {"threadId": ta, "resourceId": alice, "scope": "thread", "config": {}}
        )
        resource = await storage.initialize_observational_memory(
            {"threadId": None, "resourceId": alice, "scope": "resource", "config": {}}
        )
        assert (resource.scope, resource.thread_id) == ("resource", None)
        assert (await storage.get_observational_memory(ta, alice)) == thread
        assert (await storage.get_observational_memory(None, alice)) == resource
        # Another resource never sees alice's records, whichever thread id it names.
        assert await storage.get_observational_memory(ta, bob) is None
        assert await storage.get_observational_memory(None, bob) is None
        assert await storage.get_observational_memory_history(ta, bob) == []
        await storage.clear_observational_memory(ta, bob)
        assert await storage.get_observational_memory(ta, alice) == thread, (
            "bob's clear leaves alice's record"
        )
        bobs = await storage.initialize_observational_memory(
            {"threadId": ta, "resourceId": bob, "scope": "thread", "config": {}}
        )
        assert await storage.get_observational_memory(ta, bob) == bobs
        assert await storage.get_observational_memory(ta, alice) == thread
        await storage.clear_observational_memory(None, alice)
        assert await storage.get_observational_memory(None, alice) is None
        assert await storage.get_observational_memory(ta, alice) == thread, "the resource's clear is its own"

    @pytest.mark.conformance(domain="storage", item="observational_memory_flags")
    async def test_observational_memory_flags(self, storage: MemoryStorage, outcome: Outcome) -> None:
        if not _supported(storage):
            outcome.unsupported("observational_memory", "supports_observational_memory is False")
            return
        p = new_prefix()
        record = await _thread_record(storage, p)
        setters = {
            "is_observing": storage.set_observing_flag,
            "is_reflecting": storage.set_reflecting_flag,
            "is_buffering_observation": storage.set_buffering_observation_flag,
            "is_buffering_reflection": storage.set_buffering_reflection_flag,
        }
        for flag, setter in setters.items():
            for value, flips in ((True, True), (True, False), (False, True), (False, False)):
                assert await setter(record.id, value) is flips, f"{flag}={value}: compare-and-set"
                assert getattr(await _current(storage, record), flag) is value
        assert await storage.set_buffering_observation_flag(record.id, True, 500) is True
        assert (await _current(storage, record)).last_buffered_at_tokens == 500
        assert await storage.set_buffering_observation_flag(record.id, True, 700) is False
        assert (await _current(storage, record)).last_buffered_at_tokens == 700, (
            "the tokens are written anyway"
        )
        missing = p + "missing"
        for call in (
            storage.set_observing_flag(missing, True),
            storage.set_pending_message_tokens(missing, 1),
            storage.update_observational_memory_config({"id": missing, "config": {}}),
            storage.update_active_observations(
                {"id": missing, "observations": "", "tokenCount": 0, "lastObservedAt": at(0)}
            ),
        ):
            with pytest.raises(LookupError):
                await call

    @pytest.mark.conformance(domain="storage", item="observational_memory_concurrency")
    async def test_observational_memory_concurrent_claims(
        self,
        storage: MemoryStorage,
        outcome: Outcome,
        conformance_target: ConformanceTarget,
        target_settings: TargetSettings,
    ) -> None:
        if not _supported(storage):
            outcome.unsupported("observational_memory", "supports_observational_memory is False")
            return
        assert target_settings.storage is not None
        p = new_prefix()
        record = await _thread_record(storage, p)
        # A second client of the same backend: two app instances reaching the threshold at once.
        other = create_storage(conformance_target.adapter, **target_settings.storage)
        await other.init()
        try:
            claims = await asyncio.gather(
                *(client.set_observing_flag(record.id, True) for client in [storage, other] * 4)
            )
            assert claims.count(True) == 1, f"exactly one claim wins, got {claims}"
            chunks = [_chunk(f"c{i}", 10, 1, [f"{p}m{i}"], i) for i in range(8)]
            await asyncio.gather(
                *(
                    client.update_buffered_observations({"id": record.id, "chunk": chunk})
                    for client, chunk in zip([storage, other] * 4, chunks, strict=True)
                )
            )
            # Two processes finding no record both create generation 0 under one id: one insert wins.
            first = record.model_copy(update={"id": p + "gen0", "thread_id": p + "t-new"})
            inserts = await asyncio.gather(
                *(client.insert_observational_memory_record(first) for client in [storage, other] * 2),
                return_exceptions=True,
            )
            assert inserts.count(None) == 1, f"exactly one insert of an id succeeds, got {inserts}"
            assert all(isinstance(i, ValidationError) for i in inserts if i is not None), inserts
        finally:
            await other.close()
        stored = (await _current(storage, record)).buffered_observation_chunks or []
        assert sorted(c.cycle_id for c in stored) == sorted(f"c{i}" for i in range(8)), "no append is lost"

        # Two processes.
        try:
            settings = json.dumps(target_settings.storage)
        except TypeError:
            outcome.unsupported(
                "observational_memory_processes", "the target's storage settings are not JSON"
            )
            return
        fresh = await _thread_record(storage, new_prefix())
        args = {
            "adapter": conformance_target.adapter,
            "settings": json.loads(settings),
            "resource": fresh.resource_id,
            "id": fresh.id,
            "start": time.time() + 8.0,
        }
        processes = [
            await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                _CLAIMANT,
                json.dumps(args),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=dict(os.environ),
            )
            for _ in range(2)
        ]
        outputs = []
        try:
            for process in processes:
                out, err = await asyncio.wait_for(process.communicate(), _PROCESS_TIMEOUT)
                assert process.returncode == 0, err.decode(errors="replace")[-2000:]
                outputs.append(json.loads(out.decode().strip().splitlines()[-1]))
        finally:
            for process in processes:
                if process.returncode is None:
                    process.kill()
                    await process.wait()
        assert sorted(outputs) == [False, True], f"two processes claimed at once: {outputs}"
        assert (await _current(storage, fresh)).is_observing

    @pytest.mark.conformance(domain="storage", item="observational_memory_errors")
    async def test_observational_memory_bad_input(self, storage: MemoryStorage, outcome: Outcome) -> None:
        if not _supported(storage):
            outcome.unsupported("observational_memory", "supports_observational_memory is False")
            return
        p = new_prefix()
        t, r = p + "t", p + "r"
        for thread_id, resource_id in (("", r), (t, ""), (t, " "), (t, None), (5, r)):
            with pytest.raises(ValidationError):
                await storage.get_observational_memory(thread_id, resource_id)  # type: ignore[arg-type]
        bad: dict[str, Any]
        for bad in (
            {"threadId": None, "resourceId": r, "scope": "thread", "config": {}},
            {"threadId": t, "resourceId": r, "scope": "resource", "config": {}},
            {"threadId": t, "resourceId": r, "scope": "global", "config": {}},
            {"threadId": t, "resourceId": r, "scope": "thread", "config": "x"},
            {"threadId": t, "resourceId": r, "scope": "thread", "config": {}, "unknown": 1},
            {"threadId": t, "resourceId": "", "scope": "thread", "config": {}},
        ):
            with pytest.raises(ValidationError):
                await storage.initialize_observational_memory(bad)
        assert await storage.get_observational_memory(t, r) is None, "a refused call stores nothing"
        record = await _thread_record(storage, p)
        for update in (
            {"id": record.id, "observations": "x", "tokenCount": -1, "lastObservedAt": at(0)},
            {"id": record.id, "observations": "x", "tokenCount": "7", "lastObservedAt": at(0)},
            {"id": record.id, "observations": "x", "tokenCount": 1},
            {"id": "", "observations": "x", "tokenCount": 1, "lastObservedAt": at(0)},
        ):
            with pytest.raises(ValidationError):
                await storage.update_active_observations(update)
        with pytest.raises(ValidationError):
            await storage.swap_buffered_to_active(
                {
                    "id": record.id,
                    "activationRatio": 1.5,
                    "messageTokensThreshold": 1,
                    "currentPendingTokens": 1,
                }
            )
        with pytest.raises(ValidationError):
            await storage.get_observational_memory_history(t, r, -1)
        with pytest.raises(ValidationError):
            await storage.get_observational_memory_history(t, r, 10, {"offset": -1})
        with pytest.raises(ValidationError):
            await storage.set_observing_flag(record.id, "yes")  # type: ignore[arg-type]
        with pytest.raises(ValidationError):
            await storage.set_buffering_observation_flag(record.id, True, -5)
        assert await _current(storage, record) == record, "refused calls change nothing"
