"""The socket guard: while the suite runs against a target, only loopback connections are allowed.

Emulators of cloud services (moto, local stand-ins) fall through to the real service for calls they do
not implement; the guard turns such an attempt into :class:`OutboundConnectionBlocked` instead. It patches
``socket.socket.connect``, ``socket.socket.connect_ex`` and ``socket.create_connection``. Unix sockets and
addresses in ``127.0.0.0/8`` and ``::1`` (also IPv4-mapped) pass; a host name passes when it is
``localhost`` or resolves only to loopback addresses.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable
from typing import Any, Final

__all__ = ["LoopbackGuard", "OutboundConnectionBlocked", "is_loopback"]

_LOCAL_NAMES: Final = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})


class OutboundConnectionBlocked(RuntimeError):
    """A test tried to connect beyond loopback while the conformance socket guard was active."""


def _is_loopback_ip(text: str) -> bool | None:
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def is_loopback(host: str | bytes) -> bool:
    """Whether ``host`` (an address or a name) only ever means this machine."""
    name = host.decode() if isinstance(host, bytes) else host
    name = name.strip().strip("[]")
    literal = _is_loopback_ip(name)
    if literal is not None:
        return literal
    lowered = name.lower().rstrip(".")
    if lowered in _LOCAL_NAMES or lowered.endswith(".localhost"):
        return True
    try:
        infos = socket.getaddrinfo(name, None)
    except OSError:
        return False
    return bool(infos) and all(_is_loopback_ip(str(info[4][0])) for info in infos)


def _describe(address: Any) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    return repr(address)


class LoopbackGuard:
    """Install with :meth:`install`, remove with :meth:`uninstall`; ``blocked`` lists refused addresses."""

    def __init__(self) -> None:
        self.blocked: list[str] = []
        self._lock = threading.Lock()
        self._originals: tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]] | None = None

    @property
    def installed(self) -> bool:
        return self._originals is not None

    def check(self, family: int, address: Any) -> None:
        """Raise OutboundConnectionBlocked unless ``address`` of ``family`` is local."""
        if family == getattr(socket, "AF_UNIX", object()):
            return
        if family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple) and address:
            host = address[0]
            if isinstance(host, (str, bytes)) and is_loopback(host):
                return
        where = _describe(address)
        with self._lock:
            self.blocked.append(where)
        raise OutboundConnectionBlocked(
            f"the mastra-memory conformance kit blocks connections beyond loopback; a test tried {where}. "
            f"Run the backend locally (a url target on 127.0.0.1, docker, native or embedded)"
        )

    def install(self) -> None:
        if self._originals is not None:
            return
        connect = socket.socket.connect
        connect_ex = socket.socket.connect_ex
        create_connection = socket.create_connection
        guard = self

        def guarded_connect(sock: socket.socket, address: Any) -> None:
            guard.check(sock.family, address)
            connect(sock, address)

        def guarded_connect_ex(sock: socket.socket, address: Any) -> int:
            guard.check(sock.family, address)
            return connect_ex(sock, address)

        def guarded_create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
            guard.check(socket.AF_INET, address)
            return create_connection(address, *args, **kwargs)

        socket.socket.connect = guarded_connect  # type: ignore[method-assign,assignment]
        socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign,assignment]
        socket.create_connection = guarded_create_connection
        self._originals = (connect, connect_ex, create_connection)

    def uninstall(self) -> None:
        if self._originals is None:
            return
        connect, connect_ex, create_connection = self._originals
        socket.socket.connect = connect  # type: ignore[method-assign]
        socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
        socket.create_connection = create_connection
        self._originals = None

    def __enter__(self) -> LoopbackGuard:
        self.install()
        return self

    def __exit__(self, *exc: object) -> None:
        self.uninstall()
