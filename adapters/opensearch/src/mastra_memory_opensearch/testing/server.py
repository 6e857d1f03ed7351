"""A real single-node OpenSearch with the k-NN plugin, started in a local JVM from Maven Central artifacts.

The launcher project (``opensearch-launcher/`` beside this module: a ``pom.xml`` and one Java class) puts
``org.opensearch:opensearch``, the Netty4 transport, painless, reindex (delete/update by query) and the
jars of the ``opensearch-knn`` plugin zip on one classpath, and starts a ``Node`` with them as classpath
plugins. :func:`build_opensearch` builds it once with Maven into
``~/.cache/mastra-memory/opensearch/<version>-<hash of the launcher>/``; :func:`opensearch_server` starts
it on a free loopback port in a temporary directory, waits for the cluster to be at least yellow, yields
its URL and stops the JVM by PID.

The plugin zip carries no native libraries, so only the k-NN ``lucene`` engine (and the exact ``knn_score``
script) works: an index with a ``faiss`` or ``nmslib`` field is created, but its first write kills a write
thread with ``UnsatisfiedLinkError`` and the request hangs. Security is not installed: plain HTTP, no
credentials.

Needs Java 17+ (``$JAVA_HOME/bin/java`` or ``java`` on PATH) and Maven (``mvn``) with access to Maven
Central for the first build.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final, Unpack

from mastra_memory_conformance import launcher as kit
from mastra_memory_conformance.jvm import check_java, java_tool, jvm_command, jvm_heap
from mastra_memory_conformance.targets import (
    AddressSettings,
    ConformanceTarget,
    TargetUnavailable,
    address_target,
)

__all__ = [
    "KNN_VERSION",
    "LAUNCHER_CLASS",
    "OPENSEARCH_VERSION",
    "build_opensearch",
    "launcher_project",
    "opensearch_server",
    "opensearch_target",
]

#: The core version; the k-NN plugin's version must be the same with a fourth component.
OPENSEARCH_VERSION: Final = "2.19.1"
KNN_VERSION: Final = "2.19.1.0"
LAUNCHER_CLASS: Final = "mastra.memory.servers.OpenSearchLauncher"
_MIN_JAVA: Final = 17
_DEFAULT_HEAP: Final = "512m"
_START_TIMEOUT: Final = 180.0
_LAUNCHER_DIR: Final = "opensearch-launcher"


def launcher_project() -> Path:
    """The launcher's Maven project: ``$MASTRA_MEMORY_OPENSEARCH_LAUNCHER_DIR``, else ``opensearch-launcher``
    beside this module (the same place in a source checkout and in the installed wheel)."""
    override = os.environ.get("MASTRA_MEMORY_OPENSEARCH_LAUNCHER_DIR", "").strip()
    candidates = [Path(override).expanduser()] if override else []
    candidates.append(Path(__file__).resolve().parent / _LAUNCHER_DIR)
    for candidate in candidates:
        if (candidate / "pom.xml").is_file():
            return candidate
    raise TargetUnavailable(
        "the OpenSearch launcher project (pom.xml + OpenSearchLauncher.java) was not found in "
        f"{', '.join(str(c) for c in candidates)}; set MASTRA_MEMORY_OPENSEARCH_LAUNCHER_DIR to "
        "adapters/opensearch/src/mastra_memory_opensearch/testing/opensearch-launcher of a mastra-memory "
        "checkout"
    )


def _sources(project: Path) -> list[Path]:
    return [project / "pom.xml", *sorted((project / "src").rglob("*.java"))]


def _fingerprint(project: Path) -> str:
    digest = hashlib.sha256()
    for path in _sources(project):
        digest.update(path.relative_to(project).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _java() -> str:
    return java_tool("java", f"run OpenSearch {OPENSEARCH_VERSION} (Java {_MIN_JAVA} or newer)")


def build_opensearch() -> Path:
    """Build the launcher once; the directory whose ``target/`` holds its classes and jars.

    The cache key is the OpenSearch version and a hash of the launcher's ``pom.xml`` and Java sources, so an
    edited launcher is rebuilt. The first build downloads about 55 MB from Maven Central.
    """
    project = launcher_project()
    return kit.cached_build(
        "opensearch",
        f"{OPENSEARCH_VERSION}-{_fingerprint(project)}",
        build=lambda build, log: _build(project, build, log),
    )


def _build(project: Path, build: Path, log: Path) -> str:
    check_java(_java(), _MIN_JAVA, "the OpenSearch launcher")
    mvn = kit.require_tool("mvn", f"build the OpenSearch {OPENSEARCH_VERSION} launcher from Maven Central")
    copy = build / "project"
    if copy.exists():
        shutil.rmtree(copy)
    copy.mkdir(parents=True)
    for path in _sources(project):
        target = copy / path.relative_to(project)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    kit.run_build(
        [mvn, "-B", "-q", "-f", str(copy / "pom.xml"), "package"],
        cwd=copy,
        log=log,
        what=f"building the OpenSearch {OPENSEARCH_VERSION} launcher with Maven",
    )
    return f"opensearch {OPENSEARCH_VERSION}, k-NN {KNN_VERSION}\n"


def _classpath(build: Path) -> str:
    target = build / "project" / "target"
    return os.pathsep.join([str(target / "classes"), str(target / "lib" / "*"), str(target / "knn" / "*")])


def _healthy(url: str) -> bool:
    # No proxy: the node is on loopback, whatever http_proxy says.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"{url}/_cluster/health?wait_for_status=yellow&timeout=1s", timeout=5) as reply:
            status = json.loads(reply.read()).get("status")
    except (OSError, urllib.error.URLError, ValueError):
        return False
    return status in ("green", "yellow")


@contextmanager
def opensearch_server(tmp: Path, *, heap: str | None = None) -> Iterator[str]:
    """Start a node in ``tmp`` (an empty directory) and yield its URL, ``http://127.0.0.1:<port>``.

    ``heap`` is the JVM heap (``-Xms``/``-Xmx``): ``$MASTRA_MEMORY_OPENSEARCH_HEAP`` or 512m by default.
    The node's log is ``tmp/opensearch.log``.
    """
    build = build_opensearch()
    java = _java()
    heap = jvm_heap(heap, "MASTRA_MEMORY_OPENSEARCH_HEAP", _DEFAULT_HEAP)
    home = tmp / "opensearch-home"
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    http_port, transport_port = kit.free_ports(2)
    url = f"http://127.0.0.1:{http_port}"
    command = [
        *jvm_command(java, heap=heap, tmpdir=home / "tmp"),
        # log4j's default configuration, to stdout (the log file), at INFO.
        "-Dorg.apache.logging.log4j.level=INFO",
        "-Dlog4j2.disable.jmx=true",
        # Outside OpenSearch's own bootstrap nothing else sets Netty's processor count; do not let the
        # transport try.
        "-Dopensearch.set.netty.runtime.available.processors=false",
        "-cp",
        _classpath(build),
        LAUNCHER_CLASS,
        str(home),
        str(http_port),
        str(transport_port),
    ]
    with kit.running_server(
        f"OpenSearch {OPENSEARCH_VERSION}",
        command,
        cwd=home,
        log=tmp / "opensearch.log",
        ready=lambda: _healthy(url),
        timeout=_START_TIMEOUT,
    ):
        yield url


def opensearch_target(
    *, adapter: str = "opensearch", name: str = "opensearch-native", **settings: Unpack[AddressSettings]
) -> ConformanceTarget:
    """A ``native`` target on a fresh node per provisioning; the vector store receives
    ``{setting: <url>, **vector_settings}`` (:class:`~mastra_memory_conformance.targets.AddressSettings`).
    Use the k-NN ``lucene`` engine: the others need native code."""
    return address_target(
        adapter,
        "native",
        opensearch_server,
        name=name,
        description=(
            f"a single-node OpenSearch {OPENSEARCH_VERSION} with k-NN {KNN_VERSION} (Lucene engine) in a "
            "local JVM, built from Maven Central"
        ),
        **settings,
    )
