"""The installed ``mastra-memory`` console script runs the main job end to end (as a newcomer would)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mastra_memory.cli import app
from mastra_memory.version import __version__

SCRIPT = Path(sys.executable).with_name("mastra-memory")


def test_console_script_runs_the_demo(tmp_path: Path) -> None:
    work, data = tmp_path / "work", tmp_path / "data"
    work.mkdir()
    env = {
        **os.environ,
        "MASTRA_MEMORY_DISABLE_ENTRYPOINTS": "1",
        "COLUMNS": "200",
        "HF_HUB_OFFLINE": "1",
        "XDG_DATA_HOME": str(data),
    }
    done = subprocess.run(
        [str(SCRIPT), "demo"], capture_output=True, text=True, env=env, cwd=work, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "We named the puppy Miso" in done.stdout
    db = data / "mastra-memory" / "demo.db"
    assert done.stdout.splitlines()[0] == f"using {db}"
    assert db.is_file()
    assert list(work.iterdir()) == []  # no demo database, no ./memory.db in the working directory


def test_console_script_lists_every_command() -> None:
    done = subprocess.run([str(SCRIPT), "--help"], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    for command in (
        "demo",
        "ingest",
        "recall",
        "threads",
        "reindex",
        "migrate",
        "export",
        "delete",
        "plugins",
    ):
        assert command in done.stdout


def test_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"mastra-memory {__version__}\n"


@pytest.mark.parametrize("args", [["-h"], ["recall", "-h"], ["ingest", "-h"], ["demo", "-h"]])
def test_dash_h_is_help(args: list[str]) -> None:
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Usage: " in result.stdout
    assert "-h, --help" in " ".join(result.stdout.split()) or "--help -h" in " ".join(result.stdout.split())


ALL_COMMANDS = ["demo", "ingest", "recall", "threads", "reindex", "migrate", "export", "delete", "plugins"]


@pytest.mark.parametrize("command", ALL_COMMANDS)
def test_json_is_shown_as_a_flag(command: str) -> None:
    result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    line = next(line for line in result.stdout.splitlines() if "--json" in line)
    assert "<bool>" not in line  # the help no longer suggests "--json true"
    assert "a flag" in line


@pytest.mark.parametrize("command", [[], *([c] for c in ALL_COMMANDS)])
def test_help_shows_no_value_type_for_any_flag(command: list[str]) -> None:
    """Issue 23 item 7: every help page showed ``--help -h <bool>``, as if the flag took a value."""
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "<bool>" not in result.stdout
    help_line = next(line for line in result.stdout.splitlines() if "--help" in line)
    assert help_line.strip("│ ").split()[:3] == ["--help", "-h", "Show"]  # no type between
