"""Message records (docs/spec.md §4.1): v2 models, camelCase, unknown parts, legacy v1 normalisation, text
rules."""

from __future__ import annotations

import itertools
import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mastra_memory.errors import ValidationError
from mastra_memory.messages import (
    DataPart,
    MastraDBMessage,
    MessageContentV2,
    ReasoningPart,
    TextPart,
    ToolInvocationPart,
    UnknownPart,
    message_text,
    normalize_message,
    normalize_messages,
    render_text,
)

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def v2(parts: list[Any], **extra: Any) -> dict[str, Any]:
    return {"format": 2, "parts": parts, **extra}


def test_string_content_becomes_v2_with_one_text_part() -> None:
    msg = normalize_message({"role": "user", "content": "hello", "thread_id": "t1"})
    assert msg.content.format == 2
    assert msg.content.content == "hello"
    assert msg.content.parts == [TextPart(text="hello")]
    assert msg.type == "v2"


def test_missing_id_is_a_uuid4_and_missing_created_at_is_now() -> None:
    before = datetime.now(UTC) - timedelta(milliseconds=1)
    msg = normalize_message({"role": "user", "content": "x", "thread_id": "t1"})
    assert uuid.UUID(msg.id).version == 4
    assert msg.created_at.tzinfo is not None
    assert msg.created_at >= before.replace(microsecond=before.microsecond // 1000 * 1000)


def test_missing_created_at_steps_strictly_by_one_ms_in_list_order() -> None:
    msgs = normalize_messages([{"role": "user", "content": str(i), "thread_id": "t1"} for i in range(50)])
    stamps = [m.created_at for m in msgs]
    assert all(b - a == timedelta(milliseconds=1) for a, b in itertools.pairwise(stamps))
    later = normalize_messages([{"role": "user", "content": "next", "thread_id": "t1"}])
    assert later[0].created_at > stamps[-1]


def test_given_created_at_is_kept_and_others_are_generated() -> None:
    msgs = normalize_messages(
        [
            {"role": "user", "content": "a", "thread_id": "t", "createdAt": "2024-01-01T00:00:05.123Z"},
            {"role": "user", "content": "b", "thread_id": "t"},
        ]
    )
    assert msgs[0].created_at == datetime(2024, 1, 1, 0, 0, 5, 123000, tzinfo=UTC)
    assert msgs[1].created_at.year >= 2024


@pytest.mark.parametrize(
    "created_at",
    [datetime(2024, 1, 1, 12, 0), "2024-01-01T12:00:00", "2024-01-01 12:00:00"],
)
def test_naive_datetimes_are_rejected(created_at: Any) -> None:
    with pytest.raises(ValidationError, match="timezone-aware"):
        normalize_message({"role": "user", "content": "x", "thread_id": "t", "created_at": created_at})


def test_aware_datetimes_are_converted_to_utc_milliseconds() -> None:
    plus_two = timezone(timedelta(hours=2))
    msg = normalize_message(
        {
            "role": "user",
            "content": "x",
            "thread_id": "t",
            "created_at": datetime(2024, 1, 1, 14, 0, 0, 123456, tzinfo=plus_two),
        }
    )
    assert msg.created_at == datetime(2024, 1, 1, 12, 0, 0, 123000, tzinfo=UTC)
    assert msg.model_dump(mode="json")["created_at"] == "2024-01-01T12:00:00.123Z"


@pytest.mark.parametrize("role", ["user", "assistant", "system", "signal"])
def test_the_four_roles_are_accepted(role: str) -> None:
    assert normalize_message({"role": role, "content": "x", "thread_id": "t"}).role == role


def test_unknown_role_is_rejected() -> None:
    with pytest.raises(ValidationError, match="role"):
        normalize_message({"role": "robot", "content": "x", "thread_id": "t"})


def test_camel_case_input_and_dump_round_trip() -> None:
    raw = {
        "id": "m1",
        "role": "assistant",
        "createdAt": "2024-01-01T00:00:00.000Z",
        "threadId": "t1",
        "resourceId": "r1",
        "type": "v2",
        "content": v2(
            [
                {
                    "type": "tool-invocation",
                    "toolInvocation": {
                        "state": "call",
                        "toolCallId": "c1",
                        "toolName": "weather",
                        "args": {"city": "Oslo"},
                    },
                    "providerMetadata": {"openai": {"x": 1}},
                    "createdAt": 1704067200000,
                }
            ],
            providerMetadata={"p": 1},
        ),
    }
    msg = normalize_message(raw)
    assert msg.thread_id == "t1"
    assert msg.resource_id == "r1"
    part = msg.content.parts[0]
    assert isinstance(part, ToolInvocationPart)
    assert part.tool_invocation.tool_call_id == "c1"
    assert part.created_at == 1704067200000
    assert msg.model_dump(mode="json", by_alias=True) == raw
    assert MastraDBMessage.model_validate(msg.model_dump(mode="json")) == msg


@pytest.mark.parametrize(
    "state",
    [
        "partial-call",
        "call",
        "result",
        "approval-requested",
        "approval-responded",
        "output-error",
        "output-denied",
    ],
)
def test_every_tool_invocation_state_is_accepted(state: str) -> None:
    part = {
        "type": "tool-invocation",
        "tool_invocation": {"state": state, "tool_call_id": "c", "tool_name": "t"},
    }
    msg = normalize_message({"role": "assistant", "thread_id": "t", "content": v2([part])})
    assert isinstance(msg.content.parts[0], ToolInvocationPart)
    assert msg.content.parts[0].tool_invocation.state == state


def test_unknown_tool_invocation_state_is_rejected() -> None:
    part = {
        "type": "tool-invocation",
        "tool_invocation": {"state": "done", "tool_call_id": "c", "tool_name": "t"},
    }
    with pytest.raises(ValidationError):
        normalize_message({"role": "assistant", "thread_id": "t", "content": v2([part])})


def test_unknown_part_types_and_extra_keys_round_trip_verbatim() -> None:
    parts = [
        {"type": "future-thing", "payload": {"nested": [1, None, "x"]}, "weirdKey": True},
        {"type": "data-weather", "id": "d1", "data": {"temp": 21.5, "unit": None}},
        {"type": "text", "text": "hi", "state": "done"},
        {"type": "step-start"},
        {"type": "reasoning", "reasoning": "because", "details": [{"type": "text", "text": "because"}]},
        {"type": "file", "mimeType": "image/png", "data": "aGk="},
        {"type": "source", "source": {"sourceType": "url", "id": "s", "url": "https://example.org"}},
        {"type": "source-url", "sourceId": "s2", "url": "https://example.org/2"},
        {"type": "source-document", "sourceId": "s3", "mediaType": "application/pdf", "title": "Doc"},
        {"type": "error", "error": "boom"},
    ]
    content = v2(parts, metadata={"k": None}, annotations=[{"a": 1}], somethingNew=[1])
    msg = normalize_message(
        {"id": "m", "role": "assistant", "thread_id": "t", "created_at": T0, "content": content}
    )
    assert isinstance(msg.content.parts[0], UnknownPart)
    assert isinstance(msg.content.parts[1], DataPart)
    assert isinstance(msg.content.parts[4], ReasoningPart)
    assert msg.model_dump(mode="json", by_alias=True)["content"] == content
    again = MastraDBMessage.model_validate_json(msg.model_dump_json())
    assert again == msg


def test_explicit_null_is_kept_but_unset_optionals_are_not_dumped() -> None:
    content = MessageContentV2.model_validate({"parts": [], "metadata": None})
    assert content.model_dump() == {"format": 2, "parts": [], "metadata": None}
    tool = {
        "type": "tool-invocation",
        "tool_invocation": {"state": "result", "tool_call_id": "c", "tool_name": "t"},
    }
    dumped = MessageContentV2.model_validate({"parts": [tool]}).model_dump()
    assert "result" not in dumped["parts"][0]["tool_invocation"]
    tool["tool_invocation"]["result"] = None  # type: ignore[index]
    dumped = MessageContentV2.model_validate({"parts": [tool]}).model_dump()
    assert dumped["parts"][0]["tool_invocation"]["result"] is None


def test_v1_part_list_with_tool_call_and_result_in_one_message() -> None:
    msg = normalize_message(
        {
            "role": "assistant",
            "thread_id": "t",
            "type": "tool-call",
            "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool-call", "toolCallId": "c1", "toolName": "weather", "args": {"city": "Oslo"}},
                {"type": "tool-result", "toolCallId": "c1", "toolName": "weather", "result": {"temp": 3}},
            ],
        }
    )
    assert msg.type == "v2"
    text, tool = msg.content.parts
    assert text == TextPart(text="Let me check.")
    assert isinstance(tool, ToolInvocationPart)
    assert tool.tool_invocation.state == "result"
    assert tool.tool_invocation.args == {"city": "Oslo"}
    assert tool.tool_invocation.result == {"temp": 3}


