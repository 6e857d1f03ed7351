"""One hypothesis seed per test run: new examples on every commit, the same examples for the same seed.

Hypothesis' own CI mode is derandomised: each test replays the examples its source code hashes to, so a
CI that never changes a test never tries a new example (issue 23: a FerretDB bug that a developer's run
found twice stayed invisible to CI). Here every run has a seed instead, printed in the pytest header,
with every failing property test and in the terminal summary:

1. ``MASTRA_MEMORY_HYPOTHESIS_SEED`` (an integer) when it is set: the replay of a run;
2. under ``CI``, the first 12 hex digits of the commit (``git rev-parse HEAD``, else ``GITHUB_SHA`` /
   ``CI_COMMIT_SHA``) as an integer: each commit explores new examples, and re-running a commit replays
   them;
3. otherwise a fresh random seed.

``pytest --hypothesis-seed=N`` is honoured as given. The seed is applied as that option applies it
(``hypothesis.core.global_force_seed``): each test draws from ``Random(seed)``, so one test run alone
with the seed replays its examples. Hypothesis uses no example database under a forced seed (a saved
example would change the run); the replay is the seed, and ``print_blob`` adds the
``@reproduce_failure`` line of the one failing example. A failure found this way then becomes a fixed
case (docs/conformance.md, "When a random test fails").

The core tests (``tests/conftest.py``) and the kit's plugin (when a target is selected) call
:func:`install`, :func:`header`, :func:`annotate` and :func:`summary` from their hooks.
"""

from __future__ import annotations

import os
import random
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import core, is_hypothesis_test

__all__ = [
    "ENV_SEED",
    "HypothesisSeed",
    "annotate",
    "commit_seed",
    "current_commit",
    "header",
    "install",
    "installed",
    "resolve",
    "summary",
    "uninstall",
]

ENV_SEED: Final = "MASTRA_MEMORY_HYPOTHESIS_SEED"
#: Hex digits of a commit that make its seed: 48 bits, short enough to type, far from colliding.
COMMIT_DIGITS: Final = 12
_COMMIT_VARIABLES: Final = ("GITHUB_SHA", "CI_COMMIT_SHA")
_KEY = pytest.StashKey["_Installed"]()
# What ``--hypothesis-seed`` sets (typed ``None`` by hypothesis, an int or str when set).
_CORE: Any = core


@dataclass(frozen=True)
class HypothesisSeed:
    """The seed of a run and where it came from (``"commit 1a2b3c4d5e6f"``, ``"MASTRA_MEMORY_...``)."""

    value: int | str
    source: str

    @property
    def replay(self) -> str:
        """The environment setting that replays this run."""
        return f"{ENV_SEED}={self.value}"

    def describe(self) -> str:
        return (
            f"hypothesis seed {self.value} ({self.source}); replay with {self.replay} "
            f"(or pytest --hypothesis-seed={self.value})"
        )


@dataclass(frozen=True)
class _Installed:
    seed: HypothesisSeed
    previous: object
    owner: str


def commit_seed(commit: str) -> int:
    """The seed of a commit: its first :data:`COMMIT_DIGITS` hex digits as an integer."""
    digits = commit.strip()[:COMMIT_DIGITS]
    try:
        return int(digits, 16)
    except ValueError:
        raise ValueError(f"not a commit id: {commit!r}") from None


def current_commit(cwd: Path | None = None, environ: Mapping[str, str] = os.environ) -> str | None:
    """``git rev-parse HEAD`` in ``cwd``, else the CI's commit variable, else ``None``."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        done = None
    if done is not None and done.returncode == 0 and done.stdout.strip():
        return done.stdout.strip()
    for name in _COMMIT_VARIABLES:
        if environ.get(name):
            return environ[name]
    return None


def resolve(environ: Mapping[str, str] = os.environ, cwd: Path | None = None) -> HypothesisSeed:
    """The seed of this run (see the module docstring for the order)."""
    raw = environ.get(ENV_SEED, "").strip()
    if raw:
        try:
            return HypothesisSeed(int(raw), ENV_SEED)
        except ValueError:
            raise pytest.UsageError(f"{ENV_SEED}={raw!r} is not an integer") from None
    if environ.get("CI"):
        commit = current_commit(cwd, environ)
        if commit is not None:
            return HypothesisSeed(commit_seed(commit), f"commit {commit[:COMMIT_DIGITS]}")
    return HypothesisSeed(random.SystemRandom().getrandbits(4 * COMMIT_DIGITS), "random")


def install(config: pytest.Config, owner: str) -> HypothesisSeed:
    """Force this run's seed on every hypothesis test (``--hypothesis-seed`` wins).

    Once per session: the first ``owner`` (a conftest, the kit's plugin) installs it and is the one whose
    :func:`header`, :func:`annotate`, :func:`summary` and :func:`uninstall` act.
    """
    done = config.stash.get(_KEY, None)
    if done is not None:
        return done.seed
    given = config.getoption("hypothesis_seed", None)
    previous = _CORE.global_force_seed
    if given is not None:  # hypothesis' plugin reads it the same way
        seed = HypothesisSeed(int(given) if str(given).isdigit() else str(given), "--hypothesis-seed")
    else:
        seed = resolve(cwd=Path(config.invocation_params.dir))
    _CORE.global_force_seed = seed.value
    config.stash[_KEY] = _Installed(seed, previous, owner)
    return seed


def installed(config: pytest.Config, owner: str | None = None) -> HypothesisSeed | None:
    """The run's seed (installed by ``owner``, when given)."""
    done = config.stash.get(_KEY, None)
    if done is None or (owner is not None and done.owner != owner):
        return None
    return done.seed


def uninstall(config: pytest.Config, owner: str) -> None:
    """Put back the forced seed there was before (in-process pytester runs share the module)."""
    done = config.stash.get(_KEY, None)
    if done is not None and done.owner == owner:
        _CORE.global_force_seed = done.previous
        del config.stash[_KEY]


def header(config: pytest.Config, owner: str) -> list[str]:
    seed = installed(config, owner)
    return [] if seed is None else [seed.describe()]


def annotate(item: pytest.Item, report: pytest.TestReport, owner: str) -> None:
    """Add the replaying seed to the report of a failed hypothesis test."""
    seed = installed(item.config, owner)
    if seed is None or not report.failed or report.when != "call":
        return
    if is_hypothesis_test(getattr(item, "obj", None)):
        report.sections.append(("hypothesis seed", f"{seed.describe()}\n"))


def summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config, owner: str) -> None:
    seed = installed(config, owner)
    if seed is not None:
        terminalreporter.write_line(seed.describe())
