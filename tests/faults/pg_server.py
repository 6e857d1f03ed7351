"""SIGKILL and restart of the private PostgreSQL that
:func:`mastra_memory_pgvector.testing.server.local_server` started for a test, on the same data directory,
binaries, port and options.

``local_server`` has no restart, so this module restarts the cluster itself: PostgreSQL records the exact
command line of its postmaster in ``<data>/postmaster.opts`` and its PID in ``<data>/postmaster.pid``.
Only that server is ever signalled, after checking that its command line names our data directory under
the temporary directory; the restarted postmaster is ours, stopped by its PID in :meth:`FaultServer.stop`
(and sent SIGINT by Linux if this process dies first).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

import psycopg
from psycopg import sql

_PR_SET_PDEATHSIG: Final = 1
_START_TIMEOUT: Final = 60.0
_STOP_TIMEOUT: Final = 15.0
_GONE_TIMEOUT: Final = 30.0


def _die_with_parent() -> None:
    """In the restarted postmaster before ``exec``: SIGINT (fast shutdown) when the test process dies."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGINT)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not: it holds no shared memory and no socket)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(p) for p in (task / "children").read_text().split()]
    return found


class FaultServer:
    """The test's PostgreSQL: kill it with SIGKILL mid-work, restart it on the same data directory."""

    def __init__(self, url: str, log: Path) -> None:
        self.url = url
        self.log = log
        with psycopg.connect(url, connect_timeout=5) as conn:
            row = conn.execute("SHOW data_directory").fetchone()
            assert row is not None
            self.data = Path(str(row[0]))
            # The test server runs with synchronous_commit=off (for speed): a commit is acknowledged
            # before its WAL leaves shared memory, so SIGKILL may lose the last ~0.6 s of commits by
            # design. Production keeps PostgreSQL's default, `on`; the fault test measures that
            # contract. A database setting outranks the server's command line for every new session.
            database = sql.Identifier(conn.info.dbname)
            conn.execute(sql.SQL("ALTER DATABASE {} SET synchronous_commit = on").format(database))
            conn.commit()
        if not self.data.is_relative_to(tempfile.gettempdir()):
            raise RuntimeError(f"refusing to kill a server outside the temporary directory: {self.data}")
        self.restarted: subprocess.Popen[bytes] | None = None
        self.restarts = 0

    def postmaster_pid(self) -> int:
        """The PID of the running postmaster of our data directory (checked against its command line)."""
        pid = int((self.data / "postmaster.pid").read_text().split("\n", 1)[0])
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if str(self.data).encode() not in cmdline:
            raise RuntimeError(f"PID {pid} of {self.data}/postmaster.pid is not our server: {cmdline!r}")
        return pid

    def kill9(self) -> int:
        """SIGKILL the postmaster; wait (bounded) until it and its backends are gone. Returns its PID."""
        pid = self.postmaster_pid()
        backends = _children(pid)
        os.kill(pid, signal.SIGKILL)
        end = time.monotonic() + _GONE_TIMEOUT
        while True:
            with contextlib.suppress(ChildProcessError):
                # local_server started it from this process: reap it, or the restarted postmaster would
                # see a live PID in postmaster.pid and refuse the data directory.
                os.waitpid(pid, os.WNOHANG)
            # Backends notice the postmaster's death and exit on their own; only wait for them.
            if not _alive(pid) and not any(_alive(b) for b in backends):
                return pid
            if time.monotonic() > end:
                raise AssertionError(f"postgres {pid} or its backends {backends} survived SIGKILL")
            time.sleep(0.02)

    def restart(self) -> float:
        """Start the postmaster again from ``postmaster.opts`` (crash recovery runs); seconds until ready."""
        argv = shlex.split((self.data / "postmaster.opts").read_text())
        if not argv or Path(argv[0]).name != "postgres" or str(self.data) not in argv:
            raise RuntimeError(f"unexpected {self.data}/postmaster.opts: {argv!r}")
        owner = self.data.stat().st_uid
        user = owner if os.geteuid() == 0 and owner != 0 else None  # PostgreSQL refuses to run as root
        began = time.monotonic()
        end = began + _START_TIMEOUT
        while True:
            with self.log.open("ab") as log:
                process = subprocess.Popen(
                    argv,
                    user=user,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=_die_with_parent,
                )
            self.restarted = process
            while process.poll() is None:
                if self._accepts_sessions():
                    self.restarts += 1
                    return time.monotonic() - began
                if time.monotonic() > end:
                    self.stop()
                    raise AssertionError(f"postgres did not restart in {_START_TIMEOUT} s:\n{self._tail()}")
                time.sleep(0.05)
            if time.monotonic() > end:  # it exited (e.g. shared memory still attached): try again
                raise AssertionError(f"postgres did not restart in {_START_TIMEOUT} s:\n{self._tail()}")
            time.sleep(0.2)

    def _accepts_sessions(self) -> bool:
        try:
            with psycopg.connect(self.url, connect_timeout=2) as conn:
                conn.execute("SELECT 1")
        except psycopg.OperationalError:
            return False
        return True

    def _tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""

    def stop(self) -> None:
        """Fast shutdown of the restarted postmaster (its PID only); SIGKILL if it does not stop."""
        process = self.restarted
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGINT)
        try:
            process.wait(_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGKILL)
            process.wait(_STOP_TIMEOUT)
