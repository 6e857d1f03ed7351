"""``mastra-memory plugins``: a table (or JSON) of the loaded plugins and what each provides."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mastra_memory import __version__
from mastra_memory.cli import app
from mastra_memory.plugins import ENV_LOAD

MakeDistribution = Callable[..., Path]
SQLITE_PLUGIN = "mastra_memory.stores.sqlite.plugin"
WIDE = {"COLUMNS": "220"}  # one table row per line, so the assertions can read rows


def test_json_lists_builtins_with_what_they_provide() -> None:
    result = CliRunner().invoke(app, ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    plugins = {p["name"]: p for p in json.loads(result.stdout)}
    assert plugins[SQLITE_PLUGIN] == {
        "name": SQLITE_PLUGIN,
        "version": __version__,
        "source": "builtin",
        "distribution": "mastra-memory",
        "vector_stores": ["sqlite"],
        "storages": ["sqlite"],
        "embedder_providers": [],
    }
    assert "hash" in plugins["mastra_memory.embedders.builtin"]["embedder_providers"]


def test_table_shows_name_version_source_and_provides() -> None:
    result = CliRunner().invoke(app, ["plugins"], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "mastra-memory plugins" in result.stdout  # the title
    lines = result.stdout.splitlines()
    header = next(line for line in lines if "Plugin" in line)
    assert [cell.strip() for cell in header.strip("┃ ").split("┃")] == [
        "Plugin",
        "Version",
        "Source",
        "Provides",
    ]
    at = next(i for i, line in enumerate(lines) if SQLITE_PLUGIN in line)
    assert [cell.strip() for cell in lines[at].strip("│ ").split("│")] == [
        SQLITE_PLUGIN,
        __version__,
        "builtin",
        "vector stores: sqlite",
    ]
    assert "storages: sqlite" in lines[at + 1]


@pytest.mark.usefixtures("entrypoints", "dummy_distribution")
def test_table_shows_an_entry_point_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_LOAD, "dummy")
    result = CliRunner().invoke(app, ["plugins"], env=WIDE)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.stdout.splitlines() if "│ dummy " in line)
    assert [cell.strip() for cell in row.strip("│ ").split("│")] == [
        "dummy",
        "0.3.1",
        "entrypoint",
        "vector stores: dummy",
    ]


@pytest.mark.usefixtures("entrypoints")
def test_plugin_failure_is_one_error_line_and_exit_status_1(
    distribution: MakeDistribution, monkeypatch: pytest.MonkeyPatch
) -> None:
    distribution("plugin-bad", "1.0", {"bad": "plugin_bad"}, {"plugin_bad": "raise RuntimeError('boom')\n"})
    monkeypatch.setenv(ENV_LOAD, "bad")
    result = CliRunner().invoke(app, ["plugins"], env=WIDE)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "error: plugin entry point 'bad'" in result.stderr
    assert "RuntimeError: boom" in result.stderr
    assert "Traceback" not in result.stderr


def test_no_arguments_shows_help() -> None:
    result = CliRunner().invoke(app, [])
    assert "plugins" in result.output
    assert "Usage" in result.output


def test_module_runs_as_a_program() -> None:
    env = {**os.environ, "MASTRA_MEMORY_DISABLE_ENTRYPOINTS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mastra_memory.cli", "plugins", "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    names = [p["name"] for p in json.loads(done.stdout)]
    assert names == [SQLITE_PLUGIN, "mastra_memory.embedders.builtin"]


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).with_name("mastra-memory")
    env = {**os.environ, "MASTRA_MEMORY_DISABLE_ENTRYPOINTS": "1", **WIDE}
    done = subprocess.run([str(script), "plugins"], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert "mastra-memory plugins" in done.stdout  # the table title
    assert SQLITE_PLUGIN in done.stdout
    assert "vector stores: sqlite" in done.stdout
