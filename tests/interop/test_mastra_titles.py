"""Thread titles as Mastra 1.31 makes them, proved by running Mastra (issue 27; docs/spec.md §5.9).

Both sides call one local chat-completions server (tests/models/chat_server.py): Mastra's Agent with a
Memory whose ``generateTitle`` names a title model on that server (its own model too), and this project's
``Memory`` with the same ``generateTitle``, saving the same turns (the user's message and the agent's
reply). Compared: after which turn the title model is called, what it is sent (system instructions, then the
transcript as the user message), the stored title, and that a pinned title is left alone. One Node process
answers the whole module (``mastra_runner``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage

from ..models.chat_server import ChatServer
from .mastra_runner import run_mastra

AGENT_REPLY = "Sure, Kyoto it is."
TITLE_REPLY = "<think>the user plans a trip</think>\n  Trip to Kyoto  "
RESOURCE = "resource-1"
PINNED = {"title": "My own name", "metadata": {"titlePinned": True}}

CASES: dict[str, dict[str, Any]] = {
    "default": {"options": {}, "turns": ["Plan my trip to Kyoto", "Add Osaka"]},
    "min-messages": {
        "options": {"instructions": "Name this chat.", "minMessages": 3},
        "turns": ["Plan my trip to Kyoto", "Add Osaka", "And Nara"],
    },
    "pinned": {"options": {}, "turns": ["Plan my trip to Kyoto"], "thread": PINNED},
}


def reply(body: dict[str, Any]) -> str:
    agent = any(m.get("content") == "AGENT" for m in body["messages"])
    return AGENT_REPLY if agent else TITLE_REPLY


def _text(content: Any) -> Any:
    # The AI SDK may send a text as a list of parts; a text is a text.
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
        return "".join(p["text"] for p in content)
    return content


def title_calls(server: ChatServer, model: str) -> list[list[dict[str, Any]]]:
    return [
        [{"role": m["role"], "content": _text(m["content"])} for m in r["messages"]]
        for r in server.requests
        if r["model"] == model
    ]


def generate_title(name: str, url: str, side: str) -> dict[str, Any]:
    return {"model": {"id": f"local/{side}-{name}", "url": url, "apiKey": "test"}, **CASES[name]["options"]}


async def python_side(server: ChatServer) -> dict[str, Any]:
    answer: dict[str, Any] = {}
    for name, case in CASES.items():
        options = {"lastMessages": 10, "generateTitle": generate_title(name, server.url, "py")}
        memory = Memory(storage=SQLiteStorage(":memory:"), options=options)
        thread = case.get("thread", {})
        await memory.create_thread(
            RESOURCE, name, title=thread.get("title", ""), metadata=thread.get("metadata")
        )
        titles = []
        for turn, text in enumerate(case["turns"]):
            user = {
                "id": f"{name}-u{turn}",
                "thread_id": name,
                "resource_id": RESOURCE,
                "role": "user",
                "content": text,
            }
            agent = {**user, "id": f"{name}-a{turn}", "role": "assistant", "content": AGENT_REPLY}
            await memory.save_messages([user, agent])
            await memory.settled(timeout=30)
            stored = await memory.get_thread_by_id(name)
            assert stored is not None
            titles.append(stored.title)
        stored = await memory.get_thread_by_id(name)
        assert stored is not None
        answer[name] = {"titles": titles, "metadata": stored.metadata}
    return answer


@pytest.fixture(scope="module")
def exchange() -> Any:
    server = ChatServer(reply=reply)
    try:
        request = {
            "url": server.url,
            "cases": [
                {
                    "name": name,
                    "threadId": name,
                    "resourceId": RESOURCE,
                    "generateTitle": generate_title(name, server.url, "mastra"),
                    "turns": case["turns"],
                    **({"thread": case["thread"], "settleMs": 600} if "thread" in case else {}),
                }
                for name, case in CASES.items()
            ],
        }
        mastra = run_mastra(request, script="titles.mjs")
        yield server, mastra
    finally:
        server.close()


@pytest.fixture(scope="module")
def python(exchange: Any) -> dict[str, Any]:
    server, _ = exchange
    return asyncio.run(python_side(server))


def _untitled(title: Any) -> str:
    return title or ""  # Mastra's agent leaves a new thread's title unset; here it is ""


@pytest.mark.parametrize("name", list(CASES))
def test_the_same_title_after_the_same_turn(exchange: Any, python: dict[str, Any], name: str) -> None:
    _, mastra = exchange
    assert [_untitled(t) for t in python[name]["titles"]] == [_untitled(t) for t in mastra[name]["titles"]]


@pytest.mark.parametrize("name", list(CASES))
def test_the_title_model_is_called_as_often_with_the_same_transcript(
    exchange: Any, python: dict[str, Any], name: str
) -> None:
    server, _ = exchange
    theirs = title_calls(server, f"mastra-{name}")
    ours = title_calls(server, f"py-{name}")
    assert len(ours) == len(theirs)
    # The structure: the instructions as the system message, the transcript as the one user message.
    assert [[m["role"] for m in call] for call in ours] == [[m["role"] for m in call] for call in theirs]
    assert [call[1:] for call in ours] == [call[1:] for call in theirs]
    if "instructions" in CASES[name]["options"]:
        assert ours == theirs  # given instructions: the very same request


def test_what_was_compared(exchange: Any, python: dict[str, Any]) -> None:
    server, mastra = exchange
    # Mastra titles after the first turn, from user message and reply; minMessages 3 waits a turn.
    assert mastra["default"]["titles"] == ["Trip to Kyoto", "Trip to Kyoto"]
    assert (
        title_calls(server, "mastra-default")[0][1]["content"]
        == f"User: Plan my trip to Kyoto\nAssistant: {AGENT_REPLY}"
    )
    assert _untitled(mastra["min-messages"]["titles"][0]) == ""
    assert mastra["min-messages"]["titles"][1:] == ["Trip to Kyoto", "Trip to Kyoto"]
    # A pinned title is untouched on both sides, its pin kept.
    assert mastra["pinned"]["titles"] == python["pinned"]["titles"] == ["My own name"]
    assert mastra["pinned"]["metadata"]["titlePinned"] is python["pinned"]["metadata"]["titlePinned"] is True
    assert title_calls(server, "mastra-pinned") == title_calls(server, "py-pinned") == []
