"""A third-party distribution installed into a fresh virtual environment is found by its entry point.

This is the whole plugin story end to end: `uv venv`, `uv pip install` the core and the fixture
distribution tests/plugins/fixtures/mastra-memory-dummyplugin, then ask the installed `mastra-memory`
command and `create_vector` in that environment. uv prefers its local cache, so a warm machine needs no
network; on a cold one uv fetches the core's dependencies from the package index.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mastra_memory_conformance.missing import need_tool

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "mastra-memory-dummyplugin"

USE_DUMMY = """
import asyncio, json
import mastra_memory_dummyplugin
from mastra_memory.plugins import create_vector

async def main():
    store = create_vector("dummy", label="fresh-venv")
    await store.create_index("docs", 2)
    await store.upsert("docs", [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    stats = await store.describe_index("docs")
    print(json.dumps({"type": type(store).__name__, "label": store.label, "count": stats.count,
                      "module": mastra_memory_dummyplugin.__file__}))

asyncio.run(main())
"""


def run(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env, check=False)


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    uv = need_tool("uv", "build the fresh virtual environment", env_var="UV")
    location = tmp_path_factory.mktemp("fresh") / "venv"
    created = run(uv, "venv", "--quiet", "--python", sys.executable, location)
    assert created.returncode == 0, created.stderr
    python = location / "bin" / "python"
    install = [uv, "pip", "install", "--quiet", "--python", python, "-e", f"{ROOT}[cli]", FIXTURE]
    done = run(*install, "--offline")
    if done.returncode != 0:  # cold cache: let uv reach the package index
        done = run(*install)
    assert done.returncode == 0, done.stderr
    return location


def clean_env() -> dict[str, str]:
    """The environment without our plugin switches (so autoload is on) and without the outer venv."""
    drop = ("MASTRA_MEMORY_", "VIRTUAL_ENV", "PYTHONPATH")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


@pytest.mark.slow
def test_installed_plugin_is_listed_by_the_console_script(venv: Path) -> None:
    done = run(venv / "bin" / "mastra-memory", "plugins", "--json", env=clean_env())
    assert done.returncode == 0, done.stderr
    plugins = {p["name"]: p for p in json.loads(done.stdout)}
    dummy = plugins["dummy"]
    assert dummy["source"] == "entrypoint"
    assert dummy["distribution"] == "mastra-memory-dummyplugin"
    assert dummy["version"] == "0.3.1"
    assert dummy["vector_stores"] == ["dummy"]
    assert dummy["embedder_providers"] == ["dummy"]
    assert plugins["mastra_memory.stores.sqlite.plugin"]["source"] == "builtin"


@pytest.mark.slow
def test_installed_plugin_builds_its_vector_store(venv: Path) -> None:
    done = run(venv / "bin" / "python", "-c", USE_DUMMY, env=clean_env())
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result == {"type": "DummyVector", "label": "fresh-venv", "count": 3, "module": result["module"]}
    assert Path(result["module"]).is_relative_to(venv)  # the installed copy, not the source tree


@pytest.mark.slow
def test_allow_list_keeps_the_installed_plugin_out(venv: Path) -> None:
    env = {**clean_env(), "MASTRA_MEMORY_LOAD_PLUGINS": ""}
    done = run(venv / "bin" / "mastra-memory", "plugins", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert "dummy" not in {p["name"] for p in json.loads(done.stdout)}
