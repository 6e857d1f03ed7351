"""An agent loop over mastra-memory's processors (docs/memory.md "An agent turn").

Each turn: the memory input processors (working memory, history, semantic recall) and yours build what the
model receives; the model may call ``updateWorkingMemory``; your output processors and then memory's store
the turn and index it. ``ScriptedModel`` needs no LLM (a deterministic function of the messages it
receives); ``OpenAIChatModel`` calls any OpenAI-compatible chat-completions endpoint with httpx.

    python examples/agent_loop.py          # scripted, offline
    OPENAI_API_KEY=... python examples/agent_loop.py   # the same turns with a real model
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from mastra_memory.memory import Memory, MessageList

#: A model: (chat messages, tool definitions) -> {"content": str, "tool_calls": [{id, name, arguments}]}.
Model = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Awaitable[dict[str, Any]]]


def chat_messages(turn: MessageList) -> list[dict[str, Any]]:
    """What the model receives: the system messages, then every message of the list as chat text."""
    out = [{"role": "system", "content": m.content.content or ""} for m in turn.system_messages]
    for m in turn.all():
        text = m.content.content or " ".join(p.text for p in m.content.parts if p.type == "text")
        if text:
            out.append({"role": m.role if m.role in ("user", "assistant") else "assistant", "content": text})
    return out


@dataclass
class Turn:
    """One turn's record: what the model received and what it answered."""

    prompt: list[dict[str, Any]]
    reply: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


async def run_turn(
    memory: Memory,
    model: Model,
    thread_id: str,
    resource_id: str,
    text: str,
    memory_config: dict[str, Any] | None = None,
    input_processors: Sequence[Any] = (),
    output_processors: Sequence[Any] = (),
    max_steps: int = 4,
) -> Turn:
    """Run one user message through the processors and the model (Mastra's order, docs/spec.md §5.12)."""
    ctx = {
        "MastraMemory": {
            "thread": {"id": thread_id, "resource_id": resource_id},
            "resource_id": resource_id,
            "memory_config": memory_config,
        }
    }
    # No created_at: the library's clock stamps messages strictly increasing (1 ms apart), so a turn's
    # messages never tie with the previous turn's in the history order.
    user = {
        "id": str(uuid.uuid4()),
        "role": "user",
        "content": text,
        "thread_id": thread_id,
        "resource_id": resource_id,
    }
    turn = MessageList([user], thread_id=thread_id, resource_id=resource_id)
    for p in [*memory.get_input_processors(input_processors, ctx), *input_processors]:
        turn = await p.process_input(turn.all(), turn, None, request_context=ctx)
    tools = memory.get_tools(ctx)
    prompt = chat_messages(turn)
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    reply = ""
    for _ in range(max_steps):
        answer = await model(prompt, [t.openai_tool() for t in tools.values()])
        if not answer.get("tool_calls"):
            reply = answer.get("content") or ""
            break
        for call in answer["tool_calls"]:
            tool = tools.get(call["name"])
            try:
                result: Any = (
                    await tool.execute(call["arguments"], ctx) if tool else {"error": "unknown tool"}
                )
            except ValueError as exc:  # a ValidationError goes back to the model, as its tool result
                result = {"error": str(exc)}
            calls.append({**call, "result": result})
            parts.append(
                {
                    "type": "tool-invocation",
                    "toolInvocation": {
                        "state": "result",
                        "toolCallId": call["id"],
                        "toolName": call["name"],
                        "args": call["arguments"],
                        "result": result,
                    },
                }
            )
            prompt.append({"role": "assistant", "content": f"[called {call['name']}: {json.dumps(result)}]"})
    response = {
        "id": str(uuid.uuid4()),
        "role": "assistant",
        "thread_id": thread_id,
        "resource_id": resource_id,
        "content": {"format": 2, "parts": [*parts, {"type": "text", "text": reply}]},
    }
    turn.add([response], source="response")
    done: Any = [response]
    for p in [*output_processors, *memory.get_output_processors(output_processors, ctx)]:
        out = await p.process_output_result(done, turn, None, request_context=ctx)
        done = out.from_source("response") if isinstance(out, MessageList) else out
    return Turn(prompt=prompt, reply=reply, tool_calls=calls)