def test_role_tool_message_is_folded_into_the_matching_assistant_call() -> None:
    msgs = normalize_messages(
        [
            {"id": "u", "role": "user", "thread_id": "t", "content": "weather?"},
            {
                "id": "a",
                "role": "assistant",
                "thread_id": "t",
                "content": [
                    {
                        "type": "tool-call",
                        "toolCallId": "c1",
                        "toolName": "weather",
                        "args": {"city": "Oslo"},
                    },
                    {"type": "tool-call", "toolCallId": "c2", "toolName": "time", "args": {}},
                ],
            },
            {
                "id": "tool-msg",
                "role": "tool",
                "thread_id": "t",
                "content": [
                    {"type": "tool-result", "toolCallId": "c2", "toolName": "time", "result": "noon"},
                    {"type": "tool-result", "toolCallId": "c1", "toolName": "weather", "result": {"temp": 3}},
                ],
            },
        ]
    )
    assert [m.id for m in msgs] == ["u", "a"]
    calls = [p.tool_invocation for p in msgs[1].content.parts if isinstance(p, ToolInvocationPart)]
    assert [(c.tool_call_id, c.state, c.result) for c in calls] == [
        ("c1", "result", {"temp": 3}),
        ("c2", "result", "noon"),
    ]


def test_tool_result_without_a_matching_call_becomes_an_assistant_result_part() -> None:
    msgs = normalize_messages(
        [
            {
                "id": "orphan",
                "role": "tool",
                "thread_id": "t",
                "content": [{"type": "tool-result", "toolCallId": "zz", "toolName": "x", "result": 1}],
            }
        ]
    )
    assert len(msgs) == 1
    assert msgs[0].id == "orphan"
    assert msgs[0].role == "assistant"
    part = msgs[0].content.parts[0]
    assert isinstance(part, ToolInvocationPart)
    assert (part.tool_invocation.tool_call_id, part.tool_invocation.state, part.tool_invocation.result) == (
        "zz",
        "result",
        1,
    )


