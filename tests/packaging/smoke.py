"""Run inside a fresh venv that installed ``mastra-memory[<adapter>]`` from built wheels only.

``python smoke.py <adapter> <workdir>``: proves the installed packages (not the source tree) are used, the
adapter's plugin is found through its entry point, and — for the stores that need no server (sqlite,
lancedb, qdrant's embedded engine) — that a real semantic recall runs through the installed store.
Server-backed adapters are built (building contacts no server); their recall runs in the kit's sessions.
Every adapter's venv then runs the README's quickstart (its default embedder must be installed by the route
itself, issue 29) from ``<workdir>``.
"""

from __future__ import annotations

import asyncio
import importlib
import re
import subprocess
import sys
from pathlib import Path

from mastra_memory import Memory, create_vector
from mastra_memory.plugins import list_plugins

EMBEDDED = {
    "sqlite": lambda work: {"url": str(work / "vectors.db")},
    "lancedb": lambda work: {"url": str(work / "lancedb")},
    "qdrant": lambda work: {"edge_path": str(work / "qdrant-edge")},
}
SERVER = {
    "pgvector": {"url": "postgresql://user:pw@127.0.0.1:1/app"},
    "opensearch": {"url": "http://127.0.0.1:1"},
    "mongodb": {"uri": "mongodb://127.0.0.1:1/"},
    "pinecone": {"api_key": "not-used", "cloud": "aws", "region": "us-east-1"},
    "s3vectors": {"bucket": "not-used", "region": "us-east-1"},
}


async def recall(adapter: str, work: Path) -> None:
    vector = create_vector(adapter, **EMBEDDED[adapter](work))
    memory = Memory(
        storage=f"sqlite:///{work / 'memory.db'}",
        vector=vector,
        embedder="hash/64",
        options={"lastMessages": 0, "semanticRecall": {"topK": 1, "messageRange": 0, "scope": "resource"}},
    )
    await memory.create_thread("user-1", "trip")
    await memory.create_thread("user-1", "today")
    texts = ["Book the Hoshinoya in Kyoto, check-in April 3", "The dog's vet visit is on Tuesday"]
    await memory.save_messages([{"thread_id": "trip", "role": "user", "content": t} for t in texts])
    question = "Hoshinoya Kyoto check-in"
    result = await memory.recall("today", resource_id="user-1", vector_search_string=question)
    recalled = [m.content.content for m in result.messages]
    assert recalled == [texts[0]], recalled
    await memory.close()


def quickstart(work: Path) -> None:
    """The README's first Python block, run in this venv from ``work``; its best hit is the check-in."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    found = re.search(r"^```python\n(.*?)^```", readme, re.S | re.M)
    assert found, "README.md has no Python block"
    script = work / "quickstart.py"
    script.write_text(found.group(1), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=work, capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "[trip] Book the Hoshinoya in Kyoto, check-in April 3." in done.stdout, done.stdout


def main() -> None:
    adapter, work = sys.argv[1], Path(sys.argv[2])
    venv = Path(sys.prefix).resolve()
    names = ["mastra_memory"] if adapter == "sqlite" else ["mastra_memory", f"mastra_memory_{adapter}"]
    for name in names:
        where = Path(importlib.import_module(name).__file__ or "").resolve()
        assert where.is_relative_to(venv), f"{name} imported from {where}, not from the fresh venv {venv}"
    provided = {store for info in list_plugins() for store in info.vector_stores}
    assert adapter in provided, f"{adapter} not registered through its entry point: {sorted(provided)}"
    if adapter in EMBEDDED:
        asyncio.run(recall(adapter, work))
    else:
        create_vector(adapter, **SERVER[adapter])
    quickstart(work)
    done = "recalled" if adapter in EMBEDDED else "built"
    print(f"{adapter}: installed from wheels, registered, {done}, quickstart ran")


if __name__ == "__main__":
    main()
