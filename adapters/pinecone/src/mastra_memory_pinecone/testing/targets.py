"""How the conformance kit obtains a Pinecone (``pytest --pyargs mastra_memory_conformance --target …``).

====================  ========  =======================================================================
target                kind      backend
====================  ========  =======================================================================
``pinecone-emulated``  emulated  this adapter's loopback Pinecone emulator
                                (:mod:`mastra_memory_pinecone.testing.emulator`), started in a
                                thread on a free port with writes visible after 50 ms
``pinecone-local``     docker    a Pinecone Local container you started (``docker run -p 5080-5090:5080-5090
                                ghcr.io/pinecone-io/pinecone-local``), named by
                                ``MASTRA_MEMORY_TEST_PINECONE_LOCAL_URL``; skipped without Docker
``pinecone-cloud``     url       Pinecone's service with ``MASTRA_MEMORY_TEST_PINECONE_API_KEY``; never in
                                CI, and unavailable inside the kit, whose socket guard allows loopback only
====================  ========  =======================================================================

The kit finds them through the entry point ``pinecone`` of the group ``mastra_memory_conformance``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from mastra_memory_conformance.docker import docker_unavailable_reason
from mastra_memory_conformance.hookspecs import hookimpl
from mastra_memory_conformance.network import is_loopback
from mastra_memory_conformance.targets import (
    RegisterConformanceTarget,
    TargetSettings,
    TargetUnavailable,
    provisioned_target,
    required_env,
)

__all__ = ["CLOUD_KEY_ENV", "LOCAL_URL_ENV", "VISIBILITY_DELAY", "register_conformance_targets"]

LOCAL_URL_ENV: Final = "MASTRA_MEMORY_TEST_PINECONE_LOCAL_URL"
CLOUD_KEY_ENV: Final = "MASTRA_MEMORY_TEST_PINECONE_API_KEY"
#: Seconds before the emulator shows a write: long enough that a missing wait fails, short enough to run.
VISIBILITY_DELAY: Final = 0.05


@provisioned_target(
    "pinecone-emulated",
    "pinecone",
    "emulated",
    description=(
        "EMULATED: the kit's loopback stand-in for Pinecone serverless (documented behaviour only; "
        "not Pinecone itself)"
    ),
)
def _emulated_target(tmp: Path) -> Iterator[TargetSettings]:
    from .emulator import running_emulator

    with running_emulator(visibility_delay=VISIBILITY_DELAY) as emulator:
        yield TargetSettings(
            vector={"api_key": emulator.api_key, "controller_host_url": emulator.url, "wait_timeout": 30},
        )


@provisioned_target(
    "pinecone-local",
    "pinecone",
    "docker",
    description="Pinecone Local (ghcr.io/pinecone-io/pinecone-local) on loopback",
)
def _local_target(tmp: Path) -> Iterator[TargetSettings]:
    reason = docker_unavailable_reason()
    if reason is not None:
        raise TargetUnavailable(f"Pinecone Local runs in Docker: {reason}")
    url = os.environ.get(LOCAL_URL_ENV, "").strip()
    if not url:
        raise TargetUnavailable(
            f"{LOCAL_URL_ENV} is not set: start Pinecone Local (docker run -d -p 5080-5090:5080-5090 "
            "ghcr.io/pinecone-io/pinecone-local) and set it to http://localhost:5080; the kit does not "
            "start it because its index hosts need the fixed ports 5080-5090"
        )
    if not is_loopback(urlsplit(url).hostname or ""):
        raise TargetUnavailable(f"{LOCAL_URL_ENV}={url!r} is not a loopback address")
    yield TargetSettings(vector={"api_key": "pclocal", "controller_host_url": url})


@provisioned_target(
    "pinecone-cloud", "pinecone", "url", description=f"Pinecone's service with {CLOUD_KEY_ENV} (never in CI)"
)
def _cloud_target(tmp: Path) -> Iterator[TargetSettings]:
    if os.environ.get("CI"):
        raise TargetUnavailable("pinecone-cloud never runs in CI (it needs a paid service and a secret)")
    key = required_env(CLOUD_KEY_ENV, "set it to a Pinecone API key")
    if not is_loopback("api.pinecone.io"):
        raise TargetUnavailable(
            "the conformance kit's socket guard allows loopback connections only, so it cannot reach "
            "api.pinecone.io; run adapters/pinecone's cloud smoke test (see docs/adapters/pinecone.md)"
        )
    yield TargetSettings(vector={"api_key": key})  # pragma: no cover


@hookimpl
def register_conformance_targets(register: RegisterConformanceTarget) -> None:
    """Register the Pinecone targets, most real first: ``pinecone-cloud``, ``pinecone-local`` and
    ``pinecone-emulated``."""
    register(_cloud_target)
    register(_local_target)
    register(_emulated_target)
