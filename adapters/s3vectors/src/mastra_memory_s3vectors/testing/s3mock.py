"""Adobe S3Mock with its S3 Vectors API, started in a local JVM from the Maven Central jar, on loopback only.

S3Mock (``com.adobe.testing:s3mock``, classifier ``exec``: a Spring Boot jar of about 31 MB) implements the
S3 Vectors API behind the Spring profile ``vectors`` — buckets, indexes, PutVectors/GetVectors/ListVectors/
DeleteVectors and QueryVectors (exact brute-force search, ``topK`` 1–100, the operators ``$eq $ne $gt $gte
$lt $lte $in $nin $exists $and $or``). It is an **emulator**: the targets built on it are ``emulated``.

Every Tomcat connector S3Mock opens is bound to ``127.0.0.1``. Spring's ``server.address`` reaches only the
main (HTTPS) connector; the extra HTTP connector and the two S3 Vectors connectors are created without an
address and would listen on every interface. :func:`build_s3mock` therefore compiles one small
``ApplicationContextInitializer`` (:data:`LOOPBACK_SOURCE`, registered through ``META-INF/spring.factories``)
that sets the address of every connector after they are all added to the Tomcat service and before any is
bound. The build is done once into ``~/.cache/mastra-memory/s3mock/<version>-<hash of that source>/``:
``mvn dependency:copy`` fetches the jar, its ``BOOT-INF`` is unpacked (S3Mock then runs from a plain
classpath) and ``javac`` compiles the initializer.

:func:`s3mock_server` starts it in a temporary directory (its object store lives there) on four free
loopback ports, waits until the S3 Vectors endpoint answers, yields that endpoint and stops the JVM by PID.

Needs Java 17+ with ``javac`` (``$JAVA_HOME/bin`` or PATH) and Maven (``mvn``) with access to Maven Central
for the first build.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from mastra_memory_conformance.jvm import check_java, java_tool, jvm_command, jvm_heap
from mastra_memory_conformance.launcher import (
    cached_build,
    free_ports,
    require_tool,
    run_build,
    running_server,
)
from mastra_memory_conformance.targets import TargetUnavailable

__all__ = [
    "LOOPBACK_CLASS",
    "LOOPBACK_SOURCE",
    "S3MOCK_VERSION",
    "S3MockEndpoints",
    "build_s3mock",
    "s3mock_server",
]

S3MOCK_VERSION: Final = "5.2.0"
S3MOCK_ARTIFACT: Final = f"com.adobe.testing:s3mock:{S3MOCK_VERSION}:jar:exec"
LOOPBACK_CLASS: Final = "mastra.memory.servers.S3MockLoopback"
_MAIN_CLASS: Final = "com.adobe.testing.s3mock.S3MockApplication"
_DEPENDENCY_PLUGIN: Final = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
_MIN_JAVA: Final = 17
_DEFAULT_HEAP: Final = "384m"
_START_TIMEOUT: Final = 120.0

#: The initializer that binds every connector to one address (``-Dmastra.bind-address``, default loopback).
LOOPBACK_SOURCE: Final = """\
package mastra.memory.servers;

import org.apache.catalina.Engine;
import org.apache.catalina.connector.Connector;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;

/** Binds every Tomcat connector of S3Mock (S3 and S3 Vectors, HTTP and HTTPS) to one address. */
public final class S3MockLoopback implements ApplicationContextInitializer<ConfigurableApplicationContext> {
  @Override
  public void initialize(ConfigurableApplicationContext context) {
    String address = System.getProperty("mastra.bind-address", "127.0.0.1");
    context.getBeanFactory().registerSingleton("mastraLoopbackCustomizer", new Customizer(address));
  }

  static final class Customizer implements WebServerFactoryCustomizer<TomcatServletWebServerFactory> {
    private final String address;

    Customizer(String address) {
      this.address = address;
    }

