"""Settings come from keywords (with their camelCase spellings) and from ``MASTRA_MEMORY_S3VECTORS_*`` only.

Regression: the camelCase spellings used to be pydantic ``validation_alias``es, which pydantic-settings
reads from the environment *without* the prefix — an unrelated ``REGION``, ``PROFILE`` or ``ENDPOINT_URL``
variable changed where the store sent its requests.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from mastra_memory_s3vectors.settings import S3VectorsSettings

UNPREFIXED = {
    "BUCKET": "someone-elses-bucket",
    "REGION": "eu-north-1",
    "ENDPOINT_URL": "http://203.0.113.9:9999",
    "PROFILE": "someone-else",
    "CREATE_BUCKET": "true",
    "INDEX_PREFIX": "other-",
    "ENDPOINTURL": "http://203.0.113.9:9999",
}


def test_unprefixed_environment_variables_are_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in UNPREFIXED.items():
        monkeypatch.setenv(name, value)
    settings = S3VectorsSettings(bucket="my-vectors")
    assert settings.bucket == "my-vectors"
    assert settings.region is None
    assert settings.endpoint_url is None
    assert settings.profile_name is None
    assert settings.create_bucket is False
    assert settings.index_prefix == ""
    # Without a bucket anywhere, the unprefixed BUCKET does not stand in for one.
    with pytest.raises(ValidationError, match="bucket"):
        S3VectorsSettings()


def test_prefixed_environment_variables_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MASTRA_MEMORY_S3VECTORS_BUCKET", "env-vectors")
    monkeypatch.setenv("MASTRA_MEMORY_S3VECTORS_REGION", "us-west-2")
    monkeypatch.setenv("MASTRA_MEMORY_S3VECTORS_ENDPOINT_URL", "http://127.0.0.1:9090")
    monkeypatch.setenv("MASTRA_MEMORY_S3VECTORS_PROFILE_NAME", "dev")
    monkeypatch.setenv("MASTRA_MEMORY_S3VECTORS_CREATE_BUCKET", "true")
    monkeypatch.setenv("MASTRA_MEMORY_S3VECTORS_NON_FILTERABLE_METADATA_KEYS", "content,raw")
    settings = S3VectorsSettings()
    assert (settings.bucket, settings.region, settings.endpoint_url) == (
        "env-vectors",
        "us-west-2",
        "http://127.0.0.1:9090",
    )
    assert settings.profile_name == "dev"
    assert settings.create_bucket is True
    assert settings.non_filterable_metadata_keys == ("content", "raw")
    # An explicit keyword wins over the environment.
    assert S3VectorsSettings(region="ap-south-1").region == "ap-south-1"


def test_other_spellings_are_accepted_as_keywords() -> None:
    settings = S3VectorsSettings.model_validate(
        {
            "vectorBucketName": "my-vectors",
            "regionName": "us-east-1",
            "endpointUrl": "http://127.0.0.1:9090",
            "profile": "dev",
            "indexPrefix": "app-",
            "nonFilterableMetadataKeys": ["content"],
            "createBucket": True,
            "maxAttempts": 5,
        }
    )
    assert settings.bucket == "my-vectors"
    assert settings.region == "us-east-1"
    assert settings.endpoint_url == "http://127.0.0.1:9090"
    assert settings.profile_name == "dev"
    assert settings.index_prefix == "app-"
    assert settings.create_bucket is True
    assert settings.max_attempts == 5


def test_one_field_under_two_spellings_with_different_values_is_refused() -> None:
    with pytest.raises(ValidationError, match="bucket is given twice"):
        S3VectorsSettings.model_validate({"bucket": "one-bucket", "vectorBucketName": "another-bucket"})
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        S3VectorsSettings.model_validate({"bucket": "my-vectors", "bukcet": "typo"})


def test_non_filterable_keys_from_the_environment_as_a_json_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MASTRA_MEMORY_S3VECTORS_NON_FILTERABLE_METADATA_KEYS", '["content", "raw"]')
    assert S3VectorsSettings(bucket="my-vectors").non_filterable_metadata_keys == ("content", "raw")
    monkeypatch.setenv("MASTRA_MEMORY_S3VECTORS_NON_FILTERABLE_METADATA_KEYS", "[not json")
    with pytest.raises(ValidationError):
        S3VectorsSettings(bucket="my-vectors")
