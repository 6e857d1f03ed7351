"""The Python examples of the README and of docs/adapters/pgvector.md run as written.

The README's example only builds a ``Memory`` (building contacts no server). The docs page's vector
example creates an index, writes and queries: it runs against the session's private server
(``conftest.py``), which it finds the way a user's script would, through ``MASTRA_MEMORY_PGVECTOR_URL``
(read when no ``url`` is given).
"""

from pathlib import Path

import pytest
from mastra_memory_conformance.doc_examples import run_python_examples

ADAPTER = Path(__file__).resolve().parents[1]
DOCS_PAGE = ADAPTER.parents[1] / "docs" / "adapters" / "pgvector.md"


def test_the_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_python_examples(ADAPTER / "README.md") >= 1


def test_the_docs_page_examples_run_against_a_server(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MASTRA_MEMORY_PGVECTOR_URL", pg_url)
    assert run_python_examples(DOCS_PAGE) >= 2
