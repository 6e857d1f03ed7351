"""docs/spec.md §5.13: ScriptedModel, the replaying model tests (ours and users') run features with."""

from __future__ import annotations

import pytest

from mastra_memory.errors import ModelError, ModelOutputError
from mastra_memory.models import ChatModel, ModelReply, ScriptedModel, Usage

HELLO = [{"role": "user", "content": "two words"}]


async def test_replays_in_order_and_records_every_request() -> None:
    model = ScriptedModel(["first", ModelReply("second", Usage(5, 6)), lambda messages: "third"])
    assert isinstance(model, ChatModel)
    replies = [await model(HELLO), await model(HELLO, tools=[{"type": "function"}]), await model(HELLO)]
    assert [r.text for r in replies] == ["first", "second", "third"]
    assert replies[0].usage == Usage(2, 1)
    assert replies[1].usage == Usage(5, 6)
    assert [r.messages for r in model.requests] == [tuple(HELLO)] * 3
    assert model.requests[1].tools == ({"type": "function"},)


async def test_an_exhausted_script_is_a_model_error_unless_the_last_reply_repeats() -> None:
    with pytest.raises(ModelError, match="ran out of scripted replies"):
        await ScriptedModel([])(HELLO)
    repeating = ScriptedModel(["again"], repeat_last=True)
    assert [(await repeating(HELLO)).text for _ in range(3)] == ["again"] * 3


async def test_a_scripted_exception_is_raised() -> None:
    with pytest.raises(ModelError, match="down"):
        await ScriptedModel([ModelError("down")])(HELLO)


async def test_schema_replies_are_checked_like_a_real_model() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    model = ScriptedModel(['```json\n{"n": 3}\n```', '{"n": "three"}'])
    assert (await model(HELLO, schema=schema)).parsed == {"n": 3}
    with pytest.raises(ModelOutputError, match=r"\$\.n is str, expected integer") as info:
        await model(HELLO, schema=schema)
    assert info.value.reply == '{"n": "three"}'
