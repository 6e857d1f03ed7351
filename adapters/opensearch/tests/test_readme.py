"""The Python examples of the README and of docs/adapters/opensearch.md run as written.

The README's example only builds stores (building contacts no server). The docs page's example creates an
index, writes and queries: it runs against the session's real node (``conftest.py``), which it finds the
way a user's script would, through ``MASTRA_MEMORY_OPENSEARCH_URL`` (read when no ``url`` is given).
"""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from mastra_memory_conformance.doc_examples import run_python_examples

ADAPTER = Path(__file__).resolve().parents[1]
DOCS_PAGE = ADAPTER.parents[1] / "docs" / "adapters" / "opensearch.md"


def test_the_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_python_examples(ADAPTER / "README.md") >= 1


def test_the_docs_page_examples_run_against_a_node(
    opensearch_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MASTRA_MEMORY_OPENSEARCH_URL", opensearch_url)
    assert run_python_examples(DOCS_PAGE) >= 1


def test_the_docs_page_example_closes_its_client_when_the_node_is_unreachable(tmp_path: Path) -> None:
    """A failing call must not leave aiohttp's session open: the example closes the store on every path.

    It runs as a user's script would, in a process of its own: inside pytest the captured log records of
    the connection error keep the traceback, and with it a leaked session, alive past the check."""
    with socket.socket() as probe:  # a loopback port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **os.environ,
        "MASTRA_MEMORY_OPENSEARCH_URL": f"http://127.0.0.1:{port}",
        "MASTRA_MEMORY_OPENSEARCH_MAX_RETRIES": "0",
    }
    script = _UNREACHABLE_SCRIPT.format(page=str(DOCS_PAGE))
    done = subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", "-c", script],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "VectorStoreError", done.stdout + done.stderr
    assert "Unclosed client session" not in done.stderr


_UNREACHABLE_SCRIPT = """
import gc
from pathlib import Path
from mastra_memory.errors import VectorStoreError
from mastra_memory_conformance.doc_examples import run_python_examples
try:
    run_python_examples(Path({page!r}))
except VectorStoreError:
    print("VectorStoreError")
gc.collect()  # an unclosed aiohttp.ClientSession warns when it is collected
"""
