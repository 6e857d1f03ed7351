"""Fixtures of the conformance-kit tests: pytester, and a way to give a pytester run its own targets.

``pytester`` is enabled from ``pytest_configure`` because ``pytest_plugins`` is only honoured in the
top-level conftest. A pytester run registers extra plugins (a broken store with the core, targets with
the kit) from its own conftest with :data:`REGISTER_CONFTEST`, and unregisters them when it ends, so the
process-wide plugin managers are left as they were.
"""

from __future__ import annotations

import pytest

# Loaded by a pytester run's conftest: registers the module ``extra_plugin`` of the run's directory with
# mastra-memory's plugin manager (its store hooks) and with the kit's target manager (its target hook) for
# the duration of that run.
REGISTER_CONFTEST = """
import extra_plugin
from mastra_memory.plugins import get_plugin_manager
from mastra_memory_conformance.registry import get_target_manager

MANAGERS = (get_plugin_manager(), get_target_manager())
for manager in MANAGERS:
    manager.register(extra_plugin, name="extra_plugin")


def pytest_unconfigure(config):
    for manager in MANAGERS:
        if manager.is_registered(extra_plugin):
            manager.unregister(extra_plugin)
"""


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")


@pytest.fixture
def kit_pytester(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester whose runs see the kit (an installed pytest11 plugin) and not this repo's ini options."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    return pytester
