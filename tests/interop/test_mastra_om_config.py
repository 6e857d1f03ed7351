"""Observational memory's options as Mastra 1.31 loads them (issue 27; docs/spec.md §5.14).

Compared: the defaults (``OBSERVATIONAL_MEMORY_DEFAULTS``), which configurations load or are refused, and
what a loaded one resolves to — thresholds, scope, the shared budget, retrieval and the ``recall`` tool.
Mastra builds its OM engine on an in-memory LibSQL store (``mastra/om_config.mjs``; no model is called),
this project its ``Memory`` on an in-memory SQLite store. The configurations refused here but loaded by
Mastra are the [Δ] of §5.14, checked apart with their error. One Node process answers the whole module.
"""

from __future__ import annotations

from typing import Any

import pytest

from mastra_memory.errors import ConfigError
from mastra_memory.memory import Memory
from mastra_memory.memory.observational import UnsupportedOMOptionError
from mastra_memory.memory.observational import options as om
from mastra_memory.stores.sqlite.storage import SQLiteStorage

from .mastra_runner import run_mastra

MODEL = "openai/gpt-4o-mini"  # resolved, never called (the key is read at the first call)

#: Cases both sides must treat alike.
SAME: dict[str, dict[str, Any]] = {
    "defaults-no-buffering": {"model": MODEL, "observation": {"bufferTokens": False}},
    "thresholds": {
        "model": MODEL,
        "observation": {"messageTokens": 1234, "bufferTokens": False},
        "reflection": {"observationTokens": 5678},
    },
    "resource-scope": {"model": MODEL, "scope": "resource"},
    "shared-budget": {"model": MODEL, "shareTokenBudget": True, "observation": {"bufferTokens": False}},
    "shared-budget-resource": {"model": MODEL, "shareTokenBudget": True, "scope": "resource"},
    "retrieval": {"model": MODEL, "retrieval": True, "observation": {"bufferTokens": False}},
    "retrieval-thread": {"model": MODEL, "retrieval": {"scope": "thread"}, "scope": "resource"},
    "per-agent-models": {
        "observation": {"model": MODEL, "bufferTokens": False},
        "reflection": {"model": MODEL},
    },
    "disabled": {"enabled": False},
    "two-models": {"model": MODEL, "observation": {"model": MODEL}},
    "shared-budget-with-buffering": {"model": MODEL, "shareTokenBudget": True},
}

#: Loaded by Mastra, refused here (docs/spec.md §5.14 [Δ]), with the option named.
DELTA: dict[str, tuple[dict[str, Any], str]] = {
    "default-model": ({"observation": {"bufferTokens": False}}, "observational_memory.model"),
    "buffer-tokens": (
        {"model": MODEL, "observation": {"bufferTokens": 0.25}},
        "observational_memory.observation.buffer_tokens",
    ),
    "buffer-activation": (
        {"model": MODEL, "observation": {"bufferActivation": 0.5}},
        "observational_memory.observation.buffer_activation",
    ),
    "block-after": (
        {"model": MODEL, "observation": {"blockAfter": 1.5}},
        "observational_memory.observation.block_after",
    ),
    "temporal-markers": ({"model": MODEL, "temporalMarkers": True}, "observational_memory.temporal_markers"),
}

CTX = {"MastraMemory": {"thread": {"id": "t1"}, "resource_id": "r1"}}


@pytest.fixture(scope="module")
def mastra() -> dict[str, Any]:
    cases = [{"name": n, "options": {"observationalMemory": o}} for n, o in SAME.items()]
    cases += [{"name": n, "options": {"observationalMemory": o}} for n, (o, _) in DELTA.items()]
    return run_mastra({"cases": cases}, script="om_config.mjs")


def test_the_defaults_are_mastras(mastra: dict[str, Any]) -> None:
    defaults = mastra["defaults"]
    assert defaults["observation"]["messageTokens"] == om.DEFAULT_MESSAGE_TOKENS
    assert defaults["reflection"]["observationTokens"] == om.DEFAULT_OBSERVATION_TOKENS
    assert defaults["observation"]["maxTokensPerBatch"] == om.DEFAULT_MAX_TOKENS_PER_BATCH
    assert defaults["observation"]["model"] == om.MASTRA_DEFAULT_MODEL
    assert defaults["reflection"]["model"] == om.MASTRA_DEFAULT_MODEL
    options = om.ObservationalMemoryOptions()
    assert (options.scope, options.share_token_budget, options.retrieval) == ("thread", False, False)


def _ours(options: dict[str, Any]) -> dict[str, Any]:
    try:
        memory = Memory(
            storage=SQLiteStorage(":memory:"), embedder="hash/64", options={"observationalMemory": options}
        )
    except ConfigError as exc:
        return {"loaded": False, "error": str(exc)}
    cfg = memory.options.observational
    if cfg is None:
        return {"loaded": True, "error": None, "enabled": False}
    retrieval = cfg.retrieval_config
    message_tokens: Any = cfg.observation.message_tokens
    if cfg.share_token_budget:
        message_tokens = {"min": message_tokens, "max": message_tokens + cfg.reflection.observation_tokens}
    return {
        "loaded": True,
        "error": None,
        "enabled": True,
        "messageTokens": message_tokens,
        "observationTokens": cfg.reflection.observation_tokens,
        "scope": cfg.scope,
        "shareTokenBudget": cfg.share_token_budget,
        "retrieval": retrieval is not None,
        "retrievalScope": retrieval.scope if retrieval is not None else "resource",
        "retrievalSearch": bool(retrieval and retrieval.vector),
        "tools": sorted(memory.get_tools(CTX)),
    }


@pytest.mark.parametrize("name", list(SAME))
def test_loaded_and_resolved_as_mastra_does(mastra: dict[str, Any], name: str) -> None:
    theirs = dict(mastra["cases"][name])
    ours = _ours(SAME[name])
    assert ours["loaded"] == theirs["loaded"], (ours, theirs)
    if not theirs["loaded"]:
        return
    theirs.pop("bufferTokens", None)  # not built here: synchronous only (§5.14 [Δ]); these cases have none
    assert ours == theirs


@pytest.mark.parametrize("name", list(DELTA))
def test_refused_here_with_the_option_named(mastra: dict[str, Any], name: str) -> None:
    options, option = DELTA[name]
    assert mastra["cases"][name]["loaded"] is True  # Mastra loads it
    with pytest.raises(UnsupportedOMOptionError) as raised:
        Memory(
            storage=SQLiteStorage(":memory:"), embedder="hash/64", options={"observationalMemory": options}
        )
    assert raised.value.details == {"option": option}
