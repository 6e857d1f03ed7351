"""Running Mastra itself for the interop tests (issue 25): the pinned ``@mastra/*`` packages of
``tests/interop/mastra`` installed with ``npm ci`` when they are not there yet, and one Node process that
answers a whole request (``mastra/messages.mjs`` says what it takes and gives).

Node or npm missing, or an install that fails, follows the rule of ``mastra_memory_conformance.missing``:
the tests skip with the reason, and fail under CI.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from mastra_memory_conformance.missing import missing, need_tool

PROJECT = Path(__file__).parent / "mastra"
#: ``npm ci`` of the three packages took 11 s from the registry here; a hung registry fails in minutes.
NPM_TIMEOUT = 240
#: One request, every case: about 1 s.
NODE_TIMEOUT = 120


def _pins() -> dict[str, str]:
    return dict(json.loads((PROJECT / "package.json").read_text())["dependencies"])


def _installed() -> bool:
    """Whether node_modules holds exactly the pinned versions (so a run after ``npm ci`` installs nothing)."""
    for name, version in _pins().items():
        manifest = PROJECT / "node_modules" / name / "package.json"
        if not manifest.is_file() or json.loads(manifest.read_text()).get("version") != version:
            return False
    return True


def ensure_installed() -> str:
    """The path of ``node`` once the pinned packages are installed; or skip/fail saying why not."""
    node = need_tool("node", "run Mastra's own MessageList (tests/interop/mastra)")
    if _installed():
        return node
    npm = need_tool("npm", "install the pinned @mastra/* packages of tests/interop/mastra")
    # Two test processes at once must not run `npm ci` in one folder together.
    lock_path = Path(tempfile.gettempdir()) / "mastra-memory-interop-npm.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _installed():
            return node
        try:
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=PROJECT,
                capture_output=True,
                text=True,
                timeout=NPM_TIMEOUT,
                env={**os.environ, "npm_config_update_notifier": "false"},
            )
        except subprocess.TimeoutExpired:
            missing(f"`npm ci` in {PROJECT} did not finish within {NPM_TIMEOUT} s")
        if done.returncode != 0 or not _installed():
            missing(f"`npm ci` in {PROJECT} failed (exit {done.returncode}): {done.stderr.strip()[-600:]}")
    return node


def run_mastra(request: dict[str, Any], script: str = "messages.mjs") -> dict[str, Any]:
    """Mastra's answer to ``request`` from one of the Node scripts in ``mastra/`` (what ``messages.mjs``
    takes and gives is said at its top); the process is bounded by a timeout."""
    node = ensure_installed()
    done = subprocess.run(
        [node, script],
        cwd=PROJECT,
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=NODE_TIMEOUT,
    )
    if done.returncode != 0:
        raise AssertionError(f"Mastra's {script} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer
