"""One rule for a test that needs something this machine may lack: a tool (Go, Java, Maven, uv), a server
that must be built or started, a client library.

Outside CI such a test **skips with the reason**, so the README's test command passes on a machine without
the tool and says what did not run. Under ``CI`` (any non-empty value) or with
``MASTRA_MEMORY_REQUIRE_SERVERS=1`` the same test **fails with that reason**: there everything must run, and
a skip would hide that it did not.

* :func:`missing` applies the rule to a reason;
* :func:`need_tool` finds an executable or applies it;
* :func:`needs` applies it to a provisioner's :class:`~mastra_memory_conformance.targets.TargetUnavailable`
  (or another "cannot start" error) raised in a block;
* :func:`started` enters a server's context manager under it, for a fixture that yields the server.

The kit's ``conformance_target`` fixture applies the rule to targets that need only this machine (kinds
``native``, ``embedded``, ``emulated``); a ``url`` or ``docker`` target needs an outside service, and one
that is not there is skipped everywhere, CI included.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import Final, NoReturn, TypeVar

import pytest

from .targets import TargetUnavailable

__all__ = ["REQUIRE_ENV", "missing", "need_tool", "needs", "required", "started"]

#: Set to ``1`` to make a missing tool or server a failure outside CI too (the ``targets`` nox session).
REQUIRE_ENV: Final = "MASTRA_MEMORY_REQUIRE_SERVERS"

T = TypeVar("T")


def required() -> bool:
    """Whether a missing tool or server fails the test (CI, or ``MASTRA_MEMORY_REQUIRE_SERVERS=1``)."""
    return bool(os.environ.get("CI")) or os.environ.get(REQUIRE_ENV, "").strip() == "1"


def missing(reason: str) -> NoReturn:
    """Skip the test with ``reason`` -- or fail it, where :func:`required`.

    Usable at module level too (a missing client library skips the whole module)."""
    __tracebackhide__ = True  # pytest reports the skip at the test or fixture, not here
    if required():
        pytest.fail(f"{reason} (required here: CI or {REQUIRE_ENV}=1 is set)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def need_tool(name: str, purpose: str, *, env_var: str | None = None) -> str:
    """The path of the executable ``name``, or :func:`missing` saying what it is needed for.

    Looked for in ``env_var`` (a path, such as ``UV``, which uv and nox set to the uv they run), on ``PATH``,
    then beside this interpreter: a tool installed into the venv that runs the tests is found even when
    that venv's ``bin`` is not on ``PATH`` (``.venv/bin/pytest`` run without activating the venv)."""
    __tracebackhide__ = True
    configured = os.environ.get(env_var, "").strip() if env_var else ""
    if configured and shutil.which(configured):
        return configured
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        missing(f"`{name}` is not on PATH; it is needed to {purpose}")
    return found


class _Needs:
    # A class, not @contextmanager: with both frames hidden, pytest reports the skip at the test's line.
    def __init__(self, what: str, errors: tuple[type[BaseException], ...]) -> None:
        self.what = what
        self.errors = errors

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: object) -> None:
        __tracebackhide__ = True
        if error is not None and isinstance(error, self.errors):
            missing(f"{self.what} unavailable: {error}")


def needs(
    what: str, errors: tuple[type[BaseException], ...] = (TargetUnavailable,)
) -> AbstractContextManager[None]:
    """Run the block; if it raises one of ``errors`` (a backend that cannot be built or started), apply
    :func:`missing` with ``"<what> unavailable: <the error's reason>"``."""
    return _Needs(what, errors)


@contextmanager
def started(
    manager: AbstractContextManager[T],
    what: str,
    errors: tuple[type[BaseException], ...] = (TargetUnavailable,),
) -> Iterator[T]:
    """Enter ``manager`` (a server's context manager) under :func:`needs` and yield what it yields.

    Only entering is covered: an error while the server is in use, or while it stops, stays an error."""
    __tracebackhide__ = True
    with ExitStack() as stack:
        with needs(what, errors):
            value = stack.enter_context(manager)
        yield value
