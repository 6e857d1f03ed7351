"""Fixtures of the server smoke tests: one real server per test module, and the official Python client.

A server whose toolchain is missing (Java and Maven for OpenSearch, Go for FerretDB), or that cannot be
built or started, skips its tests with the provisioner's reason -- unless ``MASTRA_MEMORY_REQUIRE_SERVERS=1``
or ``CI`` is set, where it fails them: on this project's machines and in CI the servers must run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path

import pytest

from mastra_memory_conformance.servers import ferretdb_server, opensearch_server
from mastra_memory_conformance.targets import TargetUnavailable

from .support import unavailable


def _serve(start: Callable[[Path], AbstractContextManager[str]], tmp: Path, what: str) -> Iterator[str]:
    stack = ExitStack()
    try:
        url = stack.enter_context(start(tmp))
    except TargetUnavailable as exc:
        unavailable(f"{what} unavailable: {exc.reason}")
    with stack:
        yield url


@pytest.fixture(scope="module")
def opensearch_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A fresh single-node OpenSearch with k-NN, for the test module."""
    yield from _serve(opensearch_server, tmp_path_factory.mktemp("opensearch"), "OpenSearch")


@pytest.fixture(scope="module")
def ferretdb_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A fresh FerretDB (SQLite backend), for the test module."""
    yield from _serve(ferretdb_server, tmp_path_factory.mktemp("ferretdb"), "FerretDB")
