"""Settings of the S3 Vectors adapter: which vector bucket, which region and endpoint, how to call it.

Every field can also come from the environment with the prefix ``MASTRA_MEMORY_S3VECTORS_``
(``MASTRA_MEMORY_S3VECTORS_BUCKET``, ``MASTRA_MEMORY_S3VECTORS_REGION``,
``MASTRA_MEMORY_S3VECTORS_ENDPOINT_URL``, ...); explicit arguments win. Credentials not given here come
from boto3's normal chain (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``, ``AWS_PROFILE``, the shared
config files, an instance or container role). Fields accept their camelCase spelling too
(``vectorBucketName``, ``endpointUrl``, ``indexPrefix``, ``nonFilterableMetadataKeys``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, ClassVar, Final

from mastra_memory.plugins.settings import StoreSettings
from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

__all__ = ["DEFAULT_NON_FILTERABLE", "ENV_PREFIX", "MAX_NON_FILTERABLE_KEYS", "S3VectorsSettings"]

ENV_PREFIX: Final = "MASTRA_MEMORY_S3VECTORS_"
#: Keys kept out of the filterable metadata by default: the message text Memory stores (docs/spec.md §3.6).
DEFAULT_NON_FILTERABLE: Final = ("content",)
#: S3 Vectors allows 10 non-filterable keys per index; the adapter uses one (``_mastra_meta``).
MAX_NON_FILTERABLE_KEYS: Final = 9
#: Vector bucket names: 3–63 lowercase letters, digits and hyphens, starting and ending alphanumeric.
_BUCKET: Final = re.compile(r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$")
_PREFIX: Final = re.compile(r"^[a-z0-9][a-z0-9.-]*[.-]$")


#: Other spellings accepted as keywords (boto3's and Mastra's names; the camelCase spelling of every field,
#: ``endpointUrl``, is accepted as well). They are not read from the environment: only
#: ``MASTRA_MEMORY_S3VECTORS_<FIELD>`` is (see mastra_memory.plugins.settings).
_SPELLINGS: Final = {
    "vectorBucketName": "bucket",
    "bucket_name": "bucket",
    "bucketName": "bucket",
    "region_name": "region",
    "regionName": "region",
    "accessKeyId": "aws_access_key_id",
    "secretAccessKey": "aws_secret_access_key",
    "sessionToken": "aws_session_token",
    "profile": "profile_name",
}


# BaseSettings again for type checkers (StoreSettings is one at run time): to mypy it makes the required
# ``bucket`` optional in the constructor, as the environment may supply it.
class S3VectorsSettings(StoreSettings, BaseSettings):
    """How to reach Amazon S3 Vectors (or a stand-in such as S3Mock) and how to use the bucket.

    Attributes:
        bucket: the vector bucket (alias ``vectorBucketName``, ``bucket_name``).
        region: the AWS region; ``None`` uses boto3's chain (``AWS_REGION``, the profile).
        endpoint_url: another endpoint (S3Mock, a VPC endpoint); ``None`` is the public AWS endpoint.
        aws_access_key_id, aws_secret_access_key, aws_session_token, profile_name: explicit credentials
            or profile; all ``None`` uses boto3's default chain.
        index_prefix: put before every index name in the bucket (``app-`` stores ``memory-messages-64`` as
            ``app-memory-messages-64``); ``list_indexes`` shows only the prefixed indexes, without it.
            Empty, or lowercase letters, digits, ``.`` and ``-`` ending in ``-`` or ``.``.
        non_filterable_metadata_keys: top-level metadata keys that are stored but cannot be filtered on
            (at most 9; recorded in each index at creation, docs/spec.md §3.6).
        create_bucket: create the vector bucket on first ``create_index`` when it does not exist.
        connect_timeout, read_timeout: seconds (botocore ``Config``).
        max_attempts: total attempts per call, retries included (botocore ``standard`` retry mode).
        max_workers: threads running the blocking boto3 calls of one store.
    """

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, frozen=True)
    spellings: ClassVar[Mapping[str, str]] = _SPELLINGS

    bucket: str
    region: str | None = None
    endpoint_url: str | None = None
    aws_access_key_id: SecretStr | None = None
    aws_secret_access_key: SecretStr | None = None
    aws_session_token: SecretStr | None = None
    profile_name: str | None = None
    index_prefix: str = ""
    # NoDecode: the environment value is parsed by _keys (comma-separated or a JSON list), not as JSON only.
    non_filterable_metadata_keys: Annotated[tuple[str, ...], NoDecode] = DEFAULT_NON_FILTERABLE
    create_bucket: bool = False
    connect_timeout: float = Field(default=5.0, gt=0)
    read_timeout: float = Field(default=30.0, gt=0)
    max_attempts: int = Field(default=3, ge=1, le=10)
    max_workers: int = Field(default=4, ge=1, le=64)

    @field_validator("bucket")
    @classmethod
    def _bucket_name(cls, value: str) -> str:
        if not _BUCKET.fullmatch(value) or "--" in value:
            raise ValueError(
                f"vector bucket name {value!r} is invalid: use 3–63 lowercase letters, digits and hyphens, "
                "starting and ending with a letter or digit"
            )
        return value

    @field_validator("index_prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        if value and not _PREFIX.fullmatch(value):
            raise ValueError(
                f"index_prefix {value!r} is invalid: use lowercase letters, digits, '.' and '-', starting "
                "with a letter or digit and ending with '-' or '.' (for example 'myapp-')"
            )
        return value

    @field_validator("non_filterable_metadata_keys", mode="before")
    @classmethod
    def _keys(cls, value: object) -> object:
        if isinstance(value, str):  # from the environment: comma-separated or a JSON list
            text = value.strip()
            if text.startswith("["):
                return json.loads(text)
            return tuple(k.strip() for k in text.split(",") if k.strip())
        return value

    @model_validator(mode="after")
    def _check(self) -> S3VectorsSettings:
        keys = self.non_filterable_metadata_keys
        if len(keys) > MAX_NON_FILTERABLE_KEYS:
            raise ValueError(
                f"at most {MAX_NON_FILTERABLE_KEYS} non_filterable_metadata_keys (S3 Vectors allows 10 per "
                f"index and the adapter uses one); got {len(keys)}"
            )
        if len(set(keys)) != len(keys) or not all(keys) or any(k.startswith("_mastra_") for k in keys):
            raise ValueError(
                "non_filterable_metadata_keys must be distinct non-empty top-level keys without the "
                f"reserved prefix _mastra_; got {list(keys)}"
            )
        if (self.aws_access_key_id is None) != (self.aws_secret_access_key is None):
            raise ValueError("give aws_access_key_id and aws_secret_access_key together, or neither")
        return self
