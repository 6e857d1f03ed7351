"""What the Pinecone emulator checks without HTTP: its limits, the error answer, the records and indexes it
keeps, and the validation of ids and metadata as Pinecone documents them (see :mod:`.server`)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

__all__ = ["API_VERSION", "DEFAULT_API_KEY", "ApiFailure"]

#: The data- and control-plane API version the emulated calls follow (the SDK's pinned version).
API_VERSION: Final = "2026-07"
DEFAULT_API_KEY: Final = "pinecone-emulator-key"
MAX_UPSERT_VECTORS: Final = 1_000
MAX_REQUEST_BYTES: Final = 2 * 1024 * 1024
MAX_METADATA_BYTES: Final = 40 * 1024
MAX_IDS: Final = 1_000
MAX_TOP_K: Final = 10_000
MAX_TOP_K_WITH_DATA: Final = 1_000
MAX_ID_LENGTH: Final = 512
MAX_DIMENSION: Final = 20_000
_NAME: Final = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,43}[a-z0-9])?$")
_METRICS: Final = frozenset({"cosine", "euclidean", "dotproduct"})


class ApiFailure(Exception):
    """An HTTP error answer with Pinecone's error body."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def _invalid(message: str) -> ApiFailure:
    return ApiFailure(400, "INVALID_ARGUMENT", message)


@dataclass
class _Record:
    values: np.ndarray[Any, np.dtype[np.float32]]
    metadata: dict[str, Any]


@dataclass
class _Index:
    name: str
    dimension: int
    metric: str
    cloud: str
    region: str
    #: namespace -> id -> record: what reads see.
    visible: dict[str, dict[str, _Record]] = field(default_factory=dict)
    #: writes acknowledged but not yet visible, in order: (visible at, apply).
    pending: list[tuple[float, Callable[[], None]]] = field(default_factory=list)

    def namespace(self, name: str) -> dict[str, _Record]:
        return self.visible.setdefault(name, {})


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _stored_metadata(metadata: Any, where: str) -> dict[str, Any]:
    """Validate metadata as Pinecone documents it; numbers become float64."""
    if not isinstance(metadata, dict):
        raise _invalid(f"{where}: metadata must be a JSON object")
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        if value is None:
            raise _invalid(
                f"{where}: metadata value for field {key!r} is null; null metadata values are not "
                "supported, remove the key instead"
            )
        if isinstance(value, (str, bool)):
            out[key] = value
        elif _is_number(value):
            if not math.isfinite(float(value)):
                raise _invalid(f"{where}: metadata value for field {key!r} is not a finite number")
            out[key] = float(value)
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            out[key] = list(value)
        else:
            raise _invalid(
                f"{where}: Metadata value must be a string, number, boolean or list of strings, got "
                f"{json.dumps(value)[:60]} for field {key!r}"
            )
    size = len(json.dumps(out, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    if size > MAX_METADATA_BYTES:
        raise _invalid(
            f"{where}: metadata size is {size} bytes, which exceeds the limit of {MAX_METADATA_BYTES}"
        )
    return out


def _check_id(value: Any, where: str) -> str:
    if (
        not isinstance(value, str)
        or not value
        or len(value) > MAX_ID_LENGTH
        or not value.isascii()
        or "\x00" in value
    ):
        raise _invalid(f"{where}: vector ids must be 1-{MAX_ID_LENGTH} ASCII characters without NUL")
    return value
