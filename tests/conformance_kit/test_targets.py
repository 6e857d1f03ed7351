"""Targets: selection with --target, the kit's built-in sqlite target, url and docker builders, and the
rule that a target which cannot start skips its tests with the reason printed, never passes them.

How targets are registered (the kit's hook and entry-point group) is tested in
tests/plugins/test_target_registration.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from mastra_memory_conformance.docker import SERVICES, compose_file, docker_target, docker_unavailable_reason
from mastra_memory_conformance.missing import REQUIRE_ENV
from mastra_memory_conformance.registry import available_targets, list_target_plugins, registered_targets
from mastra_memory_conformance.sqlite_targets import sqlite_target
from mastra_memory_conformance.targets import (
    URL_ENV_VARS,
    ConformanceTarget,
    TargetSettings,
    TargetUnavailable,
    url_target,
)

from .conftest import REGISTER_CONFTEST

UNAVAILABLE_PLUGIN = """
from contextlib import contextmanager

from mastra_memory_conformance.hookspecs import hookimpl
from mastra_memory_conformance.targets import ConformanceTarget, TargetUnavailable


@contextmanager
def _cannot_start(tmp):
    raise TargetUnavailable("the test engine is not installed on this machine")
    yield


@hookimpl
def register_conformance_targets(register):
    register(
        ConformanceTarget(name="sqlite-nowhere", adapter="sqlite", kind="native", provision=_cannot_start)
    )
"""

#: The unavailable native target and a url target whose variable is unset, in one plugin.
NATIVE_AND_URL_PLUGIN = """
from contextlib import contextmanager

from mastra_memory_conformance.hookspecs import hookimpl
from mastra_memory_conformance.targets import ConformanceTarget, TargetUnavailable, url_target


@contextmanager
def _cannot_start(tmp):
    raise TargetUnavailable("the test engine is not installed on this machine")
    yield


@hookimpl
def register_conformance_targets(register):
    register(
        ConformanceTarget(name="sqlite-nowhere", adapter="sqlite", kind="native", provision=_cannot_start)
    )
    register(url_target("sqlite", "SQLITE_TEST_URL", name="sqlite-url"))
"""

KIT_TESTS = """
import pytest


@pytest.mark.asyncio
async def test_uses_a_store(vector_store, index_name, conformance_dimension):
    await vector_store.create_index(index_name, conformance_dimension)
    assert index_name in await vector_store.list_indexes()


def test_uses_the_target(conformance_target):
    assert conformance_target.adapter == "sqlite"


def test_uses_nothing_of_the_kit():
    assert True
