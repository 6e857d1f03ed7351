"""What the server provisioners share: the build cache and its lock, free ports, and a server process that is
started with its output in a log file, waited for until it answers, and stopped by its PID.

The servers themselves live with their adapters, in each adapter's ``testing`` subpackage (OpenSearch,
FerretDB, S3Mock). Each is built once into a cache keyed by its version (:func:`cached_build`, in
:func:`cache_dir`: ``~/.cache/mastra-memory/``, or ``$MASTRA_MEMORY_CACHE_DIR``), then started per use on a
free loopback port in a temporary directory and stopped by PID (:func:`running_server`); those that run in a
JVM share :mod:`mastra_memory_conformance.jvm` too. A missing toolchain or a failed build raises
:class:`~mastra_memory_conformance.targets.TargetUnavailable` with the precise reason. Importing this module
starts nothing.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Final

from .targets import TargetUnavailable

__all__ = [
    "COMPLETE_MARKER",
    "ServerProcess",
    "build_lock",
    "cache_dir",
    "cached_build",
    "free_port",
    "free_ports",
    "log_tail",
    "require_tool",
    "run_build",
    "running_server",
    "start_timeout",
]

#: Written last into a build directory; a directory without it is an interrupted build and is redone.
COMPLETE_MARKER: Final = ".complete"
_STOP_TIMEOUT: Final = 30.0
_POLL_INTERVAL: Final = 0.25


def cache_dir(*parts: str) -> Path:
    """The build cache joined with ``parts``, created if missing.

    The cache is ``$MASTRA_MEMORY_CACHE_DIR``, else ``$XDG_CACHE_HOME/mastra-memory``, else
    ``~/.cache/mastra-memory``.
    """
    root = os.environ.get("MASTRA_MEMORY_CACHE_DIR", "").strip()
    if root:
        base = Path(root).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        base = (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "mastra-memory"
    path = base.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def start_timeout(default: float) -> float:
    """Seconds to wait for a started server: ``$MASTRA_MEMORY_SERVER_START_TIMEOUT``, else ``default``."""
    value = os.environ.get("MASTRA_MEMORY_SERVER_START_TIMEOUT", "").strip()
    return float(value) if value else default


@contextmanager
def build_lock(directory: Path) -> Iterator[None]:
    """An exclusive lock on ``directory/.lock``, so parallel test processes build a server only once."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as handle:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: no lock, builds may race
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def require_tool(name: str, purpose: str) -> str:
    """The path of the executable ``name``, or :class:`TargetUnavailable` saying what it is needed for."""
    found = shutil.which(name)
    if found is None:
        raise TargetUnavailable(f"`{name}` is not on PATH; it is needed to {purpose}")
    return found


def free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago (the OS's choice of an ephemeral port)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports, each free on 127.0.0.1 a moment ago (a server that listens on several)."""
    ports: list[int] = []
    while len(ports) < count:
        port = free_port()
        if port not in ports:
            ports.append(port)
    return ports


def log_tail(path: Path, lines: int = 30) -> str:
    """The last ``lines`` lines of a log file (empty if it does not exist)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def cached_build(*parts: str, build: Callable[[Path, Path], str], product: str | None = None) -> Path:
    """The build directory ``cache_dir(*parts)``, built first unless a finished build is there (its
    :data:`COMPLETE_MARKER`, and the file ``product`` inside it when given).

    The build holds the directory's lock (:func:`build_lock`), so parallel test processes build only once:
    one that waited for another's build finds it finished. ``build(directory, log)`` does the work, with its
    steps' output in ``log`` (``build.log`` there, emptied first), and returns the text of the marker, which
    is written last, so that an interrupted build is redone.
    """
    directory = cache_dir(*parts)

    def finished() -> bool:
        return (directory / COMPLETE_MARKER).is_file() and (
            product is None or (directory / product).is_file()
        )

    if finished():
        return directory
    with build_lock(directory):
        if finished():
            return directory
        log = directory / "build.log"
        log.unlink(missing_ok=True)
        marker = build(directory, log)
        (directory / COMPLETE_MARKER).write_text(marker)
    return directory


def _spawn(
    command: Sequence[str], *, cwd: Path, out: IO[Any], env: Mapping[str, str] | None, new_session: bool
) -> subprocess.Popen[bytes]:
    """``command`` started with no input and both its output streams into ``out``."""
    return subprocess.Popen(
        list(command),
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=new_session,
    )


def run_build(
    command: Sequence[str], *, cwd: Path, log: Path, what: str, env: Mapping[str, str] | None = None
) -> None:
    """Run one build step with its output appended to ``log``; a failure is :class:`TargetUnavailable` with
    the step, the exit code and the end of the log."""
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"$ {' '.join(command)}\n")
        out.flush()
        process = _spawn(command, cwd=cwd, out=out, env=env, new_session=False)
        try:
            returncode = process.wait()
        except BaseException:  # interrupted: the step must not outlive the build
            process.kill()
            process.wait()
            raise
    if returncode != 0:
        raise TargetUnavailable(
            f"{what} failed (exit {returncode}: {' '.join(command)}); full log in {log}:\n{log_tail(log)}"
        )


class ServerProcess:
    """One server process: its output goes to ``log``; :meth:`stop` ends it by its PID."""

    def __init__(self, name: str, process: subprocess.Popen[bytes], log: Path) -> None:
        self.name = name
        self.process = process
        self.log = log

    @property
    def pid(self) -> int:
        return self.process.pid

    def wait_ready(self, ready: Callable[[], bool], timeout: float) -> float:
        """Poll ``ready`` until it returns True; the seconds it took. If the process exits first, or
        ``timeout`` seconds pass, stop it and raise :class:`TargetUnavailable` with the end of its log."""
        started = time.monotonic()
        while True:
            code = self.process.poll()
            if code is not None:
                raise TargetUnavailable(
                    f"{self.name} exited with code {code} before it was ready; log {self.log}:\n"
                    f"{log_tail(self.log)}"
                )
            if ready():
                return time.monotonic() - started
            if time.monotonic() - started > timeout:
                self.stop()
                raise TargetUnavailable(
                    f"{self.name} did not answer within {timeout:.0f} s (set "
                    f"MASTRA_MEMORY_SERVER_START_TIMEOUT to wait longer); log {self.log}:\n"
                    f"{log_tail(self.log)}"
                )
            time.sleep(_POLL_INTERVAL)

    def stop(self, timeout: float = _STOP_TIMEOUT) -> int:
        """SIGTERM to the PID, then SIGKILL if it has not exited after ``timeout`` seconds; its exit code."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
        return self.process.returncode


@contextmanager
def running_server(
    name: str,
    command: Sequence[str],
    *,
    cwd: Path,
    log: Path,
    ready: Callable[[], bool],
    timeout: float,
    env: Mapping[str, str] | None = None,
) -> Iterator[ServerProcess]:
    """Start ``command`` (output to ``log``), wait until ``ready()``, yield it, and stop it on exit.

    It waits ``timeout`` seconds, or ``$MASTRA_MEMORY_SERVER_START_TIMEOUT`` (:func:`start_timeout`).
    """
    with open(log, "ab") as out:
        # Its own session: a Ctrl-C in the test terminal reaches pytest, which then stops the server.
        process = _spawn(command, cwd=cwd, out=out, env=env, new_session=True)
    server = ServerProcess(name, process, log)
    try:
        server.wait_ready(ready, start_timeout(timeout))
        yield server
    finally:
        server.stop()
