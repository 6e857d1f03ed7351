"""A default time limit for every conformance test, so a hung backend fails in minutes with a stack dump.

The kit depends on pytest-timeout. When a run configures no timeout of its own (``--timeout``, the
``timeout`` ini option or ``PYTEST_TIMEOUT``), each kit test gets ``DEFAULT_TEST_TIMEOUT`` seconds, setup
included — a target's provisioning (a server build on a fresh machine) runs in setup, which is why the
limit is generous. A hang then fails that test, prints every thread's stack and the run goes on. A
property test gets ``PER_EXAMPLE`` seconds more per example of the loaded hypothesis profile (the ``deep``
profile's 3,000 examples take the pinecone emulator about 50 minutes per test).
"""

from __future__ import annotations

import os
from typing import Final

import pytest
from hypothesis import is_hypothesis_test, settings

#: Seconds per kit test (setup + call + teardown) when the run sets no timeout itself.
DEFAULT_TEST_TIMEOUT: Final = 600.0
#: Seconds more per hypothesis example for a property test (the slowest target needs about one).
PER_EXAMPLE: Final = 2.0


def _configured(config: pytest.Config) -> bool:
    if config.getoption("timeout", None) is not None or os.environ.get("PYTEST_TIMEOUT"):
        return True
    try:
        return bool(config.getini("timeout"))
    except ValueError:  # pytest-timeout not loaded (e.g. `-p no:timeout`): nothing to configure
        return True


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _configured(config):
        return
    examples = settings().max_examples  # the profile the kit loaded
    for item in items:
        if "conformance_target" in getattr(item, "fixturenames", ()) and not item.get_closest_marker(
            "timeout"
        ):
            extra = PER_EXAMPLE * examples if is_hypothesis_test(getattr(item, "obj", None)) else 0.0
            item.add_marker(pytest.mark.timeout(DEFAULT_TEST_TIMEOUT + extra))
