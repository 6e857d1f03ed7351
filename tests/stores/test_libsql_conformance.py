"""The conformance kit's storage domain on the core's LibSQL store (docs/spec.md §4.7), as the adapters' own
``test_conformance.py`` runs the kit: in a child process (its report and target options stay out of this
session), from conformance/ with the kit's own configuration. The ``libsql`` target comes from
``libsql_kit_target.py`` beside this file: its storage and its vector store (Mastra's per-index tables) on
one file, so the storage domain and the vector domains run, the differential filter tests included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# The nox `tests` session installs the libsql extra; a session without it skips these tests.
pytest.importorskip("libsql", reason="the libsql store needs the libsql extra")

ROOT = Path(__file__).resolve().parents[2]
#: The whole kit took 60 s here; a hung run fails well before the test's own timeout.
KIT_TIMEOUT = 280


def test_the_kit_passes_on_libsql(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")])
        ),
        # The store registers through the core distribution's entry point.
        "MASTRA_MEMORY_DISABLE_ENTRYPOINTS": "0",
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            "pyproject.toml",
            "--rootdir",
            ".",
            "-p",
            "no:cacheprovider",
            "-o",
            "asyncio_default_fixture_loop_scope=function",
            "-p",
            "libsql_kit_target",
            "--pyargs",
            "mastra_memory_conformance",
            "--target",
            "libsql",
            "--conformance-report",
            str(tmp_path / "report"),
            "-q",
            "-x",
        ],
        cwd=ROOT / "conformance",
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=KIT_TIMEOUT,
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    report = json.loads((tmp_path / "report" / "conformance.json").read_text())
    ran = [r for r in report["results"] if r["outcome"] != "skipped"]
    assert {r["outcome"] for r in ran} <= {"pass", "deviation", "unsupported"}
    domains = {r["domain"] for r in ran}
    # The storage domain and the hostile inputs, and the vector store's domains, differential included.
    assert {"storage", "hostile", "vector_basics", "filters", "differential", "memory"} <= domains
    assert len(ran) >= 450  # 489 ran here, hypothesis included
