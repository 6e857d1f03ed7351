"""Skip-or-fail for the server smoke tests (see conftest.py)."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def servers_required() -> bool:
    """Whether an unavailable server or client is a failure rather than a skip."""
    return os.environ.get("MASTRA_MEMORY_REQUIRE_SERVERS", "").strip() == "1" or bool(os.environ.get("CI"))


def unavailable(reason: str) -> NoReturn:
    """Skip with ``reason`` (also at module level, for a missing client); fail where servers are required."""
    if servers_required():
        pytest.fail(f"{reason} (servers are required: CI or MASTRA_MEMORY_REQUIRE_SERVERS=1)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)
