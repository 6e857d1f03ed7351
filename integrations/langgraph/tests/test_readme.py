"""The README's Python example runs as written (offline: the SQLite default, the offline embedder)."""

from pathlib import Path

import pytest
from mastra_memory_conformance.doc_examples import python_blocks, run_python_examples


def test_the_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_python_examples(Path(__file__).resolve().parents[1] / "README.md") >= 1


def test_the_docs_pages_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/integrations.md's block for this package (tests/docs leaves the page to the integrations)."""
    page = Path(__file__).resolve().parents[3] / "docs" / "integrations.md"
    [block] = [b for b in python_blocks(page.read_text()) if "mastra_memory_langgraph import" in b]
    excerpt = tmp_path / "integrations.md"
    excerpt.write_text(f"```python\n{block}```\n")
    monkeypatch.chdir(tmp_path)
    assert run_python_examples(excerpt) == 1
