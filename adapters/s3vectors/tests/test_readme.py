"""The README's Python example runs as written (it builds stores; building contacts no server)."""

from pathlib import Path

import pytest
from mastra_memory_conformance.doc_examples import run_python_examples


def test_the_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_python_examples(Path(__file__).resolve().parents[1] / "README.md") >= 1
