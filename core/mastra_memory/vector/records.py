"""The records and constants of the ``MastraVector`` contract (docs/spec.md §3.2, §3.5, §3.7, §3.9).

Pure data: the models a vector store returns or accepts (:class:`QueryResult`, :class:`IndexStats`,
:class:`IndexConfig`) and the constants every adapter shares. Nothing here does I/O or knows an adapter.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Final

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError
from pydantic.alias_generators import to_camel

from ..capabilities import IndexType, Metric
from ..errors import ConfigError, pydantic_problems

#: Namespace for deterministic uuid5 ids on backends that accept only UUIDs (Qdrant, docs/spec.md §3.5).
#: Never change it.
MASTRA_ID_NAMESPACE = uuid.UUID("6f1d2a3c-5b7e-5c1a-9d3e-4f2a1b0c9e87")
#: One code of an id escaped by :func:`escape_nul`.
_ESCAPED: Final = re.compile("\x01([\x01\x02])")
#: Metadata keys with this prefix are reserved for adapters and stripped from results (docs/spec.md §3.6).
RESERVED_PREFIX = "_mastra_"
#: The portable index-name form (docs/spec.md §3.7).
PORTABLE_INDEX_NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
#: The longest record id every backend accepts (docs/spec.md §3.5).
MAX_ID_LENGTH = 512
#: Shortest vector a cosine index accepts (docs/spec.md §3.3): the square root of the smallest normal
#: float32 (about 1.08e-19). A shorter vector has no direction at the float32 precision backends store and
#: score in (its squared length is zero or subnormal), so its cosine similarity is undefined or garbage.
MIN_COSINE_NORM = float(np.sqrt(np.finfo(np.float32).tiny))
#: Least default HNSW search list of a query (docs/spec.md §3.9). The old default, ``m·top_k`` (48 for a
#: memory recall's top 3), found only 55-93 % of the exact top 3 among near-orthogonal 384-d embeddings at
#: 4k-10k rows on pgvector and OpenSearch; 300 found 98-100 % for a few ms more (issue 19,
#: tests/benchmarks/memory_workload.py).
MIN_DEFAULT_EF = 300
#: Largest default HNSW search list (the backends' own upper bound is 1000 or more).
MAX_DEFAULT_EF = 1000
#: HNSW links and build list of an index whose configuration gives none (docs/spec.md §3.9: the defaults
#: Mastra's documentation states, on every HNSW adapter).
DEFAULT_M: Final = 16
DEFAULT_EF_CONSTRUCTION: Final = 64


def default_ef(top_k: int, m: int) -> int:
    """The HNSW search list a query uses when neither the call nor the index sets one (docs/spec.md §3.9):
    ``min(1000, max(300, top_k, m·top_k))``."""
    return min(MAX_DEFAULT_EF, max(MIN_DEFAULT_EF, top_k, m * top_k))


#: Longest vector any index accepts (docs/spec.md §3.3). Backends store and score in float32, whose largest
#: finite value is about 3.4e38: from a length of about 1.8e19 the squared length overflows, and cosine
#: scores become 0 or NaN, dot products infinite, and euclidean records drop out of queries. Up to 1e18
#: every score (dot product at most 1e36, squared distance at most 4e36) stays finite with room to spare.
MAX_VECTOR_NORM = 1e18
#: Largest ``dimension`` of ``create_index`` on any store (docs/spec.md §3.3, §3.9): Qdrant's maximum; a
#: manifest's ``max_dimension`` may be lower.
MAX_DIMENSION = 65_536
#: Largest ``top_k`` of ``query`` on any store (docs/spec.md §3.3): above what retrieval asks for, and within
#: every backend's native limit type (LanceDB's is 32-bit); a manifest's ``max_top_k`` may be lower.
MAX_TOP_K = 1_000_000


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class QueryResult(_Model):
    """One hit: the record's id, its portable score (higher is better), metadata and optional vector.

    docs/spec.md §3.2 (model) and §3.4 (what the score means).
    """

    id: str
    score: float
    metadata: dict[str, Any] = Field(default_factory=dict)
    vector: list[float] | None = None
    document: str | None = None


class IndexStats(_Model):
    """What ``describe_index`` reports. ``count`` is exact (it may lag on eventually consistent backends)."""

    dimension: int
    count: int
    metric: Metric


class IndexConfig(_Model):
    """ANN index configuration (docs/spec.md §3.9). Accepts the flat form and Mastra's nested form.

    Flat: ``{"type": "hnsw", "m": 16, "ef_construction": 64}``; nested:
    ``{"type": "hnsw", "hnsw": {"m": 16, "efConstruction": 64}, "ivf": {"lists": 100}}``.
    Build it with :meth:`from_any`, which turns conflicts and bad values into ``ConfigError``.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)

    type: IndexType | None = None
    metric: Metric | None = None
    m: int | None = Field(default=None, ge=2)
    ef_construction: int | None = Field(default=None, ge=1)
    lists: int | None = Field(default=None, ge=1)
    probes: int | None = Field(default=None, ge=1)
    ef: int | None = Field(default=None, ge=1)

    @classmethod
    def from_any(cls, value: IndexConfig | Mapping[str, Any] | None) -> IndexConfig:
        """Normalise the flat or nested form; conflicting values in both forms raise ConfigError."""
        if value is None:
            return cls()
        if isinstance(value, IndexConfig):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(f"index_config must be a dict or IndexConfig, got {type(value).__name__}")
        flat: dict[str, Any] = {k: v for k, v in value.items() if k not in ("hnsw", "ivf")}
        nested: dict[str, Any] = {}
        for group in ("hnsw", "ivf"):
            sub = value.get(group)
            if sub is None:
                continue
            if not isinstance(sub, Mapping):
                raise ConfigError(f"index_config.{group} must be a dict")
            for key, val in sub.items():
                name = {"efConstruction": "ef_construction"}.get(key, key)
                allowed = {"hnsw": {"m", "ef_construction"}, "ivf": {"lists"}}[group]
                if name not in allowed:
                    raise ConfigError(f"unknown index_config.{group} key {key!r}; allowed: {sorted(allowed)}")
                nested[name] = val
        for name, val in nested.items():
            flat_val = flat.get(name, flat.get(to_camel(name)))
            if flat_val is not None and flat_val != val:
                raise ConfigError(
                    f"index_config sets {name} twice with different values ({flat_val!r} and {val!r}); "
                    "use either the flat or the nested form"
                )
            if flat_val is None:
                flat[name] = val
        try:
            return cls.model_validate(flat)
        except PydanticValidationError as exc:
            problems = "; ".join(pydantic_problems(exc, root="value"))
            raise ConfigError(f"invalid index_config: {problems}") from exc


