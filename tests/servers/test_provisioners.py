"""The provisioners themselves: a missing toolchain is a precise ``TargetUnavailable``, the target builders
yield working settings, and a stopped server is gone."""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.request import ProxyHandler, build_opener

import pytest
from mastra_memory_mongodb.testing.ferretdb import build_ferretdb, ferretdb_server, ferretdb_target, wire_ping
from mastra_memory_opensearch.testing.server import build_opensearch, launcher_project, opensearch_target

from mastra_memory_conformance.launcher import free_port
from mastra_memory_conformance.missing import started
from mastra_memory_conformance.targets import TargetUnavailable


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


def _port(uri: str) -> int:
    return int(uri.rsplit(":", 1)[1].split("/", 1)[0])


def test_a_stopped_ferretdb_no_longer_listens(tmp_path: Path) -> None:
    with started(ferretdb_server(tmp_path), "FerretDB") as uri:
        port = _port(uri)
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
    with started(target.provision(tmp_path), "FerretDB") as settings:
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
    with started(target.provision(tmp_path), "OpenSearch") as settings:
        url = settings.vector["url"]
        assert settings.dimension == 8
        with build_opener(ProxyHandler({})).open(f"{url}/_cat/plugins?h=component", timeout=30) as reply:
            assert "org.opensearch.knn.plugin.KNNPlugin" in reply.read().decode()
    assert (tmp_path / "opensearch.log").is_file()
