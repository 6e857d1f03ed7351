"""Fixtures of the fault tests (issue 12, "keep it closed"): a private PostgreSQL that a test may SIGKILL
and restart, and a fresh embedding cache.

These tests start child processes and servers and kill them; each has a deadline and is stopped by its PID.
They run in the ``faults`` nox session (``nox -s faults``), not in ``tests``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from mastra_memory.embedders import get_embedding_cache
from mastra_memory_conformance.missing import started

if TYPE_CHECKING:
    from .pg_server import FaultServer


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    """Embeddings are computed anew in every test: recall must use what the stores hold."""
    get_embedding_cache().clear()
    yield
    get_embedding_cache().clear()


@pytest.fixture
def pg_server(tmp_path: Path) -> Iterator[FaultServer]:
    """A private PostgreSQL + pgvector (``local_server``) wrapped in a :class:`FaultServer`.

    The restarted postmaster, if any, is stopped by its PID before ``local_server`` removes the directory.
    """
    from mastra_memory_pgvector.testing.server import ServerUnavailable, local_server

    from .pg_server import FaultServer

    with started(
        local_server(), "PostgreSQL + pgvector (the fault tests' server)", (ServerUnavailable,)
    ) as url:
        server = FaultServer(url, tmp_path / "restarted-postgres.log")
        try:
            yield server
        finally:
            server.stop()