"""


def test_the_kit_registers_the_sqlite_target_itself() -> None:
    target = registered_targets()["sqlite"]
    assert (target.adapter, target.kind, target.has_vector, target.has_storage) == (
        "sqlite",
        "embedded",
        True,
        True,
    )
    assert "sqlite" in available_targets("sqlite")
    builtin = next(p for p in list_target_plugins() if p.name == "mastra_memory_conformance.sqlite_targets")
    assert (builtin.source, builtin.distribution) == ("builtin", "mastra-memory-conformance")
    assert [t.name for t in builtin.targets] == ["sqlite"]


def test_the_sqlite_target_provisions_a_temporary_file(tmp_path: Path) -> None:
    with sqlite_target().provision(tmp_path) as settings:
        assert settings.vector == {"url": str(tmp_path / "conformance.db")}
        assert settings.storage == settings.vector
        assert settings.dimension == 8


def test_a_target_without_a_kind_or_a_backend_is_rejected() -> None:
    with pytest.raises(ValueError, match="kind 'cloud' is not one of"):
        ConformanceTarget("x-cloud", "x", "cloud", sqlite_target().provision)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="neither a vector store nor a storage"):
        ConformanceTarget("x", "x", "url", sqlite_target().provision, has_vector=False)
    with pytest.raises(ValueError, match="positive integer"):
        _ = TargetSettings(options={"dimension": 0}).dimension


def test_a_url_target_is_unavailable_without_its_env_var(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(URL_ENV_VARS["qdrant"], raising=False)
    target = url_target("qdrant", URL_ENV_VARS["qdrant"])
    assert (target.name, target.kind) == ("qdrant-url", "url")
    with pytest.raises(TargetUnavailable) as raised, target.provision(tmp_path):
        pass
    assert raised.value.reason == (
        "MASTRA_MEMORY_TEST_QDRANT_URL is not set; set it to the address of a running qdrant"
    )


def test_a_url_target_passes_the_address_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MASTRA_MEMORY_TEST_PG_DSN", "postgresql://u:p@127.0.0.1:5432/db")
    target = url_target(
        "pgvector",
        "MASTRA_MEMORY_TEST_PG_DSN",
        setting="connection_string",
        storage_setting="connection_string",
        options={"dimension": 4},
    )
    with target.provision(tmp_path) as settings:
        assert settings.vector == {"connection_string": "postgresql://u:p@127.0.0.1:5432/db"}
        assert settings.storage == {"connection_string": "postgresql://u:p@127.0.0.1:5432/db"}
        assert settings.dimension == 4
    assert target.has_storage


def test_a_docker_target_says_precisely_why_it_cannot_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = tmp_path / "docker.sock"
    monkeypatch.setenv("DOCKER_HOST", f"unix://{missing}")
    reason = docker_unavailable_reason()
    assert reason is not None
    assert reason == f"the Docker socket {missing} does not exist"
    target = docker_target("qdrant", "qdrant")
    assert (target.name, target.kind) == ("qdrant-docker", "docker")
    with pytest.raises(TargetUnavailable) as raised, target.provision(tmp_path):
        pass
    assert raised.value.reason == reason


def test_the_compose_file_pins_every_documented_service() -> None:
    text = compose_file().read_text("utf-8")
    for service in SERVICES:
        assert f"\n  {service}:\n" in text
    images = [line.split("image:", 1)[1].strip() for line in text.splitlines() if "image:" in line]
    assert sorted(i.split(":")[0] for i in images) == [
        "mongodb/mongodb-atlas-local",
        "opensearchproject/opensearch",
        "pgvector/pgvector",
        "qdrant/qdrant",
    ]
    assert all(":" in image and not image.endswith(":latest") for image in images)


def test_docker_target_rejects_an_unknown_service() -> None:
    with pytest.raises(ValueError, match="unknown compose service 'redis'"):
        docker_target("redis", "redis")


def test_without_a_target_kit_tests_skip_with_the_reason(kit_pytester: pytest.Pytester) -> None:
    kit_pytester.makepyfile(test_kit=KIT_TESTS)
    result = kit_pytester.runpytest("-p", "no:socket", "-rs")
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(["SKIPPED [[]1[]] test_kit.py:*: no --target given"] * 2)
    assert not (kit_pytester.path / "reports").exists()


def test_an_unavailable_target_skips_with_its_reason_printed(
    kit_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    kit_pytester.makepyfile(extra_plugin=UNAVAILABLE_PLUGIN, test_kit=KIT_TESTS)
    kit_pytester.makeconftest(REGISTER_CONFTEST)
    result = kit_pytester.runpytest("-p", "no:socket", "-rs", "--target", "sqlite-nowhere,sqlite")
    result.assert_outcomes(passed=3, skipped=2)  # both kit tests skip on sqlite-nowhere, never pass
    reason = "target sqlite-nowhere unavailable: the test engine is not installed on this machine"
    result.stdout.fnmatch_lines([f"SKIPPED [[]1[]] test_kit.py:*: {reason}"] * 2)
    result.stdout.fnmatch_lines(
        [
            "*mastra-memory conformance*",
            "target sqlite-nowhere (native): unavailable: the test engine is not installed on this machine",
            "target sqlite (embedded): provisioned",
        ]
    )


def test_under_ci_a_native_target_that_cannot_start_fails_and_a_url_target_still_skips(
    kit_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A native target needs only this machine: under CI its missing toolchain fails the run (a CI without
    Go once passed with the FerretDB column missing). A url target needs an outside service: it skips."""
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("SQLITE_TEST_URL", raising=False)
    kit_pytester.makepyfile(extra_plugin=NATIVE_AND_URL_PLUGIN, test_kit=KIT_TESTS)
    kit_pytester.makeconftest(REGISTER_CONFTEST)
    result = kit_pytester.runpytest("-p", "no:socket", "-rsE", "--target", "sqlite-nowhere,sqlite-url")
    result.assert_outcomes(passed=1, errors=2, skipped=2)
    result.stdout.fnmatch_lines(
        [
            "ERROR test_kit.py::test_uses_a_store[[]sqlite-nowhere[]] - Failed: target sqlite-nowhere "
            "unavailable: the test engine is not installed on this machine (required here: CI *",
        ]
    )
    result.stdout.fnmatch_lines(
        ["SKIPPED [[]1[]] test_kit.py:*: target sqlite-url unavailable: SQLITE_TEST_URL is not set*"]
    )


def test_targets_come_from_the_environment_too(
    kit_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    kit_pytester.makepyfile(test_kit=KIT_TESTS)
    monkeypatch.setenv("MASTRA_MEMORY_CONFORMANCE_TARGETS", "sqlite")
    result = kit_pytester.runpytest("-p", "no:socket", "-v")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*test_kit.py::test_uses_a_store[[]sqlite[]] PASSED*"])
    assert (kit_pytester.path / "reports" / "conformance" / "conformance.json").is_file()


def test_an_unknown_target_is_a_usage_error(kit_pytester: pytest.Pytester) -> None:
    kit_pytester.makepyfile(test_kit=KIT_TESTS)
    result = kit_pytester.runpytest("-p", "no:socket", "--target", "nosuchdb")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown conformance target 'nosuchdb'; registered targets: sqlite*"])
