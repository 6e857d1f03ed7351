"""Developer and CI sessions. ``nox`` with no arguments runs lint, typecheck and tests (the CI gate).

Every session builds its environment with ``uv sync --locked`` from ``uv.lock``, so CI installs exactly
what was tested here. Hypothesis runs the ``ci`` profile when ``CI`` is set (see tests/conftest.py).
"""

from __future__ import annotations

import os

import nox

nox.options.default_venv_backend = "uv"
nox.options.sessions = ["lint", "typecheck", "tests"]
nox.options.reuse_existing_virtualenvs = True


def _sync(session: nox.Session, *groups: str, extras: tuple[str, ...] = ()) -> None:
    """Install the workspace (editable) plus the named dependency groups into the session's venv."""
    args = ["uv", "sync", "--locked", "--no-default-groups"]
    for group in groups:
        args += ["--group", group]
    for extra in extras:
        args += ["--extra", extra]
    session.run_install(*args, env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location}, silent=True)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff: lint and formatting."""
    _sync(session, "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the core package."""
    _sync(session, "typecheck", extras=("cli",))
    session.run("mypy")


@nox.session
def tests(session: nox.Session) -> None:
    """The core test suite (filters, stores, plugins, embedders, memory)."""
    _sync(session, "test", extras=("wordllama",))
    session.run("pytest", *session.posargs)


@nox.session
def deep(session: nox.Session) -> None:
    """The property-based tests with many more examples (not part of CI)."""
    _sync(session, "test", extras=("wordllama",))
    session.run(
        "pytest",
        "-m",
        "not slow",
        *session.posargs,
        env={"MASTRA_MEMORY_HYPOTHESIS_PROFILE": "deep"},
    )


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks: ingest throughput and query latency (numbers, never pass/fail)."""
    _sync(session, "test", extras=("wordllama",))
    session.run(
        "python",
        "tests/benchmarks/run.py",
        *session.posargs,
        env={"PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0")},
    )
