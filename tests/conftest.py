"""Shared test configuration: hypothesis profiles and seed, and the no-plugin-autoload rule.

Profiles: ``dev`` (default, quick), ``ci`` (selected by ``CI=true``; the counts stated in the README),
``deep`` (``MASTRA_MEMORY_HYPOTHESIS_PROFILE=deep``, for ``nox -s deep``). None is derandomised: every run
has a seed (``mastra_memory_conformance.seeding``: ``MASTRA_MEMORY_HYPOTHESIS_SEED``, else under ``CI``
the commit's, else random), shown in the header, the summary and with each failing property test, so
CI tries new examples on each commit and any run replays from its seed.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from mastra_memory_conformance import seeding

# The project's own tests never autoload third-party plugins from entry points.
os.environ.setdefault("MASTRA_MEMORY_DISABLE_ENTRYPOINTS", "1")

_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow],
    # Explicit: under CI hypothesis' default profile is derandomised, and profiles inherit from it.
    "derandomize": False,
    "print_blob": True,
}
settings.register_profile("dev", max_examples=200, **_COMMON)
settings.register_profile("ci", max_examples=1000, **_COMMON)
settings.register_profile("deep", max_examples=20000, **_COMMON)
settings.load_profile(
    os.environ.get("MASTRA_MEMORY_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


def pytest_configure(config: pytest.Config) -> None:
    seeding.install(config, __name__)


def pytest_unconfigure(config: pytest.Config) -> None:
    seeding.uninstall(config, __name__)


def pytest_report_header(config: pytest.Config) -> list[str]:
    return seeding.header(config, __name__)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    report = yield
    seeding.annotate(item, report, __name__)
    return report


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    seeding.summary(terminalreporter, config, __name__)
