"""Hypothesis seeds (issue 23, item 4): CI explores new examples per commit and any run replays from its seed.

The profiles of the core tests (``tests/conftest.py``) and of the kit (``conformance-*``) are never
derandomised; ``mastra_memory_conformance.seeding`` picks the seed (``MASTRA_MEMORY_HYPOTHESIS_SEED``, else
the commit under ``CI``, else random) and prints it in the header, with each failing property test and in
the summary.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import core, given, settings
from hypothesis import strategies as st

from mastra_memory_conformance import seeding
from mastra_memory_conformance.plugin import PROFILES

from .conftest import REGISTER_CONFTEST

COMMIT = "a689fbc14e4b7a1e0c1f2d3e4f5a6b7c8d9e0f1a"


@pytest.fixture
def forced_seed() -> Iterator[None]:
    """Put back the run's own forced seed after a test that sets another."""
    previous: Any = core.global_force_seed
    yield
    core.global_force_seed = previous  # type: ignore[assignment]


def drawn(profile: str, seed: int) -> list[int]:
    """The integers a property test under ``profile`` draws when the run's seed is ``seed``."""
    seen: list[int] = []

    @settings(settings.get_profile(profile), max_examples=20, database=None)
    @given(st.integers())
    def probe(n: int) -> None:
        seen.append(n)

    core.global_force_seed = seed  # type: ignore[assignment]
    probe()
    return seen


@pytest.mark.usefixtures("forced_seed")
@pytest.mark.parametrize("profile", ["ci", *(f"conformance-{name}" for name in PROFILES)])
def test_each_profile_explores_by_seed_and_replays_a_seed(profile: str) -> None:
    # A derandomised profile draws the same examples whatever the seed: CI would never try new ones.
    assert drawn(profile, 1) != drawn(profile, 2)
    assert drawn(profile, 1) == drawn(profile, 1)
    assert settings.get_profile(profile).print_blob


def test_the_seed_comes_from_the_variable_then_the_commit_then_chance(tmp_path: Path) -> None:
    outside_git = tmp_path  # git rev-parse fails here, so the CI's commit variable is read
    given = seeding.resolve({"MASTRA_MEMORY_HYPOTHESIS_SEED": " 1234 ", "CI": "true"}, outside_git)
    assert given == seeding.HypothesisSeed(1234, "MASTRA_MEMORY_HYPOTHESIS_SEED")
    ci = seeding.resolve({"CI": "true", "GITHUB_SHA": COMMIT}, outside_git)
    assert ci == seeding.HypothesisSeed(int(COMMIT[:12], 16), f"commit {COMMIT[:12]}")
    assert seeding.resolve({"CI": "true", "GITHUB_SHA": COMMIT}, outside_git) == ci  # a re-run replays
    assert seeding.commit_seed(COMMIT) != seeding.commit_seed("b" + COMMIT[1:])  # each commit explores
    chance = {seeding.resolve({}, outside_git) for _ in range(3)}
    assert len(chance) == 3
    assert all(s.source == "random" for s in chance)
    with pytest.raises(pytest.UsageError, match="not an integer"):
        seeding.resolve({"MASTRA_MEMORY_HYPOTHESIS_SEED": "abc"}, outside_git)


def test_under_ci_the_seed_is_the_commit_of_the_checkout(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(
        ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
         "--allow-empty", "-m", "x"],
        check=True,
    )  # fmt: skip
    head = subprocess.run(
        ["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    seed = seeding.resolve({"CI": "true", "GITHUB_SHA": COMMIT}, tmp_path)
    assert seed == seeding.HypothesisSeed(int(head[:12], 16), f"commit {head[:12]}")


PROPERTY = """
from hypothesis import given, strategies as st


@given(st.integers())
def test_breaks(n):
    print("drew", n)
    assert n < 10**6


@given(st.text())
def test_holds(s):
    print("drew", repr(s))
"""


def _run(kit_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, **env: str) -> pytest.RunResult:
    for name in ("MASTRA_MEMORY_HYPOTHESIS_SEED", "CI", "GITHUB_SHA", "CI_COMMIT_SHA"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    # A selected target makes the kit load its profile and install the seed.
    return kit_pytester.runpytest(
        "-p", "no:socket", "-s", "--target", "sqlite", "--conformance-profile", "ci"
    )


def test_a_kit_run_prints_its_seed_and_a_failure_replays_from_it(
    kit_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    outer: Any = core.global_force_seed
    kit_pytester.makepyfile(test_property=PROPERTY, extra_plugin="")
    kit_pytester.makeconftest(REGISTER_CONFTEST)
    first = _run(kit_pytester, monkeypatch, CI="true", GITHUB_SHA=COMMIT)
    seed = int(COMMIT[:12], 16)
    line = f"hypothesis seed {seed} (commit {COMMIT[:12]}); replay with MASTRA_MEMORY_HYPOTHESIS_SEED={seed}"
    first.assert_outcomes(passed=1, failed=1)
    text = first.stdout.str()
    # The header, the failing test's own section and the summary all name the seed.
    assert text.count(line) == 3, text
    assert "@reproduce_failure(" in text
    # The same seed from the variable replays the same examples; another commit draws others.
    again = _run(kit_pytester, monkeypatch, MASTRA_MEMORY_HYPOTHESIS_SEED=str(seed))
    other = _run(kit_pytester, monkeypatch, CI="true", GITHUB_SHA="f" + COMMIT[1:])

    def draws(result: pytest.RunResult) -> list[str]:
        return [ln for ln in result.stdout.lines if ln.startswith("drew ")]

    assert draws(first)
    assert draws(again) == draws(first)
    assert draws(other) != draws(first)
    # An in-process run puts back the forced seed it found.
    assert core.global_force_seed == outer
