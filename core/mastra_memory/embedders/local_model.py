"""Helpers for in-process models: the optional-extra check and a load-once-per-process holder."""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from ..errors import ConfigError

T = TypeVar("T")


def require_extra(module: str, extra: str, model_id: str) -> None:
    """Raise `ConfigError` naming the pip extra when ``module`` is not installed (without importing it)."""
    if importlib.util.find_spec(module) is None:
        raise ConfigError(
            f"Embedder {model_id} needs the optional package '{module}', which is not installed. "
            f'Install it with: pip install "mastra-memory[{extra}]"',
            details={"model_id": model_id, "extra": extra, "module": module},
        )


class LazyModel(Generic[T]):
    """A model loaded on first use, once per process.

    ``get()`` may be called from several worker threads at once (concurrent first embedding calls): one
    thread loads while the others wait on the lock, so weights are read or downloaded only once. A failed
    load is not remembered; the next call tries again.
    """

    def __init__(self, load: Callable[[], T]) -> None:
        self._load = load
        self._lock = threading.Lock()
        self._value: T | None = None

    def get(self) -> T:
        """The loaded model, loading it now if needed. Blocking: call it from a worker thread."""
        value = self._value
        if value is None:
            with self._lock:
                value = self._value
                if value is None:
                    value = self._value = self._load()
        return value


_SHARED: dict[Hashable, LazyModel[Any]] = {}
_SHARED_LOCK = threading.Lock()


def shared_model(key: Hashable, load: Callable[[], T]) -> LazyModel[T]:
    """The process-wide `LazyModel` for ``key``, created with ``load`` the first time it is asked for.

    Embedders built for the same model (say by two `Memory` instances) then share one copy of it.
    """
    with _SHARED_LOCK:
        holder = _SHARED.get(key)
        if holder is None:
            holder = _SHARED[key] = LazyModel(load)
    return holder
