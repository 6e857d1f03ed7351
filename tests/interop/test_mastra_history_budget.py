"""Mastra's token budget on history and its ``MemoryInputFilter``, run by Mastra itself and by this project
on the same conversations (issue 26 section 2; docs/spec.md §5.12), turn by turn through each side's
memory processors (``mastra/history_budget.mjs`` for Mastra, over ``@mastra/libsql``):

* the same conversation and budget: every turn the model receives the same messages, and the thread stores
  the same ``memoryTokenLimiter`` boundary (key, shape, values);
* a client that resends the whole conversation, under the stored ids or under new ones: both sides store
  it once, and the model receives the same messages.

Token counts are this project's (``message_tokens``) on both sides: Mastra's memory token counter is
replaced by one that answers with them, so what is compared is the budget's rules, not two tokenizers
(Mastra estimates with ``tokenx`` **[Δ]** §5.12).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mastra_memory.memory import Memory
from mastra_memory.memory.message_list import MessageList
from mastra_memory.memory.processors.history_budget import BOUNDARY_KEY, message_cost
from mastra_memory.messages import MastraDBMessage, TextPart, ToolInvocationPart
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.timestamps import canonical_timestamp

from .mastra_runner import run_mastra

SCRIPT = "history_budget.mjs"
T0 = datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
]


def stamp(n: int) -> str:
    return (T0 + timedelta(seconds=n)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def message(mid: str, role: str, text: str, n: int) -> dict[str, Any]:
    """A stored-form (format 2) message, as a client that sends ids and times would send it."""
    return {
        "id": mid,
        "role": role,
        "threadId": "t",
        "resourceId": "r",
        "createdAt": stamp(n),
        "type": "v2",
        "content": {"format": 2, "parts": [{"type": "text", "text": text}], "content": text},
    }


def sentence(n: int, length: int) -> str:
    return " ".join(WORDS[(n + i) % len(WORDS)] for i in range(length))


def budget_case(name: str, options: dict[str, Any], turns: int, lengths: tuple[int, int]) -> dict[str, Any]:
    """``turns`` turns: each sends only its new user message; the reply follows one second later."""
    return {
        "name": name,
        "options": options,
        "turns": [
            {
                "input": [message(f"u{n}", "user", sentence(n, lengths[0]), 2 * n)],
                "reply": message(f"a{n}", "assistant", sentence(n + 7, lengths[1]), 2 * n + 1),
            }
            for n in range(1, turns + 1)
        ],
    }


def resend_case(name: str, new_ids: bool) -> dict[str, Any]:
    """Three turns of a client that resends the whole conversation each time (as ``useChat`` does), the
    echoed messages under their stored ids or under ids of its own."""
    turns = []
    sent: list[dict[str, Any]] = []
    for n in range(1, 4):
        sent.append(message(f"u{n}", "user", sentence(n, 5), 2 * n))
        turns.append(
            {"input": list(sent), "reply": message(f"a{n}", "assistant", sentence(n + 3, 5), 2 * n + 1)}
        )
        echo = message(f"a{n}", "assistant", sentence(n + 3, 5), 2 * n + 1)
        if new_ids:
            sent = [{**m, "id": f"client-{m['id']}"} for m in sent]
            echo["id"] = f"client-a{n}"
        sent.append(echo)
    return {"name": name, "options": {"lastMessages": 10}, "turns": turns}


def client_tool_case() -> dict[str, Any]:
    """A client-side tool: the reply asks for it (a pending call), the client sends the outcome back on the
    assistant message it echoes (its text edited), then with the next user message."""
    call = {"state": "call", "toolCallId": "c1", "toolName": "confirm", "args": {"q": "ok?"}}
    asking = message("a1", "assistant", "Let me check.", 3)
    asking["content"]["parts"].append({"type": "tool-invocation", "toolInvocation": call})
    answered = message("a1", "assistant", "Let me check (edited).", 3)
    answered["content"]["parts"].append(
        {"type": "tool-invocation", "toolInvocation": {**call, "state": "result", "result": {"yes": True}}}
    )
    u1, u2 = message("u1", "user", "Book it.", 2), message("u2", "user", "Thanks.", 6)
    return {
        "name": "client-tool",
        "options": {"lastMessages": 10},
        "turns": [
            {"input": [u1], "reply": asking},
            {"input": [u1, answered], "reply": None},
            {"input": [u1, answered, u2], "reply": message("a2", "assistant", "Booked.", 7)},
        ],
    }


def retained_echo_case() -> dict[str, Any]:
    """``retainFullInput``: the client's edited echoes of stored messages (other text, another time) are kept
    in the input, and the stored copies stay what they were."""
    u1, a1 = message("u1", "user", "Hello there.", 2), message("a1", "assistant", "Hi.", 3)
    edited_u1 = {**message("u1", "user", "Hello there, edited.", 2), "createdAt": stamp(40)}
    edited_a1 = message("a1", "assistant", "Hi, edited.", 3)
    return {
        "name": "retained-echo",
        "options": {"lastMessages": 10, "retainFullInput": True},
        "turns": [
            {"input": [u1], "reply": a1},
            {"input": [edited_u1, edited_a1, message("u2", "user", "More.", 6)], "reply": None},
        ],
    }


CASES = [
    budget_case("budget", {"messageHistory": {"maxTokens": 120, "atMaxRemoveTokens": 50}}, 10, (6, 8)),
    budget_case("default-quarter", {"messageHistory": {"maxTokens": 150}}, 10, (9, 5)),
    budget_case("count-cap", {"messageHistory": {"maxTokens": 200}, "lastMessages": 3}, 6, (4, 4)),
    budget_case("tight", {"messageHistory": {"maxTokens": 60, "atMaxRemoveTokens": 0}}, 8, (10, 10)),
    resend_case("resent", new_ids=False),
    resend_case("resent-new-ids", new_ids=True),
    client_tool_case(),
    retained_echo_case(),
]


def costs(case: dict[str, Any]) -> dict[str, int | float]:
    cost = message_cost()
    out: dict[str, int | float] = {}
    for turn in case["turns"]:
        for raw in [*turn["input"], *([turn["reply"]] if turn["reply"] else [])]:
            out[raw["id"]] = cost(MastraDBMessage.model_validate(raw))
    return out


def summary(m: MastraDBMessage) -> dict[str, Any]:
    """What the comparison reads of a stored message: its id, role, time, text and tool calls' states."""
    return {
        "id": m.id,
        "role": m.role,
        "createdAt": canonical_timestamp(m.created_at),
        "text": " ".join(p.text for p in m.content.parts if isinstance(p, TextPart)),
        "tools": [p.tool_invocation.state for p in m.content.parts if isinstance(p, ToolInvocationPart)],
    }


