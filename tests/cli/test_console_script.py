"""The installed ``mastra-memory`` console script runs the main job end to end (as a newcomer would)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_console_script_runs_the_demo(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("mastra-memory")
    env = {**os.environ, "MASTRA_MEMORY_DISABLE_ENTRYPOINTS": "1", "COLUMNS": "200", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [str(script), "demo"], capture_output=True, text=True, env=env, cwd=tmp_path, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "We named the puppy Miso" in done.stdout
    assert (tmp_path / "mastra-memory-demo.db").is_file()
    assert not (tmp_path / "memory.db").exists()


def test_console_script_lists_every_command() -> None:
    script = Path(sys.executable).with_name("mastra-memory")
    done = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    for command in ("demo", "ingest", "recall", "threads", "reindex", "plugins"):
        assert command in done.stdout
