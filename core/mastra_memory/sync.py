"""Blocking wrappers for scripts and the CLI: the same objects and signatures, without ``await``.

``wrap(obj)`` returns a proxy whose coroutine methods block until done; everything else passes through.
All calls run on one private event loop in a background thread, so objects that hold loop-bound
resources (HTTP clients, connection pools) keep working from call to call.

    from mastra_memory import sync
    from mastra_memory.stores.sqlite.store import SQLiteVector

    store = sync.wrap(SQLiteVector(url="./memory.db"))
    store.create_index("docs", 3)
    hits = store.query("docs", [0.1, 0.2, 0.3], top_k=5)
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import inspect
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Generic, TypeVar

T = TypeVar("T")
Obj = TypeVar("Obj")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _background_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="mastra-memory-sync", daemon=True)
            thread.start()
            atexit.register(_stop, loop)
            _loop = loop
        return _loop


def _stop(loop: asyncio.AbstractEventLoop) -> None:
    if not loop.is_closed():
        loop.call_soon_threadsafe(loop.stop)


def run(awaitable: Awaitable[T]) -> T:
    """Run ``awaitable`` to completion on the background loop and return its result.

    Raises RuntimeError when called from inside a running event loop: there, ``await`` it instead.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        if inspect.iscoroutine(awaitable):
            awaitable.close()
        raise RuntimeError("mastra_memory.sync is for code without an event loop; use `await` here instead")

    async def _await() -> T:
        return await awaitable

    return asyncio.run_coroutine_threadsafe(_await(), _background_loop()).result()


class SyncProxy(Generic[Obj]):
    """A blocking view of an async object. ``proxy.unwrap()`` returns the object itself."""

    __slots__ = ("_target",)

    def __init__(self, target: Obj) -> None:
        object.__setattr__(self, "_target", target)

    def unwrap(self) -> Obj:
        return self._target  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if inspect.iscoroutinefunction(attr):
            return _blocking(attr)
        return attr

    def __repr__(self) -> str:
        return f"sync.wrap({self._target!r})"


def _blocking(fn: Callable[..., Coroutine[Any, Any, T]]) -> Callable[..., T]:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> T:
        return run(fn(*args, **kwargs))

    return call


def wrap(target: Obj) -> SyncProxy[Obj]:
    """Return a blocking proxy of ``target`` (a vector store, a storage, a ``Memory``, ...)."""
    return SyncProxy(target)
