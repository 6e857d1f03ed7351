"""The socket guard: while the kit runs against a target, only loopback and Unix sockets connect."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mastra_memory_conformance.network import LoopbackGuard, OutboundConnectionBlocked, is_loopback

# TEST-NET-1 (RFC 5737): documentation addresses that never route, so nothing leaves even if a check failed.
OUTSIDE_V4 = "192.0.2.1"
OUTSIDE_V6 = "2001:db8::1"


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that accepts connections; yields its port."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("::ffff:127.0.0.1", True),
        ("localhost", True),
        ("db.localhost", True),
        (b"127.0.0.1", True),
        (OUTSIDE_V4, False),
        (OUTSIDE_V6, False),
        ("::ffff:192.0.2.1", False),
        ("0.0.0.0", False),
    ],
)
def test_is_loopback(host: str | bytes, expected: bool) -> None:
    assert is_loopback(host) is expected


def test_loopback_connections_pass(listener: int) -> None:
    with LoopbackGuard() as guard:
        with socket.create_connection(("127.0.0.1", listener), timeout=5):
            pass
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            assert sock.connect_ex(("127.0.0.1", listener)) == 0
    assert guard.blocked == []


def test_outbound_connections_are_blocked_before_any_packet() -> None:
    with LoopbackGuard() as guard:
        with pytest.raises(
            OutboundConnectionBlocked, match=r"blocks connections beyond loopback.*192\.0\.2\.1:80"
        ):
            socket.create_connection((OUTSIDE_V4, 80), timeout=5)
        with (
            socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock,
            pytest.raises(OutboundConnectionBlocked),
        ):
            sock.connect((OUTSIDE_V4, 443))
        with (
            socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock,
            pytest.raises(OutboundConnectionBlocked),
        ):
            sock.connect_ex((OUTSIDE_V6, 443, 0, 0))
    assert guard.blocked == [f"{OUTSIDE_V4}:80", f"{OUTSIDE_V4}:443", f"{OUTSIDE_V6}:443"]


def test_unix_sockets_pass(tmp_path: Path) -> None:
    # Checked without connecting: this repository's own socket plugin refuses Unix sockets in tests.
    guard = LoopbackGuard()
    guard.check(socket.AF_UNIX, str(tmp_path / "docker.sock"))
    guard.check(socket.AF_UNIX, b"\0abstract")
    with pytest.raises(OutboundConnectionBlocked):
        guard.check(socket.AF_INET, (OUTSIDE_V4, 80))
    assert guard.blocked == [f"{OUTSIDE_V4}:80"]


def test_uninstall_restores_the_socket_functions() -> None:
    before = (socket.socket.connect, socket.socket.connect_ex, socket.create_connection)
    guard = LoopbackGuard()
    guard.install()
    assert guard.installed
    assert socket.socket.connect is not before[0]
    guard.uninstall()
    assert (socket.socket.connect, socket.socket.connect_ex, socket.create_connection) == before
    assert not guard.installed


GUARDED_SUITE = """
import socket

import pytest

from mastra_memory_conformance.network import OutboundConnectionBlocked


def test_reaches_out(conformance_target):
    with pytest.raises(OutboundConnectionBlocked):
        socket.create_connection(("192.0.2.1", 80), timeout=5)


def test_stays_local(conformance_target):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    with socket.create_connection(server.getsockname(), timeout=5):
        pass
    server.close()
"""


def test_the_plugin_guards_sockets_while_a_target_runs(kit_pytester: pytest.Pytester) -> None:
    kit_pytester.makepyfile(test_guarded=GUARDED_SUITE)
    before = socket.socket.connect
    result = kit_pytester.runpytest("-p", "no:socket", "--target", "sqlite")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["blocked outbound connections: 192.0.2.1:80"])
    assert socket.socket.connect is before
