"""In-process models: the optional-extra check, a load-once-per-process holder, and
:class:`InProcessEmbedder`, what the ``<provider>/<model>`` embedders running a library's model here share.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError
from .base import EmbedResult

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


class InProcessEmbedder(ABC):
    """An embedder running a library's model in this process, loaded once per process in a worker thread.

    ``model`` names the library's model (empty: :attr:`default_model`); the one construction option
    :attr:`option` (a string, or absent) is passed to the loader and keeps models loaded with different
    values apart. Subclasses set the class variables, :meth:`_load` and :meth:`_vectors`.

    Raises:
        ConfigError: at construction when :attr:`module` is not installed (naming the extra), or when the
            option is not a string.
    """

    #: The ``<provider>`` of model ids, e.g. ``"fastembed"``.
    provider: ClassVar[str]
    #: The pip extra that installs the library (``mastra-memory[<extra>]``), and how messages name it.
    extra: ClassVar[str]
    #: The library's import name.
    module: ClassVar[str]
    #: The model a bare ``<provider>`` means.
    default_model: ClassVar[str]
    #: The one construction option, and what it must be (completing "<option> must be ...").
    option: ClassVar[str]
    option_kind: ClassVar[str]
    max_batch_size = 256

    def __init__(self, model: str = "", options: Mapping[str, Any] | None = None) -> None:
        self.model = model or self.default_model
        self.model_id = f"{self.provider}/{self.model}"
        require_extra(self.module, self.extra, self.model_id)
        value = (options or {}).get(self.option)
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{self.option} must be {self.option_kind}, got {value!r}")
        self.dimension: int | None = None
        self._model = shared_model((self.provider, self.model, value), lambda: self._load(self.model, value))

    async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
        """Embed ``texts`` in a worker thread (the first call also loads the model there)."""
        if not texts:
            return EmbedResult([], None)
        vectors = await asyncio.to_thread(self._encode, list(texts))
        self.dimension = int(vectors.shape[1])
        return EmbedResult(vectors.tolist(), None)

    def _encode(self, texts: list[str]) -> npt.NDArray[np.float64]:
        model = self._model.get()
        return np.asarray(self._vectors(model, texts, min(len(texts), 64)), dtype=np.float64)

    def _library(self, model: str) -> Any:
        """The library, imported (in :meth:`_load`). It is installed (construction checked); one that does not
        import is a broken install: ConfigError saying to reinstall the extra."""
        try:
            return importlib.import_module(self.module)
        except ImportError as exc:
            raise ConfigError(
                f"{self.provider}/{model} could not import {self.extra} ({exc}); "
                f'reinstall: pip install "mastra-memory[{self.extra}]"'
            ) from exc

    @abstractmethod
    def _load(self, model: str, value: str | None) -> Any:
        """Load ``model`` with the option's ``value`` (blocking: runs in a worker thread, once)."""

    @abstractmethod
    def _vectors(self, model: Any, texts: list[str], batch_size: int) -> Any:
        """The loaded model's vectors for ``texts``, as rows of anything numpy reads as floats."""
