"""``docker`` targets: a backend started from the kit's pinned ``docker-compose.yml`` with testcontainers.

``docker_target("qdrant", "qdrant")`` starts the compose service ``qdrant`` when a Docker engine is
reachable, yields settings pointing at its published loopback port, and removes the container (and its
volumes) afterwards. Without a reachable engine, without the ``docker`` CLI, or without testcontainers
(``pip install "mastra-memory-conformance[docker]"``) the target is unavailable and says which of these is
missing. testcontainers is imported only when a docker target is provisioned.
"""

from __future__ import annotations

import importlib
import os
import shutil
import socket
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from .targets import ConformanceTarget, TargetSettings, TargetUnavailable, provisioned_target

__all__ = [
    "COMPOSE_FILE_NAME",
    "SERVICES",
    "ComposeService",
    "compose_file",
    "docker_target",
    "docker_unavailable_reason",
]

COMPOSE_FILE_NAME: Final = "docker-compose.yml"
_SOCKETS: Final = ("/var/run/docker.sock", "~/.docker/run/docker.sock", "~/.colima/default/docker.sock")
_PING_TIMEOUT: Final = 3.0


@dataclass(frozen=True)
class ComposeService:
    """A service of the compose file: its container port and how a client addresses it."""

    port: int
    url_template: str

    def url(self, host: str, port: int) -> str:
        return self.url_template.format(host=host, port=port)


#: The services of the kit's ``docker-compose.yml``.
SERVICES: Final[Mapping[str, ComposeService]] = {
    "qdrant": ComposeService(6333, "http://{host}:{port}"),
    "pgvector": ComposeService(5432, "postgresql://mastra:mastra@{host}:{port}/mastra"),
    "opensearch": ComposeService(9200, "http://{host}:{port}"),
    "mongodb": ComposeService(27017, "mongodb://{host}:{port}/?directConnection=true"),
}


def compose_file() -> Path:
    """The kit's ``docker-compose.yml`` (shipped in the wheel; beside ``src/`` in a source checkout)."""
    packaged = resources.files(__package__ or "mastra_memory_conformance") / COMPOSE_FILE_NAME
    if packaged.is_file():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / COMPOSE_FILE_NAME


def _ping_unix(path: str) -> str | None:
    family = getattr(socket, "AF_UNIX", None)
    if family is None:  # pragma: no cover - Windows
        return "this platform has no Unix sockets; set DOCKER_HOST"
    if not os.path.exists(path):
        return f"the Docker socket {path} does not exist"
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(_PING_TIMEOUT)
            sock.connect(path)
            sock.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            answer = sock.recv(4096)
    except Exception as exc:  # OSError, or a socket guard's refusal
        return f"the Docker socket {path} does not answer ({exc})"
    if b" 200 " not in answer.split(b"\r\n", 1)[0]:
        return f"the Docker engine at {path} answered /_ping with {answer[:60]!r}"
    return None


def _ping_tcp(host: str, port: int) -> str | None:
    try:
        with socket.create_connection((host, port), timeout=_PING_TIMEOUT) as sock:
            sock.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            answer = sock.recv(4096)
    except Exception as exc:
        return f"the Docker engine at tcp://{host}:{port} is not reachable ({exc})"
    if b" 200 " not in answer.split(b"\r\n", 1)[0]:
        return f"the Docker engine at tcp://{host}:{port} answered /_ping with {answer[:60]!r}"
    return None


def _engine_problem() -> str | None:
    docker_host = os.environ.get("DOCKER_HOST", "").strip()
    if docker_host:
        parts = urlsplit(docker_host)
        if parts.scheme == "unix":
            return _ping_unix(parts.path)
        if parts.scheme == "tcp" and parts.hostname:
            if os.environ.get("DOCKER_TLS_VERIFY"):
                return None  # a TLS engine is checked by testcontainers itself
            return _ping_tcp(parts.hostname, parts.port or 2375)
        return None  # ssh:// and other transports: left to the docker CLI
    candidates = [os.path.expanduser(p) for p in _SOCKETS]
    present = [p for p in candidates if os.path.exists(p)]
    if not present:
        return (
            f"no Docker engine is reachable: DOCKER_HOST is not set and none of {', '.join(_SOCKETS)} exists"
        )
    problems = []
    for path in present:
        problem = _ping_unix(path)
        if problem is None:
            return None
        problems.append(problem)
    return "; ".join(problems)


def docker_unavailable_reason() -> str | None:
    """Why a docker target cannot start here, or ``None`` when it can."""
    engine = _engine_problem()
    if engine is not None:
        return engine
    if shutil.which("docker") is None:
        return (
            "the docker CLI (with its compose plugin) is not on PATH; testcontainers' DockerCompose runs it"
        )
    try:
        importlib.import_module("testcontainers.compose")
    except ImportError:
        return 'testcontainers is not installed: pip install "mastra-memory-conformance[docker]"'
    return None


def _loopback(host: str | None) -> str:
    return "127.0.0.1" if not host or host in ("0.0.0.0", "::", "localhost") else host


def docker_target(
    adapter: str,
    service: str,
    *,
    name: str | None = None,
    vector_settings: Callable[[str], dict[str, Any]] = lambda url: {"url": url},
    storage_settings: Callable[[str], dict[str, Any]] | None = None,
    options: Mapping[str, Any] | None = None,
    compose: Path | None = None,
    port: int | None = None,
    url_template: str | None = None,
    description: str = "",
) -> ConformanceTarget:
    """A ``docker`` target: the compose ``service`` started with testcontainers' ``DockerCompose``.

    The client URL of the started service (``SERVICES[service]``, or ``port`` and ``url_template`` for a
    service of another compose file given as ``compose``) is passed to ``vector_settings`` (default
    ``{"url": url}``) and, when given, ``storage_settings``.
    """
    known = SERVICES.get(service)
    if port is not None or url_template is not None:
        if port is None or url_template is None:
            raise ValueError("docker_target: give both port and url_template, or neither")
        known = ComposeService(port, url_template)
    if known is None:
        raise ValueError(
            f"docker_target: unknown compose service {service!r}; the kit's file has {', '.join(SERVICES)} "
            f"(pass compose=, port= and url_template= for another file)"
        )
    spec = known

    @provisioned_target(
        name or f"{adapter}-docker",
        adapter,
        "docker",
        description=description or f"{service} from the kit's pinned docker-compose.yml (testcontainers)",
        has_storage=storage_settings is not None,
    )
    def target(tmp: Path) -> Iterator[TargetSettings]:
        reason = docker_unavailable_reason()
        if reason is not None:
            raise TargetUnavailable(reason)
        file = compose or compose_file()
        if not file.is_file():
            raise TargetUnavailable(f"the compose file {file} does not exist")
        module: Any = importlib.import_module("testcontainers.compose")
        environment = module.DockerCompose(
            context=str(file.parent), compose_file_name=file.name, services=[service], wait=True
        )
        try:
            environment.start()
        except Exception as exc:
            environment.stop()
            raise TargetUnavailable(f"docker compose could not start {service}: {exc}") from exc
        try:
            host = _loopback(environment.get_service_host(service, spec.port))
            mapped = int(environment.get_service_port(service, spec.port))
            url = spec.url(host, mapped)
            yield TargetSettings(
                vector=vector_settings(url),
                storage=storage_settings(url) if storage_settings is not None else None,
                options=dict(options or {}),
            )
        finally:
            environment.stop()

    return target
