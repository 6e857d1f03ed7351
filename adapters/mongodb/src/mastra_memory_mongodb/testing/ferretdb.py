"""FerretDB v1, a MongoDB wire-protocol server, with its SQLite backend, built from the Go module proxy.

FerretDB 1.x is the last line with an embedded SQLite backend (2.x needs PostgreSQL with DocumentDB).
:func:`build_ferretdb` fetches the module ``github.com/FerretDB/FerretDB`` at :data:`FERRETDB_VERSION` with
``go mod download`` and builds ``./cmd/ferretdb`` into ``~/.cache/mastra-memory/ferretdb/<version>/``.
(A plain ``go install …/cmd/ferretdb@v1.24.2`` builds too, but the binary panics at start: the module as
published lacks the generated ``build/version/version.txt``, so the build writes that file into a copy
of the module first.)

:func:`ferretdb_server` starts it on a free loopback port with its SQLite files in a temporary directory,
waits until it answers a wire-protocol ``ping``, yields a ``mongodb://`` URI and stops it by PID.
Telemetry and the debug HTTP listener are off. What FerretDB v1 does and does not implement is listed in
``docs/targets.md``; it has no ``$vectorSearch``.

Needs Go (``go`` on PATH) with access to the Go module proxy for the first build.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import struct
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final, Unpack

from mastra_memory_conformance.launcher import (
    cached_build,
    free_port,
    require_tool,
    run_build,
    running_server,
)
from mastra_memory_conformance.targets import (
    AddressSettings,
    ConformanceTarget,
    TargetUnavailable,
    address_target,
)

__all__ = [
    "FERRETDB_MODULE",
    "FERRETDB_VERSION",
    "build_ferretdb",
    "ferretdb_server",
    "ferretdb_target",
    "wire_ping",
]

FERRETDB_MODULE: Final = "github.com/FerretDB/FerretDB"
FERRETDB_VERSION: Final = "v1.24.2"
_START_TIMEOUT: Final = 60.0
_BINARY: Final = "bin/ferretdb"
_OP_MSG: Final = 2013


def _go_env() -> dict[str, str]:
    env = dict(os.environ)
    # Build with the Go that is installed; never download another toolchain.
    env["GOTOOLCHAIN"] = "local"
    env.setdefault("GOFLAGS", "-buildvcs=false")
    env["GO111MODULE"] = "on"
    env["GOWORK"] = "off"  # a go.work above the cache must not pull the build into someone's workspace
    return env


def _make_writable(tree: Path) -> None:
    # The module cache is read-only; the copy must be writable (to add a file, and to delete it later).
    for path in [tree, *tree.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | stat.S_IWUSR)


def build_ferretdb() -> Path:
    """Build FerretDB once; the path of the ``ferretdb`` binary (about a minute the first time)."""
    return cached_build("ferretdb", FERRETDB_VERSION, build=_build, product=_BINARY) / _BINARY


def _build(build: Path, log: Path) -> str:
    go = require_tool("go", f"build FerretDB {FERRETDB_VERSION} from the Go module proxy")
    env = _go_env()
    what = f"building FerretDB {FERRETDB_VERSION}"
    module = f"{FERRETDB_MODULE}@{FERRETDB_VERSION}"
    # Outside any module (the cache directory), `go mod download` just fetches the module.
    download = subprocess.run(
        [go, "mod", "download", "-json", module],
        cwd=build,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        source = Path(json.loads(download.stdout)["Dir"])
    except (ValueError, KeyError, TypeError):
        raise TargetUnavailable(
            f"{what}: `go mod download {module}` failed (exit {download.returncode}): "
            f"{(download.stderr or download.stdout).strip()[-600:]}"
        ) from None
    src = build / "src"
    if src.exists():
        _make_writable(src)
        shutil.rmtree(src)
    shutil.copytree(source, src, symlinks=True)
    _make_writable(src)
    (src / "build" / "version" / "version.txt").write_text(f"{FERRETDB_VERSION}\n")
    (src / "build" / "version" / "package.txt").write_text("mastra-memory-conformance\n")
    binary = build / _BINARY
    run_build(
        [go, "build", "-trimpath", "-o", str(binary), "./cmd/ferretdb"],
        cwd=src,
        log=log,
        what=what,
        env=env,
    )
    run_build([str(binary), "--version"], cwd=build, log=log, what=f"{what}: running it", env=env)
    _make_writable(src)
    shutil.rmtree(src)
    return f"{FERRETDB_MODULE} {FERRETDB_VERSION}\n"


def _bson_document(elements: bytes) -> bytes:
    return struct.pack("<i", len(elements) + 5) + elements + b"\x00"


def _bson_cstring(text: str) -> bytes:
    return text.encode() + b"\x00"


def wire_ping(host: str, port: int, timeout: float = 5.0) -> bool:
    """Whether a MongoDB wire-protocol server at ``host:port`` answers ``{ping: 1}`` with ``ok: 1``.

    Speaks ``OP_MSG`` directly, so it needs no driver: a header, flag bits 0, and one body section.
    """
    ping = b"\x10" + _bson_cstring("ping") + struct.pack("<i", 1)  # int32 ping: 1
    # "$db": "admin" (a string element: its length counts the trailing NUL)
    database = b"\x02" + _bson_cstring("$db") + struct.pack("<i", 6) + _bson_cstring("admin")
    body = _bson_document(ping + database)
    payload = struct.pack("<I", 0) + b"\x00" + body
    message = struct.pack("<iiii", 16 + len(payload), 1, 0, _OP_MSG) + payload
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(message)
            header = _receive(sock, 16)
            length, _, _, opcode = struct.unpack("<iiii", header)
            reply = _receive(sock, length - 16)
    except OSError:
        return False
    # The reply's body holds the element `ok` (double) = 1.0.
    return opcode == _OP_MSG and b"\x01ok\x00" + struct.pack("<d", 1.0) in reply


def _receive(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            raise ConnectionError("connection closed mid-message")
        chunks += chunk
    return bytes(chunks)


@contextmanager
def ferretdb_server(tmp: Path) -> Iterator[str]:
    """Start FerretDB with its SQLite files in ``tmp`` and yield its URI,
    ``mongodb://127.0.0.1:<port>/?directConnection=true``. Its log is ``tmp/ferretdb.log``.
    """
    binary = build_ferretdb()
    data, state = tmp / "ferretdb-data", tmp / "ferretdb-state"
    data.mkdir(parents=True, exist_ok=True)
    state.mkdir(parents=True, exist_ok=True)
    port = free_port()
    command = [
        str(binary),
        "--handler=sqlite",
        f"--sqlite-url=file:{data}/",
        f"--listen-addr=127.0.0.1:{port}",
        f"--state-dir={state}",
        "--debug-addr=-",  # no metrics/pprof HTTP listener
        "--telemetry=disable",  # never call home
        "--log-level=info",
    ]
    # Only our flags configure it: drop FERRETDB_* variables a developer may have set.
    env = {k: v for k, v in os.environ.items() if not k.startswith("FERRETDB_")}
    with running_server(
        f"FerretDB {FERRETDB_VERSION}",
        command,
        cwd=state,
        log=tmp / "ferretdb.log",
        ready=lambda: wire_ping("127.0.0.1", port),
        timeout=_START_TIMEOUT,
        env=env,
    ):
        yield f"mongodb://127.0.0.1:{port}/?directConnection=true"


def ferretdb_target(
    *, adapter: str = "mongodb", name: str = "mongodb-ferretdb", **settings: Unpack[AddressSettings]
) -> ConformanceTarget:
    """A ``native`` target on a fresh FerretDB per provisioning.

    The vector store receives ``{setting: <uri>, **vector_settings}`` (``setting`` is ``"uri"`` unless
    given); with ``storage_setting`` the storage receives ``{storage_setting: <uri>}``
    (:class:`~mastra_memory_conformance.targets.AddressSettings`).

    FerretDB has no ``$vectorSearch``: an adapter that needs it must bring its own stand-in for that stage.
    """
    settings.setdefault("setting", "uri")
    return address_target(
        adapter,
        "native",
        ferretdb_server,
        name=name,
        description=(
            f"FerretDB {FERRETDB_VERSION} (MongoDB wire protocol, SQLite backend) built from the Go module "
            "proxy; no $vectorSearch"
        ),
        **settings,
    )
