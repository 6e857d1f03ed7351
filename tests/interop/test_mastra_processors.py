"""TokenLimiter's trim modes and ToolCallFilter's options, proved by running Mastra's own processors on the
same stored messages (issue 26, section 2; docs/spec.md §5.12).

Mastra runs best-fit/contiguous and the filter on the provider prompt it builds from the MessageList,
memory-only on the MessageList; this project runs all of them on the MessageList. What the model receives
is compared as the sequence of texts, tool calls and tool results. Token counts differ by design (Mastra
estimates with ``tokenx``, §5.12 [Δ]), so the limiter cases use messages whose sizes differ by far more
than the two estimates do, and memory-only gives Mastra this project's own counts. One Node process
answers the whole module (``mastra_runner``).
"""

from __future__ import annotations

from typing import Any

import pytest

from mastra_memory.memory import (
    MessageList,
    TokenLimiter,
    ToolCallFilter,
    default_token_counter,
    message_tokens,
)
from mastra_memory.messages import StepStartPart, TextPart, ToolInvocationPart

from .mastra_runner import run_mastra

SMALL = "short note"
BIG = "lorem ipsum dolor sit amet " * 120  # ~600 tokens by either estimate


def row(mid: str, role: str, minute: int, parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": mid,
        "role": role,
        "type": "v2",
        "createdAt": f"2024-05-01T10:{minute:02d}:00.000Z",
        "threadId": "t",
        "resourceId": "r",
        "content": {"format": 2, "parts": parts},
    }


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool(call_id: str, name: str = "weather", model_output: Any = None) -> dict[str, Any]:
    part: dict[str, Any] = {
        "type": "tool-invocation",
        "toolInvocation": {
            "state": "result",
            "toolCallId": call_id,
            "toolName": name,
            "args": {"city": "Kyoto"},
            "result": {"temp": 20},
        },
    }
    if model_output is not None:
        part["providerMetadata"] = {"mastra": {"modelOutput": model_output}}
    return part


STEP = {"type": "step-start"}

# History: small, BIG, small, small; then this turn's question.
LIMITED = [
    row("h1", "user", 1, [text("first " + SMALL)]),
    row("h2", "assistant", 2, [text(BIG)]),
    row("h3", "user", 3, [text("third " + SMALL)]),
    row("h4", "assistant", 4, [text("fourth " + SMALL)]),
]
QUESTION = [row("q", "user", 9, [text("question")])]

TOOLS = [
    row("h1", "user", 1, [text("weather?")]),
    row(
        "h2",
        "assistant",
        2,
        [STEP, text("checking"), tool("c1", model_output={"type": "text", "value": "20C"})],
    ),
    row("h3", "assistant", 3, [STEP, tool("c2", name="search"), text("found")]),
    row("h4", "user", 4, [text("and tomorrow?")]),
    row("h5", "assistant", 5, [STEP, tool("c3", model_output="21C"), STEP, tool("c4", name="search")]),
]

LIMITER_CASES: dict[str, dict[str, Any]] = {
    "best-fit": {"trimMode": "best-fit"},
    "default": {},
    "contiguous": {"trimMode": "contiguous"},
}

FILTER_CASES: dict[str, dict[str, Any]] = {
    "all": {},
    "by-name": {"exclude": ["search"]},
    "none": {"exclude": []},
    "last-step": {"filterAfterToolSteps": 1},
    "two-steps": {"filterAfterToolSteps": 2, "exclude": ["weather"]},
    "zero-steps": {"filterAfterToolSteps": 0},
    "model-output": {"preserveModelOutput": True},
    "model-output-last-step": {"preserveModelOutput": True, "filterAfterToolSteps": 1},
}

# memory-only: Mastra is given this project's counts, so only the trimming rule is compared.
MEMORY_ONLY = [
    row(f"m{i}", "user" if i % 2 else "assistant", i, [text(f"m{i} " + "word " * 60)]) for i in range(1, 7)
]
SPLIT_PAIR = [
    row("m1", "user", 1, [text("m1 " + "word " * 60)]),
    row(
        "m2",
        "assistant",
        2,
        [{**tool("p1"), "toolInvocation": {**tool("p1")["toolInvocation"], "state": "call"}}],
    ),
    row("m3", "assistant", 3, [tool("p1"), text("m3 " + "word " * 60)]),
    row("m4", "user", 4, [text("m4 " + "word " * 60)]),
    row("m5", "assistant", 5, [text("m5 " + "word " * 60)]),
]
MEMORY_ONLY_CASES: dict[str, tuple[list[dict[str, Any]], float]] = {
    "under-limit": (MEMORY_ONLY, 5.0),
    "over-limit": (MEMORY_ONLY, 3.5),
    "linked-tool-messages": (SPLIT_PAIR, 3.0),
}