async def ours(case: dict[str, Any]) -> dict[str, Any]:
    storage = SQLiteStorage(":memory:")
    memory = Memory(storage=storage, options=case["options"])
    await memory.create_thread("r", "t")
    turns = []
    for turn in case["turns"]:
        request = {"MastraMemory": {"thread": {"id": "t"}, "resourceId": "r"}}
        message_list = MessageList(turn["input"], thread_id="t", resource_id="r")
        for p in memory.get_input_processors(request_context=request):
            message_list = await p.process_input(message_list.all(), message_list, request_context=request)
        prompt = [m.id for m in message_list.all()]
        replies = [turn["reply"]] if turn["reply"] else []
        message_list.add(replies, source="response")
        for p in memory.get_output_processors(request_context=request):
            await p.process_output_result(replies, message_list, request_context=request)
        thread = await storage.get_thread_by_id("t")
        assert thread is not None
        turns.append({"prompt": prompt, "boundary": (thread.metadata or {}).get(BOUNDARY_KEY)})
    rows = (await storage.list_messages("t", per_page=False)).messages
    await memory.close()
    return {"turns": turns, "stored": [summary(m) for m in rows]}


@pytest.fixture(scope="module")
def mastra() -> dict[str, Any]:
    """Mastra's answers to every case: one Node process for the module."""
    return run_mastra({"cases": [{**case, "costs": costs(case)} for case in CASES]}, script=SCRIPT)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_same_turns_on_both_sides(mastra: dict[str, Any], case: dict[str, Any]) -> None:
    theirs = mastra[case["name"]]
    mine = asyncio.run(ours(case))
    for n, (a, b) in enumerate(zip(mine["turns"], theirs["turns"], strict=True), start=1):
        assert a["prompt"] == b["prompt"], f"turn {n}: the model received other messages"
        assert a["boundary"] == b["boundary"], f"turn {n}: another boundary was stored"
    assert mine["stored"] == theirs["stored"]


def test_the_cases_exercise_what_they_are_about(mastra: dict[str, Any]) -> None:
    # The budget cases trim and store a boundary; the boundary moves; the resent ones store each message once.
    for name in ("budget", "default-quarter", "tight"):
        boundaries = [t["boundary"] for t in mastra[name]["turns"] if t["boundary"]]
        assert boundaries, name
        assert len({b["createdAt"] for b in boundaries}) > 1, name
    assert mastra["default-quarter"]["turns"][-1]["boundary"]["atMaxRemoveTokens"] == 37.5
    assert max(len(t["prompt"]) for t in mastra["count-cap"]["turns"]) == 4
    for name in ("resent", "resent-new-ids"):
        assert len(mastra[name]["stored"]) == 6, name
    assert [m["text"] for m in mastra["retained-echo"]["stored"]] == ["Hello there.", "Hi.", "More."]
    # The client's outcome fills the stored call; the stored text stays.
    [a1] = [m for m in mastra["client-tool"]["stored"] if m["id"] == "a1"]
    assert a1["text"] == "Let me check."
    assert a1["tools"] == ["result"]
