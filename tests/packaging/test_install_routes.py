"""Every install route the README shows gives a ``Memory`` that runs the README's quickstart (issue 29).

Each route is installed into a fresh venv with uv, exactly as the README writes it, and the quickstart --
the first Python block of README.md, which uses the default embedder ``local/wordllama`` -- runs there from
an empty directory and must print the check-in message as its best hit. The routes: "Run it" (``-e
".[cli,wordllama]"``), "From a clone" (``-e . -e "./adapters/qdrant[edge]"``), ``uv sync --extra qdrant``,
and "As published"/"From PyPI" (``mastra-memory`` and ``mastra-memory[qdrant]`` from wheels built from this
tree, ``--find-links``). ``nox -s packages`` runs the published route for every other adapter
(tests/packaging/smoke.py). uv tries its cache first (``--offline``) and reaches the package index only on a
cold cache; every step has a time limit.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mastra_memory_conformance.doc_examples import python_blocks
from mastra_memory_conformance.missing import need_tool

ROOT = Path(__file__).resolve().parents[2]
#: The quickstart's best hit, with the score the README quotes for the default embedder.
EXPECTED = "0.58 [trip] Book the Hoshinoya in Kyoto, check-in April 3."
INSTALL_TIMEOUT = 600
RUN_TIMEOUT = 180

pytestmark = [pytest.mark.slow, pytest.mark.timeout(INSTALL_TIMEOUT + RUN_TIMEOUT + 120)]


def run(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: int = RUN_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout, check=False
    )


def clean_env() -> dict[str, str]:
    """The environment without our switches (plugins autoload) and without the outer venv."""
    drop = ("MASTRA_MEMORY_", "VIRTUAL_ENV", "PYTHONPATH", "PYTEST_", "UV_PROJECT_ENVIRONMENT")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


def install(*args: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> None:
    """Run a uv install command from its cache first, from the package index when the cache is cold."""
    done = run(*args, "--offline", cwd=cwd, env=env, timeout=INSTALL_TIMEOUT)
    if done.returncode != 0:
        done = run(*args, cwd=cwd, env=env, timeout=INSTALL_TIMEOUT)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def uv() -> str:
    return need_tool("uv", "install each README route into a fresh virtual environment", env_var="UV")


@pytest.fixture(scope="module")
def wheels(uv: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheels of the core and the Qdrant adapter, built from this tree (what a release publishes)."""
    dist = tmp_path_factory.mktemp("dist")
    for package in ("mastra-memory", "mastra-memory-qdrant"):
        built = run(uv, "build", "--quiet", "--wheel", "--package", package, "--out-dir", dist, cwd=ROOT,
                    timeout=INSTALL_TIMEOUT)  # fmt: skip
        assert built.returncode == 0, built.stderr
    return dist


def fresh_venv(uv: str, where: Path) -> Path:
    created = run(uv, "venv", "--quiet", "--python", sys.executable, where)
    assert created.returncode == 0, created.stderr
    return where / "bin" / "python"


def run_quickstart(python: Path, work: Path) -> str:
    """The README's first Python block, run by ``python`` from the empty directory ``work``."""
    work.mkdir(parents=True, exist_ok=True)
    script = work / "quickstart.py"
    script.write_text(python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))[0], encoding="utf-8")
    done = run(python, script, cwd=work, env=clean_env())
    assert done.returncode == 0, done.stderr
    located = run(
        python, "-c", "import mastra_memory; print(mastra_memory.__file__)", cwd=work, env=clean_env()
    )
    assert located.returncode == 0, located.stderr
    return done.stdout + located.stdout


@pytest.mark.parametrize(
    ("route", "requirements"),
    [
        pytest.param("run-it", ["-e", ".[cli,wordllama]"], id="run-it: -e .[cli,wordllama]"),
        pytest.param(
            "clone", ["-e", ".", "-e", "./adapters/qdrant[edge]"], id="clone: -e . -e adapters/qdrant"
        ),
    ],
)
def test_an_editable_route_runs_the_quickstart(
    uv: str, tmp_path: Path, route: str, requirements: list[str]
) -> None:
    python = fresh_venv(uv, tmp_path / "venv")
    install(uv, "pip", "install", "--quiet", "--python", python, *requirements)
    out = run_quickstart(python, tmp_path / "work")
    assert EXPECTED in out, out
    assert str(ROOT / "core" / "mastra_memory") in out, out  # the editable source tree


@pytest.mark.parametrize("requirement", ["mastra-memory", "mastra-memory[qdrant]"])
def test_the_published_route_runs_the_quickstart(
    uv: str, wheels: Path, tmp_path: Path, requirement: str
) -> None:
    venv = tmp_path / "venv"
    python = fresh_venv(uv, venv)
    install(uv, "pip", "install", "--quiet", "--python", python, "--find-links", wheels, requirement)
    out = run_quickstart(python, tmp_path / "work")
    assert EXPECTED in out, out
    assert str(venv.resolve()) in out or str(venv) in out, out  # the installed wheel, not the tree


def test_uv_sync_with_an_adapter_extra_runs_the_quickstart(uv: str, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    env = {**clean_env(), "UV_PROJECT_ENVIRONMENT": str(venv)}
    install(uv, "sync", "--quiet", "--locked", "--extra", "qdrant", "--python", sys.executable, env=env)
    out = run_quickstart(venv / "bin" / "python", tmp_path / "work")
    assert EXPECTED in out, out
