"""OpenTelemetry spans around saves, embeds, vector calls and recall (the ``otel`` extra).

With ``opentelemetry-api`` installed, every ``Memory.save_messages``, ``Memory.recall``, embedder batch
and vector-store call the memory makes runs in a span of the tracer ``mastra_memory``, exported wherever
the application's ``TracerProvider`` sends spans; without it (or without a provider) this module does
nothing and costs one function call. Attributes carry ids, counts, names and scores, never message
text: the text of a query or of embedded messages is added (``mastra_memory.text``) only after
``configure(record_text=True)`` or with ``MASTRA_MEMORY_TRACE_TEXT=1`` (docs/tracing.md).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ParamSpec, Protocol, TypeVar

__all__ = [
    "TEXT_ATTRIBUTE",
    "TRACER_NAME",
    "AttributeValue",
    "SpanLike",
    "add_text",
    "configure",
    "enabled",
    "record_text",
    "span",
    "traced",
    "vector_call",
]

T = TypeVar("T")
P = ParamSpec("P")

TRACER_NAME = "mastra_memory"
#: The one attribute that may carry user text, and only when asked for.
TEXT_ATTRIBUTE = "mastra_memory.text"
_TEXT_ENV = "MASTRA_MEMORY_TRACE_TEXT"

AttributeValue = str | bool | int | float | Sequence[str] | Sequence[int] | Sequence[float]

_record_text: bool | None = None  # None: read the environment variable


class SpanLike(Protocol):
    """What the traced code may do with its span (an OpenTelemetry ``Span``, or the no-op one)."""

    def set_attribute(self, key: str, value: AttributeValue) -> None: ...


class _NoSpan:
    def set_attribute(self, key: str, value: AttributeValue) -> None:
        return None


_NO_SPAN = _NoSpan()


def _tracer() -> Any:
    try:
        from opentelemetry import trace
    except ImportError:  # the otel extra is not installed: tracing is off
        return None
    from .version import __version__

    # Looked up per span, not cached: the application may install its TracerProvider after import.
    return trace.get_tracer(TRACER_NAME, __version__)


def enabled() -> bool:
    """True when ``opentelemetry-api`` is importable (spans go to the current ``TracerProvider``)."""
    return _tracer() is not None


def configure(*, record_text: bool | None = None) -> None:
    """Tracing settings. ``record_text=True`` adds message and query text to spans
    (``mastra_memory.text``); ``None`` goes back to the environment variable ``MASTRA_MEMORY_TRACE_TEXT``
    (off unless ``1``/``true``)."""
    global _record_text
    _record_text = record_text


def record_text() -> bool:
    """Whether spans carry text (docs/tracing.md: off by default, message text is user data)."""
    if _record_text is not None:
        return _record_text
    return os.environ.get(_TEXT_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def add_text(current: SpanLike, text: str | Sequence[str]) -> None:
    """Add ``text`` to ``current`` as ``mastra_memory.text`` when :func:`record_text` is on; else nothing."""
    if text and record_text():
        current.set_attribute(TEXT_ATTRIBUTE, text if isinstance(text, str) else list(text))


@contextmanager
def span(
    name: str,
    attributes: Mapping[str, AttributeValue | None] | None = None,
    *,
    text: str | Sequence[str] = (),
) -> Iterator[SpanLike]:
    """A span named ``name`` with ``attributes`` (``None`` values left out); ``text`` is recorded only when
    :func:`record_text` is on. An exception escaping the block is recorded on the span and re-raised."""
    tracer = _tracer()
    if tracer is None:
        yield _NO_SPAN
        return
    attrs = {k: v for k, v in (attributes or {}).items() if v is not None}
    if text and record_text():
        attrs[TEXT_ATTRIBUTE] = text if isinstance(text, str) else list(text)
    with tracer.start_as_current_span(name, attributes=attrs) as current:
        yield current


def traced(
    name: str,
    before: Callable[..., Mapping[str, AttributeValue | None]],
    after: Callable[[Any, SpanLike], None] | None = None,
    text: Callable[..., str | Sequence[str]] | None = None,
) -> Callable[[Callable[P, Coroutine[Any, Any, T]]], Callable[P, Coroutine[Any, Any, T]]]:
    """Decorate an async method: its call runs in span ``name``; ``before(*args, **kwargs)`` gives the
    attributes, ``after(result, span)`` adds the result's, ``text(*args, **kwargs)`` the optional text."""

    def decorate(fn: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, Coroutine[Any, Any, T]]:
        @functools.wraps(fn)
        async def call(*args: P.args, **kwargs: P.kwargs) -> T:
            if _tracer() is None:
                return await fn(*args, **kwargs)
            with span(
                name, before(*args, **kwargs), text=text(*args, **kwargs) if text is not None else ()
            ) as current:
                result = await fn(*args, **kwargs)
                if after is not None:
                    after(result, current)
                return result

        return call

    return decorate


async def vector_call(
    operation: str, vector: object, index: str, call: Awaitable[T], **attributes: AttributeValue | None
) -> T:
    """Await one vector-store call in span ``mastra_memory.vector.<operation>`` (store class, index name,
    and ``result_count`` for a list result)."""
    attrs: dict[str, AttributeValue | None] = {
        "mastra_memory.vector.store": type(vector).__name__,
        "mastra_memory.vector.index": index,
    }
    attrs.update({f"mastra_memory.vector.{key}": value for key, value in attributes.items()})
    with span(f"mastra_memory.vector.{operation}", attrs) as current:
        result = await call
        if isinstance(result, list):
            current.set_attribute("mastra_memory.vector.result_count", len(result))
        return result