def mastra_uuid(record_id: str) -> str:
    """Deterministic UUID for a non-UUID id (backends that accept only UUIDs, docs/spec.md §3.5)."""
    return str(uuid.uuid5(MASTRA_ID_NAMESPACE, record_id))


def has_mapped_form(value: str, prefix: str = "") -> bool:
    """Whether ``value`` looks like a mapped id: ``prefix`` and a canonical lowercase version-5 UUID, the
    form :func:`native_record_id` maps ids to (docs/spec.md §3.5)."""
    if len(value) != len(prefix) + 36 or not value.startswith(prefix) or value[len(prefix) + 14] != "5":
        return False  # the cheap tests first: most ids end here
    text = value[len(prefix) :]
    try:
        parsed = uuid.UUID(text)
    except ValueError:
        return False
    return parsed.version == 5 and str(parsed) == text


def native_record_id(record_id: str, accepts: Callable[[str], bool], prefix: str = "") -> str:
    """The id a backend that restricts ids stores ``record_id`` under (docs/spec.md §3.5): the id itself
    when the backend ``accepts`` it and it does not look like a mapped id, else ``prefix`` and
    ``uuid5(MASTRA_ID_NAMESPACE, id)``.

    Kept ids never have the mapped form and mapped ids always do, so two distinct ids are two records:
    when a literal uuid5 string was kept as is, it shared one record with the id it is the uuid5 of, and
    one tenant could overwrite or delete another's vectors (issue 23).
    """
    if accepts(record_id) and not has_mapped_form(record_id, prefix):
        return record_id
    return prefix + mastra_uuid(record_id)


def escape_nul(record_id: str) -> str:
    """``record_id`` without U+0000, for backends whose text cannot hold it (pgvector, MongoDB; docs/spec.md
    §3.5): U+0001 becomes U+0001 U+0002, then U+0000 becomes U+0001 U+0001; other ids are unchanged.

    A prefix code over the two characters that sort below all others, so escaped ids are equal exactly
    when the ids are, and sort (by code point or by UTF-8 byte) as the ids do: ties and listings in id
    order stay exact. :func:`unescape_nul` inverts it.
    """
    if "\x01" in record_id:
        record_id = record_id.replace("\x01", "\x01\x02")
    if "\x00" in record_id:
        record_id = record_id.replace("\x00", "\x01\x01")
    return record_id


def unescape_nul(stored_id: str) -> str:
    """The id :func:`escape_nul` turned into ``stored_id`` (read left to right, one code at a time)."""
    if "\x01" not in stored_id:
        return stored_id
    return _ESCAPED.sub(lambda m: "\x00" if m.group(1) == "\x01" else "\x01", stored_id)
