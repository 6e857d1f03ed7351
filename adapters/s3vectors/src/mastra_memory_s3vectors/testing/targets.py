"""How the conformance kit obtains a live S3 Vectors (``pytest --pyargs mastra_memory_conformance --target``).

===================  ==========  ==========================================================================
target               kind        backend
===================  ==========  ==========================================================================
``s3vectors-s3mock``  emulated   Adobe S3Mock 5.2.0 (its S3 Vectors API) in a local JVM on loopback, from
                                 the Maven Central jar (``mastra_memory_s3vectors.testing.s3mock``);
                                 dummy credentials, an explicit loopback endpoint
``s3vectors-aws``     url        Amazon S3 Vectors itself: a bucket named by
                                 ``MASTRA_MEMORY_TEST_S3VECTORS_BUCKET`` in
                                 ``MASTRA_MEMORY_TEST_S3VECTORS_REGION``, credentials from the AWS chain;
                                 skipped unless both are set (never in CI; the kit's socket guard must be
                                 told to allow the AWS endpoint)
===================  ==========  ==========================================================================

The kit finds them through the entry point ``s3vectors`` of the group ``mastra_memory_conformance``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from mastra_memory_conformance.hookspecs import hookimpl
from mastra_memory_conformance.targets import (
    RegisterConformanceTarget,
    TargetSettings,
    TargetUnavailable,
    provisioned_target,
)

__all__ = ["BUCKET_ENV", "REGION_ENV", "register_conformance_targets"]

BUCKET_ENV: Final = "MASTRA_MEMORY_TEST_S3VECTORS_BUCKET"
REGION_ENV: Final = "MASTRA_MEMORY_TEST_S3VECTORS_REGION"
#: Credentials S3Mock accepts (it checks none); never real ones.
DUMMY_CREDENTIALS: Final = {"aws_access_key_id": "mastra-test", "aws_secret_access_key": "mastra-test"}


@provisioned_target(
    "s3vectors-s3mock",
    "s3vectors",
    "emulated",
    description=(
        "Adobe S3Mock's S3 Vectors API (an emulator: exact search, no ANN) in a local JVM on loopback"
    ),
)
def _s3mock_target(tmp: Path) -> Iterator[TargetSettings]:
    from .s3mock import S3MOCK_VERSION, s3mock_server

    with s3mock_server(tmp) as server:
        yield TargetSettings(
            vector={
                "bucket": "mastra-conformance",
                "region": "us-east-1",
                "endpoint_url": server.vectors,
                "create_bucket": True,
                **DUMMY_CREDENTIALS,
            },
            options={"server": f"S3Mock {S3MOCK_VERSION}"},
        )


@provisioned_target(
    "s3vectors-aws",
    "s3vectors",
    "url",
    description=f"Amazon S3 Vectors: the bucket named by {BUCKET_ENV} in {REGION_ENV}",
)
def _aws_target(tmp: Path) -> Iterator[TargetSettings]:
    bucket = os.environ.get(BUCKET_ENV, "").strip()
    region = os.environ.get(REGION_ENV, "").strip()
    if not bucket or not region:
        raise TargetUnavailable(
            f"{BUCKET_ENV} and {REGION_ENV} are not both set; set them to an existing vector bucket and "
            "its region (credentials come from the AWS chain) to run the kit against Amazon S3 Vectors"
        )
    yield TargetSettings(
        vector={"bucket": bucket, "region": region, "index_prefix": f"mmc{uuid.uuid4().hex[:6]}-"},
    )


@hookimpl
def register_conformance_targets(register: RegisterConformanceTarget) -> None:
    """Register ``s3vectors-aws`` (most real) and ``s3vectors-s3mock``."""
    register(_aws_target)
    register(_s3mock_target)
