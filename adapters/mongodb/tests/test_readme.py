"""The Python examples of the README and of docs/adapters/mongodb.md run as written (they build stores;
building contacts no server)."""

from pathlib import Path

import pytest
from mastra_memory_conformance.doc_examples import run_python_examples

ADAPTER = Path(__file__).resolve().parents[1]
PAGES = [ADAPTER / "README.md", ADAPTER.parents[1] / "docs" / "adapters" / "mongodb.md"]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_the_pages_python_examples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_python_examples(page) >= 1
