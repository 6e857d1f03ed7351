"""Nothing waits without a bound: every pytest configuration of the project sets a per-test timeout, a hung
test fails within it and prints where it hung, and the conformance kit bounds its tests by default."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from mastra_memory_conformance.plugin import PROFILES
from mastra_memory_conformance.timeouts import DEFAULT_TEST_TIMEOUT, PER_EXAMPLE

ROOT = Path(__file__).resolve().parents[1]

pytest_plugins = ["pytester"]


def _pytest_configs() -> list[Path]:
    found = [
        ROOT / "pyproject.toml",
        *ROOT.glob("adapters/*/pyproject.toml"),
        *ROOT.glob("examples/*/pyproject.toml"),
    ]
    return [p for p in found if "pytest" in tomllib.loads(p.read_text()).get("tool", {})]


@pytest.mark.parametrize("config", _pytest_configs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_pytest_configuration_sets_a_per_test_timeout(config: Path) -> None:
    options = tomllib.loads(config.read_text())["tool"]["pytest"]["ini_options"]
    assert 0 < float(options["timeout"]) <= 600, f"{config}: set [tool.pytest.ini_options] timeout"


def test_a_hung_test_fails_within_its_timeout_and_prints_where(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ntimeout = 2\n")
    pytester.makepyfile(
        test_hang="""
        import threading

        def stuck_in_this_function():
            threading.Event().wait()

        def test_hangs():
            stuck_in_this_function()

        def test_after_the_hang_still_runs():
            assert True
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=1, failed=1)
    output = result.stdout.str()
    assert "Timeout" in output
    assert "stuck_in_this_function" in output  # the stack dump names the frame that hung


def test_the_kit_bounds_each_test_when_the_run_sets_no_timeout(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest(
        """
        def pytest_collection_finish(session):
            for item in session.items:
                marker = item.get_closest_marker("timeout")
                print("LIMIT", item.name, marker.args[0] if marker else None)
        """
    )
    pytester.makepyfile(test_kit="def test_uses_a_target(conformance_target):\n    pass\n")
    kit_default = pytester.runpytest_subprocess("--target", "sqlite", "--collect-only", "-q", timeout=120)
    assert f"LIMIT test_uses_a_target[sqlite] {DEFAULT_TEST_TIMEOUT}" in kit_default.stdout.str()
    # A timeout the run configures itself wins: the kit adds no marker of its own.
    own = pytester.runpytest_subprocess(
        "--target", "sqlite", "--timeout", "30", "--collect-only", "-q", timeout=120
    )
    assert "LIMIT test_uses_a_target[sqlite] None" in own.stdout.str()


def test_a_property_test_gets_time_for_each_example_of_the_profile(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest(
        """
        def pytest_collection_finish(session):
            for item in session.items:
                print("LIMIT", item.name, item.get_closest_marker("timeout").args[0])
        """
    )
    pytester.makepyfile(
        test_kit="""
        from hypothesis import given, strategies as st

        def test_fixed(conformance_target):
            pass

        @given(st.integers())
        def test_random(conformance_target, n):
            pass
        """
    )
    deep = pytester.runpytest_subprocess(
        "--target", "sqlite", "--conformance-profile", "deep", "--collect-only", "-q", timeout=120
    )
    examples = PROFILES["deep"]
    assert f"LIMIT test_fixed[sqlite] {DEFAULT_TEST_TIMEOUT}" in deep.stdout.str()
    assert f"LIMIT test_random[sqlite] {DEFAULT_TEST_TIMEOUT + PER_EXAMPLE * examples}" in deep.stdout.str()
