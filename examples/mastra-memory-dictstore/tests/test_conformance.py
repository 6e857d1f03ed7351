"""Run the shared conformance kit against the ``dictstore`` target, as the adapter's CI does.

The kit is a pytest plugin; it runs in a child process so that its report and its target options do
not mix with this test session. Equivalent command line::

    pytest --pyargs mastra_memory_conformance --target dictstore
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_the_conformance_kit_passes(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--pyargs",
            "mastra_memory_conformance",
            "--target",
            "dictstore",
            "--conformance-report",
            str(tmp_path / "report"),
            "-p",
            "no:cacheprovider",
            "-q",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,  # the whole kit takes well under a minute; a hang fails instead of waiting forever
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    assert (tmp_path / "report" / "conformance.json").is_file()