    @Override
    public void customize(TomcatServletWebServerFactory factory) {
      // Context customizers run once every additional connector is in the service, before any is bound.
      factory.addContextCustomizers(tomcatContext -> {
        Engine engine = (Engine) tomcatContext.getParent().getParent();
        for (Connector connector : engine.getService().findConnectors()) {
          if (!connector.setProperty("address", address)) {
            throw new IllegalStateException("cannot bind connector " + connector + " to " + address);
          }
        }
        System.out.println("mastra-memory: every connector bound to " + address);
      });
    }
  }
}
"""


@dataclass(frozen=True)
class S3MockEndpoints:
    """Where a started S3Mock answers: ``vectors`` is the S3 Vectors endpoint (``http://127.0.0.1:<port>``),
    ``ports`` every port it listens on, ``pid`` its JVM."""

    vectors: str
    ports: tuple[int, ...]
    pid: int


def _fingerprint() -> str:
    digest = hashlib.sha256(S3MOCK_VERSION.encode())
    digest.update(LOOPBACK_SOURCE.encode())
    return digest.hexdigest()[:12]


def _java_tool(name: str) -> str:
    return java_tool(name, f"run S3Mock {S3MOCK_VERSION} (Java {_MIN_JAVA} or newer, with javac)")


def build_s3mock() -> Path:
    """Fetch, unpack and patch S3Mock once; the directory holding ``boot/`` (its classes and jars) and
    ``loopback/`` (the compiled initializer). The first build downloads about 31 MB from Maven Central."""
    return cached_build("s3mock", f"{S3MOCK_VERSION}-{_fingerprint()}", build=_build)


def _build(build: Path, log: Path) -> str:
    check_java(_java_tool("java"), _MIN_JAVA, "S3Mock")
    javac = _java_tool("javac")
    mvn = require_tool("mvn", f"fetch S3Mock {S3MOCK_VERSION} from Maven Central")
    for stale in ("download", "boot", "loopback", "src"):
        shutil.rmtree(build / stale, ignore_errors=True)
    download = build / "download"
    download.mkdir()
    run_build(
        [
            mvn,
            "-B",
            "-q",
            f"{_DEPENDENCY_PLUGIN}:copy",
            f"-Dartifact={S3MOCK_ARTIFACT}",
            f"-DoutputDirectory={download}",
        ],
        cwd=download,
        log=log,
        what=f"fetching {S3MOCK_ARTIFACT} with Maven",
    )
    jar = download / f"s3mock-{S3MOCK_VERSION}-exec.jar"
    if not jar.is_file():
        raise TargetUnavailable(f"Maven reported success but {jar} is missing; log in {log}")
    boot = build / "boot"
    with zipfile.ZipFile(jar) as archive:
        members = [m for m in archive.namelist() if m.startswith("BOOT-INF/")]
        archive.extractall(boot, members)
    source = build / "src" / "mastra" / "memory" / "servers" / "S3MockLoopback.java"
    source.parent.mkdir(parents=True)
    source.write_text(LOOPBACK_SOURCE, encoding="utf-8")
    loopback = build / "loopback"
    run_build(
        [javac, "--release", str(_MIN_JAVA), "-cp", _lib_glob(build), "-d", str(loopback), str(source)],
        cwd=build,
        log=log,
        what="compiling the S3Mock loopback initializer",
    )
    factories = loopback / "META-INF" / "spring.factories"
    factories.parent.mkdir(parents=True)
    factories.write_text(f"org.springframework.context.ApplicationContextInitializer={LOOPBACK_CLASS}\n")
    jar.unlink()  # the unpacked copy is what runs
    return f"s3mock {S3MOCK_VERSION}\n"


def _lib_glob(build: Path) -> str:
    return str(build / "boot" / "BOOT-INF" / "lib" / "*")


def _classpath(build: Path) -> str:
    return os.pathsep.join(
        [str(build / "loopback"), str(build / "boot" / "BOOT-INF" / "classes"), _lib_glob(build)]
    )


def _answers(url: str) -> bool:
    # No proxy: the server is on loopback whatever http_proxy says.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(
        f"{url}/ListVectorBuckets", data=b"{}", headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with opener.open(request, timeout=5) as reply:
            return isinstance(json.loads(reply.read() or b"{}"), dict)
    except (OSError, urllib.error.URLError, ValueError):
        return False


@contextmanager
def s3mock_server(tmp: Path, *, heap: str | None = None) -> Iterator[S3MockEndpoints]:
    """Start S3Mock with the ``vectors`` profile in ``tmp`` (an empty directory) and yield its endpoints.

    ``heap`` is the JVM heap: ``$MASTRA_MEMORY_S3MOCK_HEAP`` or 384m by default. The log is
    ``tmp/s3mock.log``; the object store is ``tmp/s3mock-root``.
    """
    build = build_s3mock()
    java = _java_tool("java")
    heap = jvm_heap(heap, "MASTRA_MEMORY_S3MOCK_HEAP", _DEFAULT_HEAP)
    root = tmp / "s3mock-root"
    work = tmp / "s3mock-tmp"
    root.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    https, http, vectors_http, vectors_https = free_ports(4)
    url = f"http://127.0.0.1:{vectors_http}"
    command = [
        *jvm_command(java, heap=heap, tmpdir=work, flags=["-XX:TieredStopAtLevel=1"]),
        "-Dmastra.bind-address=127.0.0.1",
        "-cp",
        _classpath(build),
        _MAIN_CLASS,
        "--spring.profiles.active=vectors",
        "--server.address=127.0.0.1",
        f"--server.port={https}",
        f"--http.port={http}",
        f"--vectors.http.port={vectors_http}",
        f"--vectors.https.port={vectors_https}",
        f"--com.adobe.testing.s3mock.store.root={root}",
        "--com.adobe.testing.s3mock.store.retainFilesOnExit=false",
        "--spring.main.banner-mode=off",
    ]
    with running_server(
        f"S3Mock {S3MOCK_VERSION}",
        command,
        cwd=tmp,
        log=tmp / "s3mock.log",
        ready=lambda: _answers(url),
        timeout=_START_TIMEOUT,
    ) as server:
        yield S3MockEndpoints(vectors=url, ports=(https, http, vectors_http, vectors_https), pid=server.pid)
