"""Vector metadata as the hooks receive it (docs/spec.md §3.6): JSON data within the shared limits.

:func:`normalise_metadata` turns what a caller gives into JSON data; :func:`shared_metadata` judges one
record's metadata by the limits every store shares (before the store's own rules, its
``_metadata_problem``); :func:`first_problem` is the walk a store's own rules use — every key and
every scalar, depth-first, each named by its key path.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from ..errors import ValidationError
from ..metadata_limits import VECTOR_METADATA, shape_problem, size_problem
from ..timestamps import canonical_timestamp
from .records import RESERVED_PREFIX

__all__ = ["first_problem", "normalise_metadata", "shared_metadata"]


def normalise_metadata(value: Any, path: str = "") -> Any:
    """Return ``value`` as JSON data (datetimes as canonical timestamps, tuples as lists), docs/spec.md §3.6.

    Raises ``ValueError`` naming the key path for anything not representable (sets, bytes, Decimal,
    NaN, infinities, non-string keys, reserved ``_mastra_`` keys, other objects).
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"metadata value at {path or '<root>'} is not a finite number")
        return 0.0 if value == 0 else float(value)
    if isinstance(value, datetime):
        try:
            return canonical_timestamp(value)
        except ValidationError as exc:
            raise ValueError(f"metadata value at {path or '<root>'}: {exc}") from exc
        except OverflowError:
            raise ValueError(
                f"metadata value at {path or '<root>'}: {value.isoformat()} is outside the years 1-9999 "
                "once converted to UTC"
            ) from None
    if isinstance(value, (list, tuple)):
        return [normalise_metadata(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, val in value.items():
            if not isinstance(key, str):
                raise ValueError(f"metadata key {key!r} at {path or '<root>'} is not a string")
            if not path and key.startswith(RESERVED_PREFIX):
                raise ValueError(f"metadata key {key!r} is reserved for adapters (prefix {RESERVED_PREFIX})")
            out[key] = normalise_metadata(val, f"{path}.{key}" if path else key)
        return out
    raise ValueError(
        f"metadata value at {path or '<root>'} has unsupported type {type(value).__name__}; "
        "use str, int, float, bool, None, list, dict or datetime"
    )


def shared_metadata(raw: Mapping[str, Any]) -> tuple[dict[str, Any], None] | tuple[None, str]:
    """``(metadata, None)``: ``raw`` normalised, within the limits of
    :data:`~mastra_memory.metadata_limits.VECTOR_METADATA` (depth, keys, size, Unicode text; checked
    without recursion) and JSON data (:func:`normalise_metadata`); else ``(None, why)``."""
    problem = shape_problem(raw, VECTOR_METADATA)
    if problem is not None:
        return None, problem
    try:
        meta: dict[str, Any] = normalise_metadata(raw)
        problem = size_problem(
            json.dumps(meta, ensure_ascii=False, allow_nan=False, separators=(",", ":")), VECTOR_METADATA
        )
    except ValueError as exc:  # normalise_metadata's problems; an int of too many digits
        return None, str(exc)
    return (meta, None) if problem is None else (None, problem)


def first_problem(
    value: Any,
    scalar_problem: Callable[[Any, str], str | None],
    key_problem: Callable[[str, str], str | None] | None = None,
    path: str = "",
) -> str | None:
    """The first problem found in ``value`` (normalised metadata), walking depth-first in order.

    Every scalar and every key (named ``<path> (key)``) is judged by ``scalar_problem(value, path)``; a key
    is judged first by ``key_problem(key, path)`` when given. Paths read ``a.b[2].c``.
    """
    if isinstance(value, list):
        for i, item in enumerate(value):
            problem = first_problem(item, scalar_problem, key_problem, f"{path}[{i}]")
            if problem:
                return problem
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            problem = (
                (key_problem(key, child) if key_problem is not None else None)
                or scalar_problem(key, f"{child} (key)")
                or first_problem(item, scalar_problem, key_problem, child)
            )
            if problem:
                return problem
        return None
    return scalar_problem(value, path)
