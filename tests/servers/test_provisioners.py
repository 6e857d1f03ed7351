"""The provisioners themselves: a missing toolchain is a precise ``TargetUnavailable``, the target builders
yield working settings, and a stopped server is gone."""

from __future__ import annotations

import socket
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import TypeVar
from urllib.request import ProxyHandler, build_opener

import pytest

from mastra_memory_conformance.servers import (
    build_ferretdb,
    build_opensearch,
    ferretdb_server,
    ferretdb_target,
    opensearch_target,
)
from mastra_memory_conformance.servers.ferretdb import wire_ping
from mastra_memory_conformance.servers.opensearch import launcher_project
from mastra_memory_conformance.servers.process import free_port
from mastra_memory_conformance.targets import TargetUnavailable

from .support import unavailable

T = TypeVar("T")


@pytest.fixture
def no_toolchains(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An empty build cache and a PATH with no tools on it."""
    monkeypatch.setenv("MASTRA_MEMORY_CACHE_DIR", str(tmp_path / "cache"))
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("JAVA_HOME", raising=False)


@pytest.mark.usefixtures("no_toolchains")
def test_without_go_ferretdb_is_unavailable_with_the_reason() -> None:
    with pytest.raises(
        TargetUnavailable, match=r"`go` is not on PATH; it is needed to build FerretDB v1\.24\.2"
    ):
        build_ferretdb()


@pytest.mark.usefixtures("no_toolchains")
def test_without_java_opensearch_is_unavailable_with_the_reason() -> None:
    with pytest.raises(
        TargetUnavailable, match=r"`java` is not on PATH; it is needed to run OpenSearch 2\.19\.1"
    ):
        build_opensearch()


def test_the_launcher_project_is_found() -> None:
    project = launcher_project()
    assert (project / "pom.xml").is_file()
    assert (project / "src/main/java/mastra/memory/servers/OpenSearchLauncher.java").is_file()


def test_wire_ping_on_a_closed_port_is_false() -> None:
    assert wire_ping("127.0.0.1", free_port(), timeout=2) is False


def _enter(stack: ExitStack, manager: AbstractContextManager[T], what: str) -> T:
    try:
        return stack.enter_context(manager)
    except TargetUnavailable as exc:
        unavailable(f"{what} unavailable: {exc.reason}")


def _port(uri: str) -> int:
    return int(uri.rsplit(":", 1)[1].split("/", 1)[0])


def test_a_stopped_ferretdb_no_longer_listens(tmp_path: Path) -> None:
    with ExitStack() as stack:
        port = _port(_enter(stack, ferretdb_server(tmp_path), "FerretDB"))
        assert wire_ping("127.0.0.1", port)
    assert not wire_ping("127.0.0.1", port, timeout=2)
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass


def test_the_ferretdb_target_yields_a_working_uri(tmp_path: Path) -> None:
    target = ferretdb_target(storage_setting="uri", vector_settings={"database": "conformance"})
    assert (target.name, target.adapter, target.kind, target.has_storage) == (
        "mongodb-ferretdb",
        "mongodb",
        "native",
        True,
    )
    with ExitStack() as stack:
        settings = _enter(stack, target.provision(tmp_path), "FerretDB")
        uri = settings.vector["uri"]
        assert settings.vector["database"] == "conformance"
        assert settings.storage == {"uri": uri}
        assert uri.startswith("mongodb://127.0.0.1:")
        assert uri.endswith("/?directConnection=true")
        assert wire_ping("127.0.0.1", _port(uri))
    assert (tmp_path / "ferretdb.log").is_file()


def test_the_opensearch_target_yields_a_working_url(tmp_path: Path) -> None:
    target = opensearch_target(options={"dimension": 8})
    assert (target.name, target.adapter, target.kind, target.has_storage) == (
        "opensearch-native",
        "opensearch",
        "native",
        False,
    )
    with ExitStack() as stack:
        settings = _enter(stack, target.provision(tmp_path), "OpenSearch")
        url = settings.vector["url"]
        assert settings.dimension == 8
        with build_opener(ProxyHandler({})).open(f"{url}/_cat/plugins?h=component", timeout=30) as reply:
            assert "org.opensearch.knn.plugin.KNNPlugin" in reply.read().decode()
    assert (tmp_path / "opensearch.log").is_file()
