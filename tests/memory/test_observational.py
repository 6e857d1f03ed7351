"""Observational memory through Memory and its processors (docs/spec.md §5.14), offline with the scripted
model: when the Observer and Reflector run, what the prompt carries afterwards, what storage holds, and
the failure cases."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.errors import ModelError, ModelOutputError
from mastra_memory.memory import Memory
from mastra_memory.memory.observational.groups import parse_groups
from mastra_memory.models import ScriptedModel
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

from .om_helpers import observer_reply, said, system, turn

#: Small thresholds so a short conversation crosses them: 3 turns (about 110 tokens) to observe.
OPTIONS: dict[str, Any] = {
    "observationalMemory": {
        "observation": {"messageTokens": 80},
        "reflection": {"observationTokens": 400},
    }
}


def om_options(model: Any, reflect_at: int = 400, **more: Any) -> dict[str, Any]:
    om = {
        **OPTIONS["observationalMemory"],
        "reflection": {"observationTokens": reflect_at},
        "model": model,
        **more,
    }
    return {"observationalMemory": om}


@pytest.fixture
async def memory(storage: SQLiteStorage, vector: SQLiteVector) -> AsyncIterator[Memory]:
    model = ScriptedModel([observer_reply], repeat_last=True)
    mem = Memory(storage=storage, vector=vector, embedder="hash/64", options=om_options(model))
    yield mem
    await mem.close()


def model_of(memory: Memory) -> ScriptedModel:
    om = memory.options.observational
    assert om is not None
    assert isinstance(om.model, ScriptedModel)
    return om.model


async def test_the_observer_runs_at_the_threshold_and_the_prompt_carries_observations(memory: Memory) -> None:
    events: list[dict[str, Any]] = []
    model = model_of(memory)
    first = await turn(memory, "t1", "u1", "My name is Ada and I live in Lisbon.")
    assert model.requests == []  # under the threshold: no model call
    assert said(first.prompt) == ["My name is Ada and I live in Lisbon."]
    await turn(memory, "t1", "u1", "I have a cat called Tofu who is seven years old.")
    assert model.requests == []
    third = await turn(memory, "t1", "u1", "Please remember that my sister Maria visits on Friday the fifth.")
    # The third turn's output crossed 80 tokens: the Observer was sent every stored message.
    assert len(model.requests) == 1
    sent = model.requests[0].messages[-1]["content"]
    assert "## New Message History to Observe" in sent
    assert "Tofu" in sent
    assert "Maria" in sent
    assert "Date: " in sent
    assert "**User (" in sent
    assert third.prompt  # the turn itself ran normally

    record = await memory.get_observational_memory("t1", "u1")
    assert record is not None
    groups = parse_groups(record.active_observations)
    assert len(groups) == 1
    stored = (await memory.storage.list_messages("t1", per_page=False)).messages
    # The group's range points back to the first and last observed message.
    assert groups[0].range == f"{stored[0].id}:{stored[-1].id}"
    assert "User said: My name is Ada" in groups[0].content
    assert set(record.observed_message_ids or ()) == {m.id for m in stored}
    assert record.observation_token_count > 0
    assert record.last_observed_at == stored[-1].created_at

    # The next prompt: the observations in a system message, none of the observed messages.
    fourth = await turn(memory, "t1", "u1", "What do you know about me?")
    assert said(fourth.prompt) == ["What do you know about me?"]
    assert "<observations>" in system(fourth.prompt)
    assert "User said: I have a cat called Tofu" in system(fourth.prompt)
    assert "<observation-group" not in system(fourth.prompt)  # retrieval off: group tags stripped
    # The Observer's current task is not kept [Δ]: thread metadata is spread into message vectors.
    thread = await memory.get_thread_by_id("t1")
    assert thread is not None
    assert "mastra" not in (thread.metadata or {})
    assert "<current-task>" not in system(fourth.prompt)
    # Storage still holds every message: observing never deletes.
    assert len((await memory.storage.list_messages("t1", per_page=False)).messages) == 8
    assert events == []
    usage = memory.observational_usage
    assert usage.observer.calls == 1
    assert usage.observer.failures == 0
    assert usage.observer.input_tokens > 0


async def test_the_reflector_starts_a_new_generation(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    model = ScriptedModel([observer_reply], repeat_last=True)
    memory = Memory(
        storage=storage, vector=vector, embedder="hash/64", options=om_options(model, reflect_at=120)
    )
    texts = [
        "My name is Ada and I live in Lisbon near the river.",
        "I have a cat called Tofu who is seven years old now.",
        "My sister Maria visits on Friday the fifth of December.",
        "I work as a structural engineer on bridges and towers.",
        "I am learning Portuguese and practise every single morning.",
        "My favourite food is grilled sardines with boiled potatoes.",
        "I plan a trip to Porto in the spring with two friends.",
        "I prefer trains to planes whenever the trip is short.",
        "My birthday is on the ninth of March, please remember it.",
        "I started running and want to finish a ten kilometre race.",
    ]
    for text in texts:
        await turn(memory, "t1", "u1", text)
    reflections = [
        r for r in model.requests if r.messages[-1]["content"].startswith("## Observations to Condense")
    ]
    assert reflections, "the observations grew past 120 tokens: the Reflector ran"
    record = await memory.get_observational_memory("t1", "u1")
    assert record is not None
    assert record.generation_count >= 1
    assert record.origin_type == "reflection"
    history = await memory.storage.get_observational_memory_history("t1", "u1")
    assert len(history) >= 2  # the previous generation stays readable
    group = parse_groups(record.active_observations)[0]
    stored = (await memory.storage.list_messages("t1", per_page=False)).messages
    assert group.kind == "reflection"
    assert group.range.split(":")[0] == stored[0].id  # the reflection spans its sources' ranges
    assert memory.observational_usage.reflector.calls == len(reflections)
    # The prompt after a reflection carries the condensed observations.
    last = await turn(memory, "t1", "u1", "Anything else?")
    assert "🔴" in system(last.prompt)
    await memory.close()


async def test_a_failing_model_never_loses_or_blocks_messages(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    ends: list[dict[str, Any]] = []
    model = ScriptedModel([ModelError("provider down"), "no observations here at all", observer_reply])
    mem = Memory(
        storage=storage,
        vector=vector,
        embedder="hash/64",
        options=om_options(model, hooks={"onObservationEnd": ends.append}),
    )
    try:
        for text in ["My name is Ada and I live in Lisbon.", "I have a cat called Tofu, seven years old."]:
            await turn(mem, "t1", "u1", text)
        third = await turn(mem, "t1", "u1", "My sister Maria visits on Friday the fifth.")
        assert third.prompt
        # The Observer failed: the turn was stored, nothing was observed, the failure went to the hook.
        assert len((await storage.list_messages("t1", per_page=False)).messages) == 6
        assert isinstance(ends[-1]["error"], ModelError)
        record = await mem.get_observational_memory("t1", "u1")
        assert record is not None
        assert record.active_observations == ""
        assert not record.is_observing
        # The next turn: the messages are still in the prompt; the Observer is tried again and answers
        # without observations: a ModelOutputError carrying the reply, reported to the hook.
        fourth = await turn(mem, "t1", "u1", "What do you know?")
        assert "My name is Ada and I live in Lisbon." in said(fourth.prompt)
        error = next(e["error"] for e in ends if isinstance(e["error"], ModelOutputError))
        assert error.reply == "no observations here at all"
        # The third attempt succeeds, and observes everything, including the turns of the failed attempts.
        await turn(mem, "t1", "u1", "Thanks.")
        record = await mem.get_observational_memory("t1", "u1")
        assert record is not None
        assert "Maria" in record.active_observations
        assert ends[-1]["error"] is None
        assert ends[-1]["usage"].input_tokens > 0
        usage = mem.observational_usage.observer
        assert (usage.calls, usage.failures) == (3, 2)
    finally:
        await mem.close()


async def test_observe_raises_a_reply_that_is_not_valid_output(storage: SQLiteStorage) -> None:
    mem = Memory(storage=storage, embedder="hash/64", options=om_options(ScriptedModel(["I cannot help."])))
    try:
        await mem.create_thread("u", thread_id="t")
        await mem.save_messages([{"role": "user", "content": "hello", "thread_id": "t", "resource_id": "u"}])
        with pytest.raises(ModelOutputError) as raised:
            await mem.observe("t", "u")
        assert raised.value.reply == "I cannot help."
        record = await mem.get_observational_memory("t", "u")
        assert record is not None
        assert not record.is_observing  # the flag is released
    finally:
        await mem.close()


async def test_two_memories_on_one_file_observe_once(tmp_path: Path) -> None:
    path = str(tmp_path / "om.db")
    seed = Memory(storage=SQLiteStorage(path), embedder="hash/64")
    await seed.create_thread("u", thread_id="t")
    await seed.save_messages(
        [
            {
                "role": "user",
                "content": f"fact number {i}: " + "words " * 10,
                "thread_id": "t",
                "resource_id": "u",
            }
            for i in range(8)
        ]
    )
    await seed.close()
    import asyncio

    gate = asyncio.Event()

    async def slow(messages: Any) -> str:  # both processes are inside the cycle at once
        await gate.wait()
        return observer_reply(messages)

    class SlowModel(ScriptedModel):
        async def __call__(self, messages: Any, **kw: Any) -> Any:
            self.requests.append(messages)  # type: ignore[arg-type]
            from mastra_memory.models import ModelReply

            return ModelReply(await slow(messages))

    models = [SlowModel([]), SlowModel([])]
    mems = [Memory(storage=SQLiteStorage(path), embedder="hash/64", options=om_options(m)) for m in models]
    try:
        runs = [asyncio.create_task(m.observe("t", "u", force=False)) for m in mems]
        await asyncio.sleep(0.3)
        gate.set()
        results = await asyncio.gather(*runs)
        assert sorted(r.observed for r in results) == [False, True]
        assert sum(len(m.requests) for m in models) == 1
        record = await mems[0].get_observational_memory("t", "u")
        assert record is not None
        assert len(parse_groups(record.active_observations)) == 1
    finally:
        for m in mems:
            await m.close()


async def test_another_tenants_thread_is_refused(memory: Memory) -> None:
    from mastra_memory.errors import ThreadOwnershipError

    await turn(memory, "t1", "u1", "My name is Ada.")
    with pytest.raises(ThreadOwnershipError):
        await turn(memory, "t1", "intruder", "What is her name?")
    with pytest.raises(ThreadOwnershipError):
        await memory.observe("t1", "intruder")


@pytest.mark.parametrize(
    ("om", "option"),
    [
        (
            {"observation": {"bufferTokens": 0.2}, "model": "openai/x"},
            "observational_memory.observation.buffer_tokens",
        ),
        (
            {"reflection": {"blockAfter": 1.2}, "model": "openai/x"},
            "observational_memory.reflection.block_after",
        ),
        ({"activateAfterIdle": "5m", "model": "openai/x"}, "observational_memory.activate_after_idle"),
        (
            {"observation": {"extract": [{"name": "x"}]}, "model": "openai/x"},
            "observational_memory.observation.extract",
        ),
        (
            {"hooks": {"beforeObservation": print}, "model": "openai/x"},
            "observational_memory.hooks.beforeObservation",
        ),
        ({}, "observational_memory.model"),
        ({"model": "default"}, "observational_memory.model"),
    ],
)
def test_unbuilt_options_are_refused_before_any_io(om: dict[str, Any], option: str) -> None:
    from mastra_memory.memory.observational import UnsupportedOMOptionError

    with pytest.raises(UnsupportedOMOptionError) as raised:
        Memory(storage=SQLiteStorage(":memory:"), embedder="hash/64", options={"observationalMemory": om})
    assert raised.value.details == {"option": option}
    assert "not supported" in str(raised.value)


def test_true_and_off_and_per_request_merging() -> None:
    from mastra_memory.memory import MemoryConfig, merge_config

    on = MemoryConfig.from_any({"observationalMemory": True}).observational
    assert on is not None
    assert (on.observation.message_tokens, on.reflection.observation_tokens, on.scope) == (
        30_000,
        40_000,
        "thread",
    )
    assert MemoryConfig.from_any({"observationalMemory": {"enabled": False}}).observational is None
    assert MemoryConfig.from_any({"observationalMemory": False}).observational is None
    base = MemoryConfig.from_any(
        {"observationalMemory": {"model": "openai/x", "observation": {"messageTokens": 5}}}
    )
    merged = merge_config(
        base, {"observationalMemory": {"reflection": {"observationTokens": 7}}}
    ).observational
    assert merged is not None
    assert (merged.observation.message_tokens, merged.reflection.observation_tokens) == (5, 7)
    assert merge_config(base, {"observationalMemory": False}).observational is None


def test_the_chain_with_observational_memory(memory: Memory) -> None:
    ids = [p.id for p in memory.get_input_processors()]
    assert ids == ["memory-input-filter", "observational-memory"]  # no MessageHistory: OM loads history
    assert [p.id for p in memory.get_output_processors()] == ["observational-memory"]  # it stores the turn


def test_shared_budget_threshold_is_mastras() -> None:
    from mastra_memory.memory.observational.tokens import message_threshold

    # Mastra's calculateDynamicThreshold with 30k:40k: 70k with no observations, back to 30k at 40k.
    assert message_threshold(30_000, 40_000, 0, True) == 70_000
    assert message_threshold(30_000, 40_000, 10_000, True) == 60_000
    assert message_threshold(30_000, 40_000, 50_000, True) == 30_000
    assert message_threshold(30_000, 40_000, 0, False) == 30_000


def test_replies_groups_and_stripping() -> None:
    from mastra_memory.memory.observational.groups import spanning_range, strip_groups, wrap_group
    from mastra_memory.memory.observational.prompts import parse_output

    out = parse_output(
        "Sure!\n<observations>\nDate: Dec 2, 2026\n* 🔴 (09:00) a\n</observations>\n"
        "<current-task>\nplanning\n</current-task>",
        "m",
    )
    assert (out.observations, out.current_task) == ("Date: Dec 2, 2026\n* 🔴 (09:00) a", "planning")
    # Without the block, the list lines are taken (as Mastra falls back); prose alone is not output.
    assert parse_output("Here:\n* 🔴 (09:00) a\nthanks", "m").observations == "* 🔴 (09:00) a"
    with pytest.raises(ModelOutputError) as raised:
        parse_output("Nothing to note.", "m")
    assert raised.value.reply == "Nothing to note."
    two = wrap_group("* a", "m1:m2", "g1") + "\n\n" + wrap_group("* b", "m3:m4", "g2")
    assert [g.range for g in parse_groups(two)] == ["m1:m2", "m3:m4"]
    assert spanning_range(parse_groups(two)) == "m1:m4"
    assert strip_groups(two) == "* a\n\n* b"


async def test_hooks_start_and_end_and_a_failing_hook_is_harmless(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    seen: list[str] = []

    def broken(payload: dict[str, Any]) -> None:
        raise RuntimeError("hook bug")

    async def end(payload: dict[str, Any]) -> None:
        seen.append(f"end:{payload['trigger']}:{payload['error'] is None}")

    model = ScriptedModel([observer_reply], repeat_last=True)
    hooks = {"onObservationStart": broken, "onObservationEnd": end}
    mem = Memory(storage=storage, vector=vector, embedder="hash/64", options=om_options(model, hooks=hooks))
    try:
        await mem.create_thread("u", thread_id="t")
        await mem.save_messages([{"role": "user", "content": "hello", "thread_id": "t"}])
        result = await mem.observe("t", "u")
        assert result.observed
        assert seen == ["end:manual:True"]
    finally:
        await mem.close()


async def test_one_engine_per_options_however_often_the_model_is_called(memory: Memory) -> None:
    for text in [
        "My name is Ada and I live in Lisbon.",
        "I have a cat called Tofu who is seven years old.",
        "Please remember that my sister Maria visits on Friday the fifth.",
        "And my brother Luis visits on Saturday the sixth.",
    ]:
        await turn(memory, "t1", "u1", text)
    assert model_of(memory).requests  # the model's repr changed as it was called
    assert len(memory._chain._engines) == 1
