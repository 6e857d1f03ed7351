"""Helpers of the observational-memory tests: one agent turn through Memory's processors (docs/spec.md
§5.12, §5.14) and a scripted Observer/Reflector whose answers are a function of what they were sent."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mastra_memory.memory import Memory, MessageList
from mastra_memory.models import ChatMessage

_SAID = re.compile(r"^\*\*User \((\d\d:\d\d)\):\*\* (.*)$", re.M)


def observer_reply(messages: Sequence[ChatMessage]) -> str:
    """An Observer that notes every user line it was shown (or, asked to reflect, keeps the 🔴 lines)."""
    request = str(messages[-1]["content"])
    if request.startswith("## Observations to Condense"):
        kept = [line for line in request.splitlines() if "🔴" in line]
        return "<observations>\nDate: Dec 2, 2026\n" + "\n".join(kept[-3:]) + "\n</observations>"
    new = request.split("---")[0]
    lines = [f"* 🔴 ({hh}) User said: {text}" for hh, text in _SAID.findall(new)]
    return (
        "<observations>\nDate: Dec 2, 2026\n"
        + "\n".join(lines)
        + "\n</observations>\n<current-task>\nchatting\n</current-task>"
    )


@dataclass
class Turn:
    prompt: list[dict[str, str]]
    user_id: str
    reply_id: str


def context(thread_id: str, resource_id: str, memory_config: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "MastraMemory": {
            "thread": {"id": thread_id, "resource_id": resource_id},
            "resource_id": resource_id,
            "memory_config": memory_config,
        }
    }


async def turn(memory: Memory, thread_id: str, resource_id: str, text: str, reply: str | None = None) -> Turn:
    """One user message in, one assistant reply out, through the input and output processors."""
    ctx = context(thread_id, resource_id)
    user_id, reply_id = str(uuid.uuid4()), str(uuid.uuid4())
    user = {
        "id": user_id,
        "role": "user",
        "content": text,
        "thread_id": thread_id,
        "resource_id": resource_id,
    }
    message_list = MessageList([user], thread_id=thread_id, resource_id=resource_id)
    for p in memory.get_input_processors(request_context=ctx):
        message_list = await p.process_input(message_list.all(), message_list, None, request_context=ctx)
    prompt = [{"role": "system", "content": m.content.content or ""} for m in message_list.system_messages]
    prompt += [{"role": m.role, "content": m.content.content or ""} for m in message_list.all()]
    answer = {
        "id": reply_id,
        "role": "assistant",
        "content": reply or f"ok: {text}",
        "thread_id": thread_id,
        "resource_id": resource_id,
    }
    message_list.add([answer], source="response")
    done: Any = [answer]
    for p in memory.get_output_processors(request_context=ctx):
        out = await p.process_output_result(done, message_list, None, request_context=ctx)
        done = out.from_source("response") if isinstance(out, MessageList) else out
    return Turn(prompt, user_id, reply_id)


def said(prompt: list[dict[str, str]]) -> list[str]:
    """The non-system messages of a prompt."""
    return [m["content"] for m in prompt if m["role"] != "system"]


def system(prompt: list[dict[str, str]]) -> str:
    return "\n".join(m["content"] for m in prompt if m["role"] == "system")