def test_role_tool_with_text_content_is_rejected() -> None:
    with pytest.raises(ValidationError, match="tool"):
        normalize_messages([{"role": "tool", "thread_id": "t", "content": "result as text"}])


def test_v1_reasoning_and_image_parts_are_converted() -> None:
    msg = normalize_message(
        {
            "role": "assistant",
            "thread_id": "t",
            "content": [
                {"type": "reasoning", "text": "thinking"},
                {"type": "image", "image": "aGk=", "mimeType": "image/png"},
            ],
        }
    )
    reasoning, image = msg.content.parts
    assert isinstance(reasoning, ReasoningPart)
    assert reasoning.reasoning == "thinking"
    assert image.type == "file"
    assert image.model_dump() == {"type": "file", "mime_type": "image/png", "data": "aGk="}


def test_normalize_fills_thread_and_resource_defaults_only_when_missing() -> None:
    msgs = normalize_messages(
        [
            {"role": "user", "content": "a"},
            {"role": "user", "content": "b", "threadId": "own", "resourceId": "mine"},
        ],
        thread_id="t",
        resource_id="r",
    )
    assert [(m.thread_id, m.resource_id) for m in msgs] == [("t", "r"), ("own", "mine")]


def test_message_text_prefers_content_then_joins_nonempty_text_parts_with_newlines() -> None:
    def msg(content: dict[str, Any]) -> MastraDBMessage:
        return normalize_message({"role": "user", "thread_id": "t", "content": content})

    parts = [
        {"type": "text", "text": "one"},
        {"type": "text", "text": ""},
        {
            "type": "tool-invocation",
            "tool_invocation": {"state": "call", "tool_call_id": "c", "tool_name": "t"},
        },
        {"type": "text", "text": "two"},
    ]
    assert message_text(msg(v2(parts, content="shortcut"))) == "shortcut"
    assert message_text(msg(v2(parts, content="   "))) == "one\ntwo"
    assert message_text(msg(v2(parts))) == "one\ntwo"
    assert message_text(msg(v2([{"type": "step-start"}]))) == ""
    assert render_text(msg(v2(parts))) == "one  two"
    assert render_text(msg(v2(parts, content="shortcut"))) == "shortcut"
    assert render_text(msg(v2([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]))) == "a b"


def test_message_text_never_trims_or_rewrites_text() -> None:
    text = "  keep\n\tthis  "
    assert message_text(normalize_message({"role": "user", "thread_id": "t", "content": text})) == text


@given(
    text=st.text(),
    metadata=st.dictionaries(
        st.text(min_size=1, max_size=8),
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(),
        max_size=4,
    ),
)
def test_json_round_trip_is_lossless(text: str, metadata: dict[str, Any]) -> None:
    msg = normalize_message(
        {
            "role": "user",
            "thread_id": "t",
            "created_at": T0,
            "content": {
                "format": 2,
                "content": text,
                "parts": [{"type": "text", "text": text}],
                "metadata": metadata,
            },
        }
    )
    for by_alias in (False, True):
        again = MastraDBMessage.model_validate_json(msg.model_dump_json(by_alias=by_alias))
        assert again == msg
        assert again.content.metadata == metadata
