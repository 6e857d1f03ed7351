"""The observational-memory part of the storage template (docs/spec.md §4.8) beyond what the kit's storage
domain checks on every target: the refusal of a storage without OM, the activation rule, the config merge,
Mastra's JSON form of a record, and that bad input is refused before any I/O (on a storage whose every
I/O would fail)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mastra_memory.errors import CapabilityError, StorageError, ValidationError
from mastra_memory.storage import (
    BufferedObservationChunk,
    ObservationalMemoryRecord,
    SwapBufferedToActiveInput,
    deep_merge,
    plan_activation,
)
from mastra_memory.stores.sqlite.storage import SQLiteStorage

from .test_storage_template import DictStorage

#: A record as @mastra/libsql 1.23.1 returns it (JSON of its Dates), from tests/interop's exchange.
MASTRA_RECORD: dict[str, Any] = {
    "id": "4df671d9-5635-4e6d-8e1d-72b16afa2767",
    "scope": "thread",
    "threadId": "t1",
    "resourceId": "r1",
    "createdAt": "2026-12-02T08:02:12.129Z",
    "updatedAt": "2026-12-02T08:02:12.156Z",
    "originType": "initial",
    "generationCount": 0,
    "activeObservations": "",
    "bufferedObservationChunks": [
        {
            "id": "ombuf-62275def-13d1-4248-bd80-bc1ffc79d8d3",
            "cycleId": "c1",
            "observations": "obs",
            "tokenCount": 3,
            "messageIds": ["m1"],
            "messageTokens": 10,
            "lastObservedAt": "2026-12-02T08:02:12.156Z",
            "createdAt": "2026-12-02T08:02:12.156Z",
        }
    ],
    "totalTokensObserved": 0,
    "observationTokenCount": 0,
    "pendingMessageTokens": 0,
    "isReflecting": False,
    "isObserving": True,
    "isBufferingObservation": False,
    "isBufferingReflection": False,
    "lastBufferedAtTokens": 0,
    "lastBufferedAtTime": None,
    "config": {"a": 1},
}


@pytest.mark.asyncio
async def test_a_storage_without_om_refuses_every_method_naming_the_issue() -> None:
    storage = DictStorage()
    assert storage.supports_observational_memory is False
    calls = [
        storage.get_observational_memory("t", "r"),
        storage.get_observational_memory_history(None, "r"),
        storage.initialize_observational_memory({"threadId": "t", "resourceId": "r", "scope": "thread"}),
        storage.clear_observational_memory("t", "r"),
        storage.set_observing_flag("id", True),
        storage.set_buffering_observation_flag("id", True, 3),
        storage.update_observational_memory_config({"id": "id", "config": {}}),
        storage.swap_buffered_to_active(
            {"id": "id", "activationRatio": 1, "messageTokensThreshold": 1, "currentPendingTokens": 1}
        ),
    ]
    for call in calls:
        with pytest.raises(CapabilityError, match="issue 27") as caught:
            await call
        assert caught.value.id.endswith("_OBSERVATIONAL_MEMORY_UNSUPPORTED"), caught.value.id
        assert caught.value.id.startswith("MASTRA_STORAGE_")


def _chunks(*message_tokens: int) -> list[BufferedObservationChunk]:
    return [
        BufferedObservationChunk(id=f"b{i}", cycle_id=f"c{i}", message_tokens=t)
        for i, t in enumerate(message_tokens)
    ]


def _swap(ratio: float, threshold: int, pending: int, force: bool = False) -> SwapBufferedToActiveInput:
    return SwapBufferedToActiveInput(
        id="x",
        activation_ratio=ratio,
        message_tokens_threshold=threshold,
        current_pending_tokens=pending,
        force_max_activation=force,
    )


@pytest.mark.parametrize(
    ("tokens", "args", "expected"),
    [
        # floor 0: the smallest prefix reaching the whole pending count.
        ((400, 600), _swap(1, 1000, 400), 1),
        ((400, 600), _swap(1, 1000, 1000), 2),
        # floor 2,000, target 3,000: 2,500 is under it, 4,000 overshoots by 1,000 <= 1,900 and leaves 1,000.
        ((2500, 1500, 1000), _swap(0.8, 10000, 5000), 2),
        # floor 200, target 800: one chunk of 1,000 overshoots by 200 > 190; under is none: over anyway.
        ((1000,), _swap(0.8, 1000, 1000), 1),
        # floor 1,000, target 500: 600 overshoots by 100 but leaves 400 < 1,000; under (none) -> over.
        ((600, 100), _swap(0.5, 2000, 1000), 1),
        # forced: the smallest prefix over the target whatever the overshoot, if enough stays pending.
        # floor 50,000, target 10,000: 57,700 overshoots by 47,700 > 47,500, so the 100 under it goes, unless
        # forced (57,700 still leaves 2,300 pending).
        ((100, 57600), _swap(0.5, 100000, 60000, force=True), 2),
        ((100, 57600), _swap(0.5, 100000, 60000), 1),
        # under leaves enough: the largest prefix below the target.
        ((100, 5000), _swap(0.5, 2000, 7000), 2),
    ],
)
def test_plan_activation_follows_mastras_rule(
    tokens: tuple[int, ...], args: SwapBufferedToActiveInput, expected: int
) -> None:
    assert plan_activation(_chunks(*tokens), args) == expected


def test_config_deep_merges_and_never_aliases() -> None:
    target = {"observation": {"messageTokens": 1, "model": "a"}, "list": [1]}
    merged = deep_merge(target, {"observation": {"model": "b", "extra": {"x": 1}}, "list": [2], "new": None})
    assert merged == {
        "observation": {"messageTokens": 1, "model": "b", "extra": {"x": 1}},
        "list": [2],
        "new": None,
    }
    assert target == {"observation": {"messageTokens": 1, "model": "a"}, "list": [1]}


def test_a_record_reads_and_dumps_mastras_json() -> None:
    record = ObservationalMemoryRecord.model_validate(MASTRA_RECORD)
    assert (record.thread_id, record.is_observing, record.config) == ("t1", True, {"a": 1})
    chunk = (record.buffered_observation_chunks or [])[0]
    assert (chunk.cycle_id, chunk.message_ids, chunk.message_tokens) == ("c1", ["m1"], 10)
    dumped = record.model_dump(mode="json", by_alias=True, exclude_none=True)
    expected = {k: v for k, v in MASTRA_RECORD.items() if v is not None}
    assert dumped == expected


@pytest.mark.asyncio
async def test_bad_input_is_refused_before_any_io(tmp_path: Path) -> None:
    # A database under a regular file cannot be opened: any I/O would be a StorageError.
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    storage = SQLiteStorage(str(blocker / "memory.db"))
    with pytest.raises(StorageError):
        await storage.get_observational_memory("t", "r")
    refused = [
        storage.get_observational_memory("", "r"),
        storage.get_observational_memory("t", None),  # type: ignore[arg-type]
        storage.get_observational_memory_history("t", "r", -1),
        storage.initialize_observational_memory({"threadId": "t", "resourceId": "r", "scope": "resource"}),
        storage.initialize_observational_memory(
            {"threadId": "t", "resourceId": "r", "scope": "thread", "x": 1}
        ),
        storage.update_active_observations(
            {"id": "i", "observations": "o", "tokenCount": -1, "lastObservedAt": 0}
        ),
        storage.update_buffered_observations({"id": "i", "chunk": {"cycleId": "c"}}),
        storage.swap_buffered_to_active(
            {"id": "i", "activationRatio": 2, "messageTokensThreshold": 1, "currentPendingTokens": 1}
        ),
        storage.set_observing_flag("i", 1),  # type: ignore[arg-type]
        storage.set_pending_message_tokens("i", True),  # type: ignore[arg-type]
        storage.insert_observational_memory_record({**MASTRA_RECORD, "scope": "resource"}),
        storage.update_observational_memory_config({"id": "i", "config": {"x": float("nan")}}),
        storage.update_active_observations(
            {"id": "i", "observations": "\ud800", "tokenCount": 1, "lastObservedAt": 0}
        ),
    ]
    for call in refused:
        with pytest.raises(ValidationError):
            await call