def _tokens(rows: list[dict[str, Any]]) -> dict[str, int]:
    listing = MessageList(thread_id="t", resource_id="r")
    listing.add(rows, source="memory")
    return {m.id: message_tokens(m, default_token_counter()) for m in listing.all()}


def _limit(rows: list[dict[str, Any]], per_message_share: float) -> int:
    counts = _tokens(rows)
    return int(per_message_share * max(counts.values()))


@pytest.fixture(scope="module")
def mastra() -> dict[str, Any]:
    cases: list[dict[str, Any]] = []
    for name, options in LIMITER_CASES.items():
        cases.append(
            {
                "name": f"limiter-{name}",
                "processor": "token-limiter",
                "options": {"limit": 300, **options},
                "memory": LIMITED,
                "input": QUESTION,
            }
        )
    for name, options in FILTER_CASES.items():
        cases.append(
            {
                "name": f"filter-{name}",
                "processor": "tool-call-filter",
                "options": options,
                "memory": TOOLS,
                "input": QUESTION,
            }
        )
    for name, (rows, share) in MEMORY_ONLY_CASES.items():
        limit = _limit(rows, share)
        cases.append(
            {
                "name": f"memory-only-{name}",
                "processor": "token-limiter",
                "options": {"limit": limit, "trimMode": "memory-only", "atMaxRemoveTokens": limit // 4},
                "memory": rows,
                "input": QUESTION,
                "counts": {**_tokens(rows), **_tokens(QUESTION)},
            }
        )
    return run_mastra({"cases": cases}, script="processors.mjs")


def _turn(memory: list[dict[str, Any]]) -> MessageList:
    listing = MessageList(thread_id="t", resource_id="r")
    listing.add(memory, source="memory")
    listing.add(QUESTION, source="input")
    return listing


def _kept(listing: MessageList) -> list[str]:
    kept: list[str] = []
    results: list[str] = []
    for msg in listing.all():
        for part in msg.content.parts:
            if isinstance(part, TextPart):
                kept.extend(results)
                results = []
                kept.append(f"text:{part.text}")
            elif isinstance(part, StepStartPart):  # Mastra's prompt: one assistant message per step
                kept.extend(results)
                results = []
            elif isinstance(part, ToolInvocationPart):
                kept.append(f"call:{part.tool_invocation.tool_call_id}")
                if part.tool_invocation.state == "result":
                    results.append(f"result:{part.tool_invocation.tool_call_id}")
        kept.extend(results)
        results = []
    return kept


def _answer(mastra: dict[str, Any], name: str) -> dict[str, Any]:
    answer = mastra[name]
    assert "error" not in answer, answer
    return dict(answer)


@pytest.mark.parametrize("name", list(LIMITER_CASES))
async def test_trim_modes_keep_what_mastra_keeps(mastra: dict[str, Any], name: str) -> None:
    options = LIMITER_CASES[name]
    listing = _turn(LIMITED)
    limiter = TokenLimiter(300, trim_mode=options.get("trimMode", "best-fit"))
    await limiter.process_input([], listing)
    assert _kept(listing) == _answer(mastra, f"limiter-{name}")["kept"]


def test_best_fit_passes_over_a_big_message_and_contiguous_stops_there(mastra: dict[str, Any]) -> None:
    best = _answer(mastra, "limiter-best-fit")["kept"]
    contiguous = _answer(mastra, "limiter-contiguous")["kept"]
    assert "text:first " + SMALL in best
    assert "text:first " + SMALL not in contiguous
    assert _answer(mastra, "limiter-default")["kept"] == best


@pytest.mark.parametrize("name", list(FILTER_CASES))
async def test_tool_call_filter_options_match_mastra(mastra: dict[str, Any], name: str) -> None:
    options = FILTER_CASES[name]
    listing = _turn(TOOLS)
    await ToolCallFilter(
        options.get("exclude"),
        filter_after_tool_steps=options.get("filterAfterToolSteps"),
        preserve_model_output=options.get("preserveModelOutput", False),
    ).process_input([], listing)
    assert _kept(listing) == _answer(mastra, f"filter-{name}")["kept"]


@pytest.mark.parametrize("name", list(MEMORY_ONLY_CASES))
async def test_memory_only_trims_what_mastra_trims(mastra: dict[str, Any], name: str) -> None:
    rows, share = MEMORY_ONLY_CASES[name]
    limit = _limit(rows, share)
    listing = _turn(rows)
    await TokenLimiter(limit, trim_mode="memory-only", at_max_remove_tokens=limit // 4).process_input(
        [], listing
    )
    assert [m.id for m in listing.all()] == _answer(mastra, f"memory-only-{name}")["ids"]
