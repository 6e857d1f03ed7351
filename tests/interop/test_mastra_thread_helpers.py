"""Mastra 1.31's thread helpers, run by Mastra and by this project on the same data (issue 26, section 2;
docs/spec.md §5.11): the clone lineage helpers (``isClone``, ``getSourceThread``, ``listClones``,
``getCloneHistory``), ``listMessagesByResourceId``, retention's ``prune()`` and ``filterIncompleteToolCalls``.

Mastra runs ``@mastra/memory`` over ``@mastra/libsql`` (``mastra/thread_helpers.mjs``); this project runs
``Memory`` over SQLite. Both get the same threads, messages, clone calls and queries, and must answer alike,
except where docs/spec.md marks a difference **[Δ]** (asserted here as such). One Node process answers the
whole module.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.memory import Memory
from mastra_memory.memory.incomplete_tool_calls import filter_incomplete_tool_calls
from mastra_memory.messages import MastraDBMessage, ToolInvocationPart
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.timestamps import canonical_timestamp, utc_now

from .mastra_runner import run_mastra

T0 = "2024-05-01T10:00:00.000Z"


def at(seconds: int) -> str:
    return f"2024-05-01T10:00:{seconds:02d}.000Z"


NOW = utc_now()


def days_ago(days: int) -> str:
    return canonical_timestamp(NOW - timedelta(days=days))


def _thread(id: str, resource: str, created_at: str, title: str = "") -> dict[str, Any]:
    return {
        "id": id,
        "resourceId": resource,
        "title": title,
        "createdAt": created_at,
        "updatedAt": created_at,
        "metadata": {},
    }


def _text(
    id: str, thread: str, resource: str, text: str, created_at: str, role: str = "user"
) -> dict[str, Any]:
    return {
        "id": id,
        "threadId": thread,
        "resourceId": resource,
        "role": role,
        "type": "v2",
        "createdAt": created_at,
        "content": {"format": 2, "parts": [{"type": "text", "text": text}]},
    }


THREADS = [
    _thread("t1", "alice", T0, "Trip"),
    _thread("t2", "alice", at(1)),
    _thread("b1", "bob", at(2)),
    _thread("k1", "carol", at(3)),
    _thread("k2", "carol", at(4)),
    _thread("f1", "dave", days_ago(1)),
]
MESSAGES = [
    _text("m1", "t1", "alice", "we fly to lisbon", at(10)),
    _text("m2", "t1", "alice", "book the hotel", at(11), "assistant"),
    _text("m3", "t1", "alice", "pack sunscreen", at(12)),
    _text("n1", "t2", "alice", "my cat likes tuna", at(13)),
    _text("x1", "b1", "bob", "bob's plan", at(14)),
    _text("k11", "k1", "carol", "carol one", at(20)),
    _text("k21", "k2", "carol", "carol two", at(21)),
    _text("k12", "k1", "carol", "carol three", at(22), "assistant"),
    _text("k22", "k2", "carol", "carol four", at(23)),
    _text("f_old", "f1", "dave", "forty days old", days_ago(40)),
    _text("f_new", "f1", "dave", "one day old", days_ago(1)),
]
CLONES = [
    {"sourceThreadId": "t1", "newThreadId": "c1"},
    {"sourceThreadId": "t1", "newThreadId": "c2", "title": "Branch"},
    {"sourceThreadId": "c1", "newThreadId": "c11"},
    {"sourceThreadId": "t1", "newThreadId": "cb", "resourceId": "bob"},
]
LINEAGE = {
    "isClone": ["t1", "c1", "c11", "cb"],
    "source": ["c11", "c1", "cb", "t1", "missing"],
    "clones": [["t1", None], ["c1", None], ["t1", "bob"], ["c11", None], ["missing", None]],
    "history": ["c11", "cb", "t1", "missing"],
}
BY_RESOURCE: list[dict[str, Any]] = [
    {"resourceId": "carol", "perPage": False},
    {"resourceId": "carol"},
    {"resourceId": "carol", "perPage": 3, "page": 1, "orderBy": {"field": "createdAt", "direction": "DESC"}},
    {"resourceId": "carol", "perPage": 2, "filter": {"dateRange": {"start": at(21), "end": at(22)}}},
    {"resourceId": "nobody", "perPage": False},
]
RETENTION = {"memory": {"messages": {"maxAge": "30d", "batchSize": 2}, "threads": {"maxAge": "30d"}}}
PRUNE_CALLS: list[dict[str, Any]] = [{"maxRows": 3}, {}]


def _call(id: str, state: str, *, result: Any = None, provider: bool | None = None) -> dict[str, Any]:
    invocation: dict[str, Any] = {
        "state": state,
        "toolCallId": id,
        "toolName": "weather",
        "args": {"city": id},
    }
    if result is not None:
        invocation["result"] = result
    part: dict[str, Any] = {"type": "tool-invocation", "toolInvocation": invocation}
    if provider is not None:
        part["providerExecuted"] = provider
    return part


def _parts(id: str, role: str, parts: list[dict[str, Any]], seconds: int) -> dict[str, Any]:
    return {
        "id": id,
        "threadId": "tools",
        "resourceId": "r",
        "role": role,
        "type": "v2",
        "createdAt": at(seconds),
        "content": {"format": 2, "parts": parts},
    }


TOOL_MESSAGES = [
    _parts("u1", "user", [{"type": "text", "text": "weather in kyoto and oslo?"}], 1),
    _parts(
        "a1",
        "assistant",
        [
            {"type": "text", "text": "checking"},
            _call("done", "result", result={"temp": 20}),
            _call("suspended", "call"),
            _call("hosted-closed", "call", provider=True),
            _call("failed", "output-error", result={"error": "boom"}),
            _call("approval", "approval-requested"),
            _call("approved", "approval-responded"),
            _call("denied", "output-denied"),
        ],
        2,
    ),
    _parts("a1b", "assistant", [_call("only-suspended", "call")], 3),
    _parts("u2", "user", [{"type": "text", "text": "and lisbon?"}], 4),
    _parts("a2", "assistant", [_call("streaming", "partial-call")], 5),
    _parts(
        "a3",
        "assistant",
        [
            _call("later", "result", result="sunny"),
            _call("suspended-2", "call"),
            _call("hosted-open", "call", provider=True),
        ],
        6,
    ),
]


@pytest.fixture(scope="module")
def mastra(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    file = tmp_path_factory.mktemp("mastra-helpers") / "mastra.db"
    answer = run_mastra(
        {
            "file": str(file),
            "threads": THREADS,
            "messages": MESSAGES,
            "clones": CLONES,
            "lineage": LINEAGE,
            "byResource": BY_RESOURCE,
            "prune": {"retention": RETENTION, "calls": PRUNE_CALLS},
            "toolCalls": {"messages": TOOL_MESSAGES, "modes": [True, False]},
        },
        script="thread_helpers.mjs",
    )
    answer["file"] = str(file)
    return answer


async def _ours(path: Path) -> dict[str, Any]:
    """The same requests through this project's ``Memory`` on SQLite, answered in the script's shape."""
    memory = Memory(storage=SQLiteStorage(str(path)), options={"lastMessages": 10})
    try:
        for thread in THREADS:
            await memory.save_thread(thread)
        await memory.save_messages(MESSAGES)
        clones = []
        for c in CLONES:
            done = await memory.clone_thread(
                c["sourceThreadId"],
                new_thread_id=c["newThreadId"],
                title=c.get("title"),
                resource_id=c.get("resourceId"),
            )
            clones.append({"thread": done.thread, "messageIdMap": done.message_id_map})
        lineage: dict[str, Any] = {
            "isClone": {t: memory.is_clone(await memory.get_thread_by_id(t)) for t in LINEAGE["isClone"]},
            "source": {},
            "clones": [],
            "history": {},
        }
        for t in LINEAGE["source"]:
            source = await memory.get_source_thread(t)
            lineage["source"][t] = source.id if source else None
        for src, res in LINEAGE["clones"]:
            lineage["clones"].append([t.id for t in await memory.list_clones(src, res)])
        for t in LINEAGE["history"]:
            lineage["history"][t] = [x.id for x in await memory.get_clone_history(t)]
        by_resource = []
        for args in BY_RESOURCE:
            page = await memory.list_messages_by_resource_id(
                args["resourceId"],
                per_page=args.get("perPage"),
                page=args.get("page", 0),
                order_by=args.get("orderBy"),
                filter=args.get("filter"),
            )
            by_resource.append(
                {
                    "ids": [m.id for m in page.messages],
                    "total": page.total,
                    "page": page.page,
                    "perPage": page.per_page,
                    "hasMore": page.has_more,
                }
            )
        results = [
            [r.model_dump() for r in await memory.prune(RETENTION, max_rows=call.get("maxRows"))]
            for call in PRUNE_CALLS
        ]
        threads = sorted(
            t.id for t in (await memory.list_threads(per_page=False, include_archived=True)).threads
        )
        kept = sorted(m.id for m in await memory.storage.list_messages_by_id([m["id"] for m in MESSAGES]))
        return {
            "clones": clones,
            "lineage": lineage,
            "byResource": by_resource,
            "prune": {"results": results, "threads": threads, "messages": kept},
        }
    finally:
        await memory.close()


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return asyncio.run(_ours(tmp_path_factory.mktemp("ours-helpers") / "ours.db"))


def test_clone_lineage_matches_mastra(mastra: dict[str, Any], ours: dict[str, Any]) -> None:
    assert ours["lineage"]["isClone"] == mastra["lineage"]["isClone"]
    assert ours["lineage"]["source"] == mastra["lineage"]["source"]
    assert ours["lineage"]["history"] == mastra["lineage"]["history"]
    # Clones made within one millisecond tie on created_at: the order among them is the store's.
    assert [sorted(ids) for ids in ours["lineage"]["clones"]] == [
        sorted(ids) for ids in mastra["lineage"]["clones"]
    ]
    for request, theirs, mine in zip(CLONES, mastra["clones"], ours["clones"], strict=True):
        assert mine["thread"].title == theirs["thread"]["title"]
        assert mine["thread"].resource_id == theirs["thread"]["resourceId"]
        if request["sourceThreadId"] == "t1":  # a clone of a clone maps the (random) ids of the copies
            assert list(mine["messageIdMap"]) == list(theirs["messageIdMap"])
        assert len(mine["messageIdMap"]) == len(theirs["messageIdMap"])


def test_clone_metadata_keys_differ_as_documented(mastra: dict[str, Any], ours: dict[str, Any]) -> None:
    """[Δ] docs/spec.md §5.11: Mastra nests ``clone: {sourceThreadId, ...}``; this project writes flat keys
    and reads both (so a Mastra-made clone is a clone here: tests/memory/test_thread_helpers.py)."""
    theirs = mastra["clones"][0]["thread"]["metadata"]["clone"]
    mine = ours["clones"][0]["thread"].metadata
    assert theirs["sourceThreadId"] == mine["source_thread_id"] == "t1"
    assert theirs["lastMessageId"] == mine["last_message_id"] == "m3"


def test_list_messages_by_resource_id_matches_mastra(mastra: dict[str, Any], ours: dict[str, Any]) -> None:
    assert ours["byResource"] == mastra["byResource"]


def test_prune_matches_mastra(mastra: dict[str, Any], ours: dict[str, Any]) -> None:
    theirs, mine = mastra["prune"], ours["prune"]
    # The bounded first call: the same tables, counts and progress (which aged rows go first is the
    # store's order: Mastra's by rowid, this project's oldest first).
    assert mine["results"][0] == theirs["results"][0]
    assert [(r["table"], r["done"]) for r in mine["results"][1]] == [
        (r["table"], r["done"]) for r in theirs["results"][1]
    ]
    assert mine["threads"] == theirs["threads"]
    assert mine["messages"] == theirs["messages"] == ["f_new"]
    # [Δ] docs/spec.md §5.11: a pruned thread takes its messages (and vectors) with it here; Mastra deletes
    # the thread row only, so its second call finds the messages the first left behind.
    assert sum(r["deleted"] for call in mine["results"] for r in call) <= sum(
        r["deleted"] for call in theirs["results"] for r in call
    )


def _shape(messages: list[MastraDBMessage]) -> dict[str, Any]:
    """Which tool calls reach the prompt and with which result, from stored messages."""
    calls: list[str] = []
    results: dict[str, Any] = {}
    for message in messages:
        for part in message.content.parts:
            if isinstance(part, ToolInvocationPart):
                calls.append(part.tool_invocation.tool_call_id)
                state = part.tool_invocation.state
                if state == "result":
                    results[part.tool_invocation.tool_call_id] = part.tool_invocation.result
                elif state in ("output-error", "output-denied"):
                    results[part.tool_invocation.tool_call_id] = f"<{state}>"
    return {"calls": calls, "results": results}


#: What Mastra's prompt gives the model for a denied call.
DENIED = "Tool call was not approved by the user"


def _output(output: dict[str, Any]) -> Any:
    if output["type"].startswith("error"):
        return "<output-error>"
    if output == {"type": "text", "value": DENIED}:
        return "<output-denied>"
    return output["value"]


def _prompt_shape(prompt: list[dict[str, Any]]) -> dict[str, Any]:
    calls = [c for m in prompt for c in m["calls"]]
    results = {r["toolCallId"]: _output(r["output"]) for m in prompt for r in m["results"]}
    return {"calls": calls, "results": results}


@pytest.mark.parametrize("mode", [True, False])
def test_filter_incomplete_tool_calls_matches_mastras_prompt(mastra: dict[str, Any], mode: bool) -> None:
    stored = [MastraDBMessage.model_validate(m) for m in TOOL_MESSAGES]
    kept = filter_incomplete_tool_calls(stored, filter_incomplete=mode)
    assert _shape(kept) == _prompt_shape(mastra["toolCalls"][str(mode).lower()])


async def _lineage_of_mastras_file(path: str) -> dict[str, Any]:
    from mastra_memory.stores.libsql import LibSQLStorage

    memory = Memory(storage=LibSQLStorage(path))
    try:
        return {
            "isClone": {t: memory.is_clone(await memory.get_thread_by_id(t)) for t in ("c1", "c11", "f1")},
            "source": [(await memory.get_source_thread(t)) for t in ("c11", "c1")],
            "clones": [t.id for t in await memory.list_clones("c1")],
            "history": [t.id for t in await memory.get_clone_history("c11")],
        }
    finally:
        await memory.close()


def test_lineage_reads_the_clones_mastra_wrote(mastra: dict[str, Any]) -> None:
    """Mastra's own file, opened by the libsql store: its nested clone metadata is read as lineage. (Its
    prune removed t1, the original: the chain ends at c1, as Mastra's own walk ends.)"""
    pytest.importorskip("libsql", reason="the libsql store needs the libsql extra")
    lineage = asyncio.run(_lineage_of_mastras_file(mastra["file"]))
    assert lineage["isClone"] == {"c1": True, "c11": True, "f1": False}
    assert [t.id if t else None for t in lineage["source"]] == ["c1", None]
    assert lineage["clones"] == ["c11"]
    assert lineage["history"] == ["c1", "c11"]