_NAME = re.compile(r"my name is (\w+)", re.IGNORECASE)
_FIRST_NAME = re.compile(r"\*\*First Name\*\*: *(\w+)")


async def scripted_model(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """A deterministic stand-in for an LLM, a function of the messages it receives.

    "my name is X" -> an ``updateWorkingMemory`` call with X filled into the template, then a greeting;
    "what is my name" -> the name from the working-memory system message; "what did I say about W" -> the
    earlier user message mentioning W, found in the history or recalled context it received.
    """
    last = messages[-1]["content"]
    system = "\n".join(m["content"] for m in messages if m["role"] == "system")
    asked = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    if (name := _NAME.search(asked)) and not last.startswith("[called"):
        template = re.search(r"<working_memory>\n(.*?)\n</working_memory>", system, re.DOTALL)
        memory = (template.group(1) if template else "# User Information\n- **First Name**:").replace(
            "**First Name**:", f"**First Name**: {name.group(1)}", 1
        )
        if any(t["function"]["name"] == "updateWorkingMemory" for t in tools):
            call = {"id": "call-1", "name": "updateWorkingMemory", "arguments": {"memory": memory}}
            return {"content": None, "tool_calls": [call]}
    if name:
        return {"content": f"Nice to meet you, {name.group(1)}."}
    if "what is my name" in asked.lower():
        found = _FIRST_NAME.search(system)
        return {"content": f"Your name is {found.group(1)}." if found else "I don't know your name yet."}
    if about := re.search(r"what did i say about (\w+)", asked, re.IGNORECASE):
        word = about.group(1).lower()
        earlier = [
            m["content"] for m in messages[:-1] if word in m["content"].lower() and m["role"] != "system"
        ]
        recalled = [line for line in system.splitlines() if word in line.lower() and "User:" in line]
        if earlier or recalled:
            return {"content": f"You said: {(earlier or recalled)[0]}"}
        return {"content": f"You never mentioned {word}."}
    return {"content": f"Noted: {asked}"}


class OpenAIChatModel:
    """An OpenAI-compatible chat-completions model over httpx (``OPENAI_BASE_URL``, ``OPENAI_MODEL``)."""

    def __init__(self, api_key: str, model: str = "gpt-4o-mini", base_url: str = "https://api.openai.com/v1"):
        self.model = model
        self.client = httpx.AsyncClient(
            base_url=base_url, headers={"Authorization": f"Bearer {api_key}"}, timeout=60
        )

    async def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            body["tools"] = tools
        resp = await self.client.post("/chat/completions", json=body)
        resp.raise_for_status()
        message = resp.json()["choices"][0]["message"]
        calls = [
            {
                "id": c["id"],
                "name": c["function"]["name"],
                "arguments": json.loads(c["function"]["arguments"]),
            }
            for c in message.get("tool_calls") or []
        ]
        return {"content": message.get("content"), "tool_calls": calls}

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self.client.aclose()


DEMO_OPTIONS = {
    "lastMessages": 4,
    "semanticRecall": {"topK": 2, "messageRange": 0, "scope": "resource"},
    "workingMemory": {"enabled": True},
}
DEMO_TURNS = [
    ("t1", "Hi, my name is Ada."),
    ("t1", "My cat Tofu needs a vet appointment on Friday."),
    ("t1", "I also want to plan a trip to Lisbon."),
    ("t2", "What is my name?"),
    ("t2", "What did I say about Tofu?"),
]


async def main(model: Model | None = None) -> list[Turn]:
    """The demo conversation over two threads of one user, printed turn by turn."""
    memory = Memory(storage="sqlite:///:memory:", options=DEMO_OPTIONS)  # embedder: local/wordllama
    key = os.environ.get("OPENAI_API_KEY")
    real = (
        OpenAIChatModel(
            key,
            os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
            os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"),
        )
        if model is None and key
        else None
    )
    turns = []
    try:
        for thread, text in DEMO_TURNS:
            done = await run_turn(memory, model or real or scripted_model, thread, "user-1", text)
            print(f"[{thread}] user: {text}\n[{thread}] agent: {done.reply}")
            turns.append(done)
    finally:
        if real is not None:
            await real.aclose()
        await memory.close()
    return turns


if __name__ == "__main__":
    asyncio.run(main())
