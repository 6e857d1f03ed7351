"""Fixtures of the server smoke tests: one real server per test module, and the official Python client.

A server whose toolchain is missing (Java and Maven for OpenSearch, Go for FerretDB), or that cannot be
built or started, skips its tests with the provisioner's reason -- unless ``MASTRA_MEMORY_REQUIRE_SERVERS=1``
or ``CI`` is set, where it fails them: on this project's machines and in CI the servers must run
(:mod:`mastra_memory_conformance.missing`, the rule every test of the project follows).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from mastra_memory_mongodb.testing.ferretdb import ferretdb_server
from mastra_memory_opensearch.testing.server import opensearch_server

from mastra_memory_conformance.missing import started


def _serve(start: Callable[[Path], AbstractContextManager[str]], tmp: Path, what: str) -> Iterator[str]:
    with started(start(tmp), what) as url:
        yield url


@pytest.fixture(scope="module")
def opensearch_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A fresh single-node OpenSearch with k-NN, for the test module."""
    yield from _serve(opensearch_server, tmp_path_factory.mktemp("opensearch"), "OpenSearch")


@pytest.fixture(scope="module")
def ferretdb_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A fresh FerretDB (SQLite backend), for the test module."""
    yield from _serve(ferretdb_server, tmp_path_factory.mktemp("ferretdb"), "FerretDB")
