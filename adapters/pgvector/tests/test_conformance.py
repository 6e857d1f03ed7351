"""Run the shared conformance kit against ``pgvector-native``, as the adapter's CI does.

The kit is a pytest plugin; it runs in a child process so that its report and its target options do not
mix with this test session. Equivalent command line (from the repository root)::

    pytest --pyargs mastra_memory_conformance --target pgvector-native
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_the_conformance_kit_passes_on_pgvector_native(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--pyargs",
            "mastra_memory_conformance",
            "--target",
            "pgvector-native",
            "--conformance-report",
            str(tmp_path / "report"),
            "-p",
            "no:cacheprovider",
            "-o",
            "asyncio_default_fixture_loop_scope=function",
            "-q",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    report = json.loads((tmp_path / "report" / "conformance.json").read_text())
    outcomes = {result["outcome"] for result in report["results"]}
    assert outcomes <= {"pass", "deviation", "unsupported"}, outcomes
    domains = {result["domain"] for result in report["results"]}
    assert {"storage", "memory", "filters", "differential", "scores"} <= domains, domains
