"""The storage-level message metadata filter (docs/spec.md §4.6): its validation and its exact rule.

Every storage reproduces :func:`metadata_matches`: a backend may narrow candidates with its own query (any
superset of the matches), and the :class:`~mastra_memory.storage.MemoryStorage` template then decides each
candidate with this function, so the result is the spec's on every backend.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, TypeAlias

from ..errors import FilterValidationError
from ..metadata_limits import is_unicode, shown

__all__ = ["MetadataScalar", "metadata_matches", "validate_metadata_filter"]

MetadataScalar: TypeAlias = str | int | float | bool | None
"""A value a §4.6 filter may compare with."""

# docs/spec.md §4.6: identifier keys of at most 128 characters, minus the names reserved for JavaScript.
_METADATA_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MAX_METADATA_KEY_LENGTH = 128
_RESERVED_METADATA_KEYS = frozenset({"__proto__", "prototype", "constructor"})


def validate_metadata_filter(value: Any) -> dict[str, MetadataScalar]:
    """Check a storage metadata filter (docs/spec.md §4.6) and return it as a plain dict.

    Raises FilterValidationError with the exact phrases of the spec.
    """
    if not isinstance(value, Mapping):
        raise FilterValidationError("metadata filter must be a dict")
    for key, item in value.items():
        if (
            not isinstance(key, str)
            or len(key) > _MAX_METADATA_KEY_LENGTH
            or key in _RESERVED_METADATA_KEYS
            or not _METADATA_KEY.match(key)
        ):
            raise FilterValidationError(
                f'invalid metadata filter key "{shown(key) if isinstance(key, str) else key}"'
            )
        valid = (
            item is None
            or isinstance(item, bool | int)
            or (isinstance(item, str) and is_unicode(item))  # no stored text holds an unpaired surrogate
            or (isinstance(item, float) and math.isfinite(item))
        )
        if not valid:
            raise FilterValidationError(
                f'invalid metadata filter value for key "{key}": expected str, finite number, bool or None'
            )
    return dict(value)


def _typed_equal(expected: MetadataScalar, actual: Any) -> bool:
    # bool subclasses int, so bools are checked first and never compared with numbers (docs/spec.md §4.6).
    if expected is None:
        return actual is None
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if isinstance(expected, int | float):
        return isinstance(actual, int | float) and expected == actual
    return isinstance(actual, str) and expected == actual


def metadata_matches(filter: Mapping[str, MetadataScalar] | None, metadata: Mapping[str, Any] | None) -> bool:
    """Whether ``metadata`` satisfies a validated §4.6 filter.

    Every key must be present with a value equal *with type*: numbers equal numbers (``2 == 2.0``), bools
    only bools (``True`` never equals ``1``), strings only strings, and ``None`` only an explicit null. A
    missing key never matches. ``None`` or ``{}`` as the filter matches everything.
    """
    if not filter:
        return True
    if not isinstance(metadata, Mapping):
        return False
    return all(key in metadata and _typed_equal(expected, metadata[key]) for key, expected in filter.items())
