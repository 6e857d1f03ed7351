"""Run the shared conformance kit against the ``lancedb`` target, as the adapter's CI does.

The kit runs in a child process (in a scratch directory, so no project conftest changes its plugin
loading) so that its report and target options do not mix with this session. Equivalent to::

    pytest --pyargs mastra_memory_conformance --target lancedb
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def test_the_conformance_kit_passes(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "MASTRA_MEMORY_DISABLE_ENTRYPOINTS"}
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest", "--pyargs", "mastra_memory_conformance", "--target", "lancedb",
            "--conformance-report", str(tmp_path / "report"), "-p", "no:cacheprovider", "-q",
            "-o", "asyncio_default_fixture_loop_scope=function",
        ],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    report = json.loads((tmp_path / "report" / "conformance.json").read_text())
    assert "lancedb" in json.dumps(report)
