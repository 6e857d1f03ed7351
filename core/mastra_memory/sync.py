"""Blocking wrappers for scripts and the CLI: the same objects and signatures, without ``await``.

``wrap(obj)`` returns a proxy whose coroutine methods block until done. The proxy is deep: an attribute,
property or return value that is itself an async object (``memory.storage``, ``memory.vector``,
``memory.embedder``, ``memory.indexer()``) comes back wrapped too, an async iterator becomes a plain
iterator, and ``async with`` becomes ``with``. Plain values (models, settings, strings) pass through.
All calls run on one private event loop in one background thread, so objects that hold loop-bound
resources (HTTP clients, connection pools) keep working from call to call, and the wrapper never starts
more than that one thread however many proxies exist.

    from mastra_memory import sync
    from mastra_memory.memory import Memory

    with sync.wrap(Memory(storage=..., embedder="hash/32")) as memory:
        memory.create_thread("user-1", "t1")
        page = memory.storage.list_threads(filter={"resourceId": "user-1"})
        hits = memory.vector.query(index_name, [0.1, 0.2, 0.3], top_k=5)

``wrap(obj, timeout=30)`` bounds every blocking call: past it the coroutine is cancelled on the loop and
``TimeoutError`` is raised.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import functools
import inspect
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")
Obj = TypeVar("Obj")

__all__ = ["SyncProxy", "run", "wrap"]

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
# Per class: does it have public coroutine methods or async iteration? Classes are few, so the cache
# stays small; keyed by type, never by instance.
_async_types: dict[type, bool] = {}


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


def run(awaitable: Awaitable[T], timeout: float | None = None) -> T:
    """Run ``awaitable`` to completion on the background loop and return its result.

    ``timeout`` (seconds) bounds the wait: past it the work is cancelled and ``TimeoutError`` raised.
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

    future = asyncio.run_coroutine_threadsafe(_await(), _background_loop())
    try:
        return future.result(timeout)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise TimeoutError(f"mastra_memory.sync: the call did not finish within {timeout}s") from None


def _is_async_object(value: object) -> bool:
    """Worth wrapping: an instance whose class has public coroutine methods or ``__aiter__``."""
    if (
        isinstance(value, (type, str, bytes, int, float, bool, list, dict, tuple, set, frozenset))
        or value is None
    ):
        return False
    if inspect.isroutine(value) or isinstance(value, SyncProxy):
        return False
    cls = type(value)
    known = _async_types.get(cls)
    if known is None:
        known = hasattr(cls, "__aiter__") or any(
            inspect.iscoroutinefunction(attr) or inspect.isasyncgenfunction(attr)
            for name, attr in inspect.getmembers_static(cls)
            if not name.startswith("_")
        )
        _async_types[cls] = known
    return known


class SyncProxy(Generic[Obj]):
    """A blocking view of an async object. ``proxy.unwrap()`` returns the object itself."""

    __slots__ = ("_target", "_timeout")

    def __init__(self, target: Obj, timeout: float | None = None) -> None:
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_timeout", timeout)

    def unwrap(self) -> Obj:
        """The wrapped async object, for code that awaits it."""
        return self._target  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if inspect.isasyncgenfunction(attr):
            return _iterating(attr, self._timeout)
        if callable(attr) and not isinstance(attr, type) and not _is_async_object(attr):
            return _blocking(attr, self._timeout)
        return _convert(attr, self._timeout)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._target, name, value.unwrap() if isinstance(value, SyncProxy) else value)

    def __enter__(self) -> SyncProxy[Obj]:
        if hasattr(self._target, "__aenter__"):
            run(self._target.__aenter__(), self._timeout)
        elif hasattr(self._target, "__enter__"):
            self._target.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if hasattr(self._target, "__aexit__"):
            run(self._target.__aexit__(*exc), self._timeout)
        elif hasattr(self._target, "__exit__"):
            self._target.__exit__(*exc)

    def __iter__(self) -> Iterator[Any]:
        if hasattr(self._target, "__aiter__"):
            return _blocking_iter(self._target.__aiter__(), self._timeout)
        return iter(self._target)

    def __repr__(self) -> str:
        return f"sync.wrap({self._target!r})"


def _convert(value: Any, timeout: float | None) -> Any:
    """Make a returned value usable without ``await``: run awaitables, wrap async objects and iterators."""
    if inspect.isawaitable(value) and not _is_async_object(value):
        value = run(value, timeout)
    if inspect.isasyncgen(value):
        return _blocking_iter(value, timeout)
    if _is_async_object(value):
        return SyncProxy(value, timeout)
    return value


def _blocking(fn: Callable[..., Any], timeout: float | None) -> Callable[..., Any]:
    # Also covers plain methods that return a coroutine or an async object (``memory.indexer()``);
    # arguments that are proxies are unwrapped so the async side sees its own objects.
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        args = tuple(a.unwrap() if isinstance(a, SyncProxy) else a for a in args)
        kwargs = {k: v.unwrap() if isinstance(v, SyncProxy) else v for k, v in kwargs.items()}
        return _convert(fn(*args, **kwargs), timeout)

    return call


def _iterating(fn: Callable[..., AsyncIterator[Any]], timeout: float | None) -> Callable[..., Iterator[Any]]:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Iterator[Any]:
        return _blocking_iter(fn(*args, **kwargs), timeout)

    return call


def _blocking_iter(aiter: AsyncIterator[Any], timeout: float | None) -> Iterator[Any]:
    # One item at a time on the background loop: nothing is read ahead, so memory stays bounded.
    while True:
        try:
            item = run(aiter.__anext__(), timeout)
        except StopAsyncIteration:
            return
        yield _convert(item, timeout)


def wrap(target: Obj, timeout: float | None = None) -> SyncProxy[Obj]:
    """Return a blocking proxy of ``target`` (a ``Memory``, a storage, a vector store, an embedder, ...).

    Nested async objects reached through it are wrapped too.

    Args:
        target: the async object to wrap (a proxy is returned as it is).
        timeout: seconds that bound every call made through the proxy and its nested proxies; default none.

    Returns:
        The proxy: the same methods without ``await``; ``with`` runs the target's ``async with``.

    Raises:
        RuntimeError: (from a call through the proxy) made inside a running event loop; ``await`` there.
        TimeoutError: (from a call through the proxy) a call took longer than ``timeout``; it was cancelled.
    """
    if isinstance(target, SyncProxy):
        return target
    return SyncProxy(target, timeout)
