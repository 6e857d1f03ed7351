"""The Python examples of the README and of docs/adapters/s3vectors.md run as written.

The README's example only builds a store (building contacts no service). The docs page's example is
written for Amazon S3 Vectors; it runs here against the session's S3Mock (``conftest.py``), pointed there
the way a user would try it locally — through the environment the settings read
(``MASTRA_MEMORY_S3VECTORS_ENDPOINT_URL``, ``..._CREATE_BUCKET``) and dummy keys in boto3's chain —
so the page keeps the AWS spelling and nothing here can reach AWS.
"""

from pathlib import Path

import pytest
from mastra_memory_conformance.doc_examples import run_python_examples

from mastra_memory_s3vectors.testing.s3mock import S3MockEndpoints

ADAPTER = Path(__file__).resolve().parents[1]
DOCS_PAGE = ADAPTER.parents[1] / "docs" / "adapters" / "s3vectors.md"


def test_the_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_python_examples(ADAPTER / "README.md") >= 1


def test_the_docs_page_examples_run_against_s3mock(
    s3mock: S3MockEndpoints, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MASTRA_MEMORY_S3VECTORS_ENDPOINT_URL", s3mock.vectors)
    monkeypatch.setenv("MASTRA_MEMORY_S3VECTORS_CREATE_BUCKET", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "mastra-test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "mastra-test")
    assert run_python_examples(DOCS_PAGE) >= 1
