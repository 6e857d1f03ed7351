"""Shared test configuration: hypothesis profiles and the no-plugin-autoload rule.

Profiles: ``dev`` (default, quick), ``ci`` (selected by ``CI=true``; the counts stated in the README),
``deep`` (``MASTRA_MEMORY_HYPOTHESIS_PROFILE=deep``, for ``nox -s deep``).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# The project's own tests never autoload third-party plugins from entry points.
os.environ.setdefault("MASTRA_MEMORY_DISABLE_ENTRYPOINTS", "1")

_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("dev", max_examples=200, **_COMMON)
settings.register_profile("ci", max_examples=1000, derandomize=True, **_COMMON)
settings.register_profile("deep", max_examples=20000, **_COMMON)
settings.load_profile(
    os.environ.get("MASTRA_MEMORY_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)
