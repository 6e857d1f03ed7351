"""The ``MastraVector`` contract (docs/spec.md §3): models, shared validation, and the adapter template.

Public methods validate their input (raising typed errors with the exact phrases of docs/spec.md §3.3), parse
and translate filters through the adapter's translator *before any I/O*, and then call the adapter's
``_``-prefixed hooks with clean arguments: native index names, float64 vector matrices, normalised
metadata, translated filters. An adapter implements only the hooks.
"""

from __future__ import annotations

import logging
import math
import re
import uuid
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar, TypeVar

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError
from pydantic.alias_generators import to_camel

from .capabilities import AdapterCapabilities, IndexType, Metric
from .errors import (
    CapabilityError,
    ConfigError,
    IndexDimensionMismatchError,
    IndexNotFoundError,
    MastraMemoryError,
    ValidationError,
    VectorStoreError,
    error_id,
)
from .filters.ast import Node
from .filters.visitor import FilterTranslator
from .timestamps import canonical_timestamp

logger = logging.getLogger("mastra_memory.vector")

#: Namespace for deterministic uuid5 ids on backends that accept only UUIDs (Qdrant). Never change it.
MASTRA_ID_NAMESPACE = uuid.UUID("6f1d2a3c-5b7e-5c1a-9d3e-4f2a1b0c9e87")
#: Metadata keys with this prefix are reserved for adapters and stripped from results.
RESERVED_PREFIX = "_mastra_"
#: The portable index-name form (docs/spec.md §3.7).
PORTABLE_INDEX_NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
MAX_ID_LENGTH = 512
#: Shortest vector a cosine index accepts (docs/spec.md §3.3): the square root of the smallest normal
#: float32 (about 1.08e-19). A shorter vector has no direction at the float32 precision backends store and
#: score in (its squared length is zero or subnormal), so its cosine similarity is undefined or garbage.
MIN_COSINE_NORM = float(np.sqrt(np.finfo(np.float32).tiny))

T = TypeVar("T")


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class QueryResult(_Model):
    """One hit: the record's id, its portable score (higher is better), metadata and optional vector."""

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
            raise ConfigError(f"invalid index_config: {_pydantic_problems(exc)}") from exc


def _pydantic_problems(exc: PydanticValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors())


def mastra_uuid(record_id: str) -> str:
    """Deterministic UUID for a non-UUID id (backends that accept only UUIDs)."""
    return str(uuid.uuid5(MASTRA_ID_NAMESPACE, record_id))


def normalise_metadata(value: Any, path: str = "") -> Any:
    """Return ``value`` as JSON data (datetimes as canonical timestamps, tuples as lists).

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


class MastraVector(ABC):
    """Base class of every vector store adapter.

    Subclasses set ``capabilities`` (their manifest) and ``translator`` (a :class:`FilterTranslator`
    subclass producing the native filter), and implement the ``_``-prefixed hooks. Hooks receive
    validated input only and may raise any exception; unexpected ones are wrapped in
    :class:`VectorStoreError` with the backend exception as ``__cause__``.
    """

    capabilities: ClassVar[AdapterCapabilities]
    translator: ClassVar[type[FilterTranslator[Any]] | None] = None
    #: The backend's own index-name rule; names already in this form are accepted as they are.
    native_index_name_pattern: ClassVar[re.Pattern[str]] = PORTABLE_INDEX_NAME

    def __init__(self) -> None:
        self._dimensions: dict[str, int] = {}
        self._metrics: dict[str, Metric] = {}

    # --- naming ---------------------------------------------------------------------------------

    @property
    def index_separator(self) -> str:
        """The character joining parts of generated index names (``_``; ``-`` on Pinecone/S3 Vectors)."""
        return self.capabilities.index_separator

    @property
    def store_name(self) -> str:
        return self.capabilities.name

    def to_native_index_name(self, name: str) -> str:
        """Map a portable name to the backend's rule; idempotent on names already in native form."""
        return name

    def _native_name(self, operation: str, index_name: Any) -> str:
        if isinstance(index_name, str) and (
            PORTABLE_INDEX_NAME.fullmatch(index_name) or self.native_index_name_pattern.fullmatch(index_name)
        ):
            return self.to_native_index_name(index_name)
        raise self._error(
            ValidationError,
            operation,
            "INVALID_INDEX_NAME",
            f"invalid index name {index_name!r}: use a lowercase letter followed by up to 62 lowercase "
            f"letters, digits or underscores (pattern {PORTABLE_INDEX_NAME.pattern})",
            index=index_name,
        )

    # --- errors ---------------------------------------------------------------------------------

    def _error(
        self, cls: type[MastraMemoryError], operation: str, status: str, message: str, **details: Any
    ) -> MastraMemoryError:
        code = status if status.startswith(operation) else f"{operation}_{status}"
        return cls(
            message, id=error_id("VECTOR", self.store_name, "", code), domain="VECTOR", details=details
        )

    async def _call(self, operation: str, awaitable: Awaitable[T], index: str | None = None) -> T:
        try:
            return await awaitable
        except IndexNotFoundError as exc:
            if index is not None:
                self._forget_index(index)
            # A hook (often _describe_index, reached through _dimension) names its own operation;
            # the id must name the public one the caller invoked (docs/spec.md §3.3).
            wanted = error_id("VECTOR", self.store_name, "", f"{operation}_INDEX_NOT_FOUND")
            if exc.id != wanted:
                raise IndexNotFoundError(
                    exc.message, id=wanted, domain=exc.domain, details=exc.details
                ) from exc
            raise
        except MastraMemoryError:
            raise
        except Exception as exc:
            err = self._error(
                VectorStoreError,
                operation,
                "FAILED",
                f"{self.store_name} {operation.lower()} failed: {exc}",
                index=index,
            )
            raise err from exc

    def _not_found(self, operation: str, index: str) -> IndexNotFoundError:
        err = self._error(
            IndexNotFoundError,
            operation,
            "INDEX_NOT_FOUND",
            f"index {index!r} does not exist; create it with create_index() first",
            index=index,
        )
        assert isinstance(err, IndexNotFoundError)
        return err

    # --- filters --------------------------------------------------------------------------------

    def translate_filter(self, flt: Any) -> Any:
        """Validate ``flt`` (FilterError) and translate it (UnsupportedFilterError); ``None`` = match all.

        Runs before any I/O. Adapters without a translator support no filter at all.
        """
        from .filters.parse import parse

        node: Node | None = parse(flt)
        if node is None:
            return None
        if self.translator is None:
            raise CapabilityError(f"{self.store_name} does not support metadata filters")
        return self.translator().translate(node)

    # --- validation helpers ---------------------------------------------------------------------

    def _matrix(self, operation: str, vectors: Any) -> npt.NDArray[np.float64]:
        if (
            vectors is None
            or (not isinstance(vectors, np.ndarray) and not isinstance(vectors, Sequence))
            or (isinstance(vectors, str))
            or len(vectors) == 0
        ):
            raise self._error(ValidationError, operation, "EMPTY_VECTORS", "vectors must not be empty")
        rows: list[npt.NDArray[np.float64]] = []
        for i, vec in enumerate(vectors):
            rows.append(self._vector(operation, vec, f"vector [{i}]", "INVALID_VECTOR"))
        width = {len(r) for r in rows}
        if len(width) > 1:
            raise self._error(
                ValidationError,
                operation,
                "INVALID_VECTOR",
                f"vector [i][j]: all vectors in one call must have the same dimension (got {sorted(width)})",
            )
        return np.vstack(rows)

    def _vector(self, operation: str, vec: Any, label: str, status: str) -> npt.NDArray[np.float64]:
        if isinstance(vec, np.ndarray):
            arr = vec
        elif isinstance(vec, Sequence) and not isinstance(vec, str):
            arr = np.asarray(vec) if len(vec) else np.zeros(0)
        else:
            raise self._error(
                ValidationError,
                operation,
                status,
                f"{label}[0]: expected a list of numbers, got {type(vec).__name__}",
            )
        if arr.ndim != 1 or arr.shape[0] == 0:
            raise self._error(
                ValidationError, operation, status, f"{label}[0]: a vector must be a non-empty list"
            )
        if arr.dtype.kind not in "fiu":
            for j, x in enumerate(vec):
                if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
                    raise self._error(
                        ValidationError, operation, status, f"{label}[{j}] is not a number: {x!r}"
                    )
            arr = np.asarray(vec, dtype=np.float64)
        arr = arr.astype(np.float64, copy=False)
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            j = int(bad[0])
            raise self._error(ValidationError, operation, status, f"{label}[{j}] is not finite: {arr[j]!r}")
        return arr

    async def _dimension(self, operation: str, index: str) -> int:
        return (await self._shape(operation, index))[0]

    async def _shape(self, operation: str, index: str) -> tuple[int, Metric]:
        """The index's dimension and metric, read once (``describe_index``) and cached."""
        if index not in self._dimensions or index not in self._metrics:
            self._remember(index, await self._call(operation, self._describe_index(index), index))
        return self._dimensions[index], self._metrics[index]

    def _remember(self, index: str, stats: IndexStats) -> None:
        self._dimensions[index] = stats.dimension
        self._metrics[index] = stats.metric

    def _forget_index(self, index: str) -> None:
        self._dimensions.pop(index, None)
        self._metrics.pop(index, None)

    def _check_direction(
        self,
        operation: str,
        index: str,
        metric: Metric,
        vector: npt.NDArray[np.float64],
        label: str,
        remedy: str,
        outcome: str = "",
        **details: Any,
    ) -> None:
        """docs/spec.md §3.3: a cosine index is never given a zero vector (cosine is undefined for it).

        Zero means shorter than :data:`MIN_COSINE_NORM`: zero length at float32 precision.
        """
        if metric != "cosine":
            return
        norm = float(np.linalg.norm(vector))
        if norm >= MIN_COSINE_NORM:
            return
        what = "all zeros" if norm == 0 else f"length {norm:.3g}, zero at float32 precision"
        raise self._error(
            ValidationError,
            operation,
            "ZERO_VECTOR",
            f"{label} is a zero vector ({what}): cosine similarity is undefined for a vector without "
            f"direction, so the cosine index {index!r} does not accept it; {remedy}, or use a euclidean "
            f"or dotproduct index.{outcome}",
            index=index,
            metric=metric,
            **{k: v for k, v in details.items() if v is not None},
        )

    def _check_dimension(self, operation: str, index: str, expected: int, actual: int) -> None:
        if expected != actual:
            raise self._error(
                IndexDimensionMismatchError,
                operation,
                "DIMENSION_MISMATCH",
                f"index {index!r} holds {expected}-dimensional vectors but got {actual}; "
                "use an embedder of the index's dimension or another index name",
                index=index,
                expected=expected,
                actual=actual,
            )

    def _nonempty_filter(self, operation: str, flt: Any) -> Any:
        if isinstance(flt, Mapping) and len(flt) == 0:
            raise self._error(
                ValidationError,
                operation,
                "INVALID_ARGS",
                "empty filter: pass a filter with at least one condition (to touch every record, "
                "delete and recreate the index)",
            )
        native = self.translate_filter(flt)
        return native

    # --- public API -----------------------------------------------------------------------------

    async def create_index(
        self,
        index_name: str,
        dimension: int,
        metric: Metric = "cosine",
        index_config: IndexConfig | Mapping[str, Any] | None = None,
        metadata_indexes: list[str] | None = None,
        **adapter_options: Any,
    ) -> None:
        """Create an index; idempotent for the same dimension (docs/spec.md §3.1)."""
        op = "CREATE_INDEX"
        name = self._native_name(op, index_name)
        max_dim = self.capabilities.max_dimension
        if (
            isinstance(dimension, bool)
            or not isinstance(dimension, int)
            or dimension < 1
            or (max_dim is not None and dimension > max_dim)
        ):
            limit = f" (at most {max_dim} on {self.store_name})" if max_dim else ""
            raise self._error(
                ValidationError,
                op,
                "INVALID_ARGS",
                f"dimension must be a positive integer{limit}, got {dimension!r}",
            )
        config = IndexConfig.from_any(index_config)
        chosen: Any = (
            config.metric if index_config is not None and config.metric and metric == "cosine" else metric
        )
        if chosen not in self.capabilities.metrics:
            raise self._error(
                CapabilityError if chosen in ("cosine", "euclidean", "dotproduct") else ValidationError,
                op,
                "INVALID_ARGS",
                f"unsupported metric {chosen!r} for {self.store_name}; "
                f"use one of {sorted(self.capabilities.metrics)}",
            )
        if config.type is not None and config.type not in self.capabilities.index_types:
            raise self._error(
                CapabilityError,
                op,
                "INVALID_ARGS",
                f"index type {config.type!r} is not available on {self.store_name}; "
                f"use one of {sorted(self.capabilities.index_types)}",
            )
        if metadata_indexes is not None and (
            not isinstance(metadata_indexes, list)
            or not all(isinstance(k, str) and k for k in metadata_indexes)
        ):
            raise self._error(
                ValidationError, op, "INVALID_ARGS", "metadata_indexes must be a list of key names"
            )
        await self._call(
            op,
            self._create_index(
                name, dimension, chosen, config, list(metadata_indexes or []), adapter_options
            ),
            name,
        )
        self._forget_index(name)

    async def upsert(
        self,
        index_name: str,
        vectors: Sequence[Sequence[float]] | npt.NDArray[np.floating],
        metadata: Sequence[Mapping[str, Any]] | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[str]:
        """Insert or fully replace records; returns the ids in input order (docs/spec.md §3.1)."""
        op = "UPSERT"
        name = self._native_name(op, index_name)
        matrix = self._matrix(op, vectors)
        n = matrix.shape[0]
        if metadata is not None and len(metadata) not in (0, n):
            raise self._error(
                ValidationError,
                op,
                "METADATA_LENGTH_MISMATCH",
                f"metadata length {len(metadata)} does not match vectors length {n}",
            )
        if ids is not None and len(ids) != n:
            raise self._error(
                ValidationError,
                op,
                "IDS_LENGTH_MISMATCH",
                f"ids length {len(ids)} does not match vectors length {n}",
            )
        if ids is None:
            id_list = [str(uuid.uuid4()) for _ in range(n)]
        else:
            id_list = list(ids)
            for i, rid in enumerate(id_list):
                if not isinstance(rid, str) or not rid or len(rid) > MAX_ID_LENGTH:
                    raise self._error(
                        ValidationError,
                        op,
                        "INVALID_ID",
                        f"ids must be non-empty strings of at most {MAX_ID_LENGTH} characters "
                        f"(ids[{i}] = {rid!r})",
                    )
        metas: list[dict[str, Any]] = []
        for i in range(n):
            raw = metadata[i] if metadata else {}
            if raw is None:
                raw = {}
            if not isinstance(raw, Mapping):
                raise self._error(
                    ValidationError,
                    op,
                    "INVALID_METADATA",
                    f"metadata[{i}] must be a dict, got {type(raw).__name__}",
                )
            try:
                metas.append(normalise_metadata(raw))
            except ValueError as exc:
                raise self._error(ValidationError, op, "INVALID_METADATA", f"metadata[{i}]: {exc}") from exc
        expected, metric = await self._shape(op, name)
        self._check_dimension(op, name, expected, matrix.shape[1])
        if metric == "cosine":
            # Every row is checked, repeated ids included, so a rejected call writes nothing (§3.3).
            zero = np.flatnonzero(np.linalg.norm(matrix, axis=1) < MIN_COSINE_NORM)
            if zero.size:
                first = int(zero[0])
                more = f" ({zero.size} of the {n} vectors are)" if zero.size > 1 else ""
                self._check_direction(
                    op,
                    name,
                    metric,
                    matrix[first],
                    f"vector [{first}] (id {id_list[first]!r})",
                    f"give every record a non-zero vector{more} or leave such records out",
                    " Nothing of this call was written.",
                    id=id_list[first],
                    ids=[id_list[int(i)] for i in zero[:100]],
                )
        # A repeated id inside one call: the last occurrence wins.
        last = {rid: i for i, rid in enumerate(id_list)}
        if len(last) != n:
            keep = sorted(last.values())
            await self._call(
                op,
                self._upsert(name, [id_list[i] for i in keep], matrix[keep], [metas[i] for i in keep]),
                name,
            )
        else:
            await self._call(op, self._upsert(name, id_list, matrix, metas), name)
        return id_list

    async def query(
        self,
        index_name: str,
        query_vector: Sequence[float] | npt.NDArray[np.floating] | None = None,
        top_k: int = 10,
        filter: Mapping[str, Any] | None = None,
        include_vector: bool = False,
        **adapter_options: Any,
    ) -> list[QueryResult]:
        """The ``top_k`` best records among those matching ``filter``, best first (docs/spec.md §3.1)."""
        op = "QUERY"
        name = self._native_name(op, index_name)
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise self._error(
                ValidationError, op, "INVALID_TOP_K", f"top_k must be a positive integer, got {top_k!r}"
            )
        limit = self.capabilities.max_top_k
        if limit is not None and top_k > limit:
            raise self._error(
                ValidationError,
                op,
                "TOP_K_TOO_LARGE",
                f"top_k {top_k} exceeds the limit of {limit} on {self.store_name}",
            )
        vector: npt.NDArray[np.float64] | None = None
        if query_vector is None:
            if not self.capabilities.metadata_only_query:
                raise self._error(
                    CapabilityError,
                    op,
                    "MISSING_VECTOR",
                    f"query_vector is required: {self.store_name} has no metadata-only query",
                )
        else:
            vector = self._vector(op, query_vector, "query_vector", "INVALID_VECTOR")
        native_filter = self.translate_filter(filter)
        if vector is not None:
            expected, metric = await self._shape(op, name)
            self._check_dimension(op, name, expected, vector.shape[0])
            self._check_direction(op, name, metric, vector, "query_vector", "query with a non-zero vector")
        results = await self._call(
            op, self._query(name, vector, top_k, native_filter, bool(include_vector), adapter_options), name
        )
        for r in results:
            if any(k.startswith(RESERVED_PREFIX) for k in r.metadata):
                r.metadata = {k: v for k, v in r.metadata.items() if not k.startswith(RESERVED_PREFIX)}
            if not include_vector:
                r.vector = None
        results.sort(key=lambda r: (-r.score, r.id))
        return results[:top_k]

    async def list_indexes(self) -> list[str]:
        """Native names of the indexes, as the backend shows them."""
        return await self._call("LIST_INDEXES", self._list_indexes())

    async def describe_index(self, index_name: str) -> IndexStats:
        """Dimension, exact count and metric of an index."""
        op = "DESCRIBE_INDEX"
        name = self._native_name(op, index_name)
        stats = await self._call(op, self._describe_index(name), name)
        self._remember(name, stats)
        return stats

    async def delete_index(self, index_name: str) -> None:
        """Delete an index; a missing index is not an error."""
        op = "DELETE_INDEX"
        name = self._native_name(op, index_name)
        self._forget_index(name)
        await self._call(op, self._delete_index(name), name)

    async def update_vector(
        self,
        index_name: str,
        id: str | None = None,
        filter: Mapping[str, Any] | None = None,
        update: Mapping[str, Any] | None = None,
    ) -> None:
        """Replace the vector and/or the metadata of one record (``id``) or of every match (``filter``)."""
        op = "UPDATE_VECTOR"
        name = self._native_name(op, index_name)
        if id is not None and filter is not None:
            raise self._error(ValidationError, op, "INVALID_ARGS", "id and filter are mutually exclusive")
        if id is None and filter is None:
            raise self._error(ValidationError, op, "INVALID_ARGS", "Either id or filter must be provided")
        if not update or not isinstance(update, Mapping) or not (update.keys() & {"vector", "metadata"}):
            raise self._error(
                ValidationError, op, "INVALID_ARGS", "No updates provided: pass vector and/or metadata"
            )
        unknown = set(update) - {"vector", "metadata"}
        if unknown:
            raise self._error(ValidationError, op, "INVALID_ARGS", f"unknown update keys {sorted(unknown)}")
        vec = None
        if update.get("vector") is not None:
            vec = self._vector(op, update["vector"], "vector [0]", "INVALID_VECTOR")
        meta = None
        if "metadata" in update:
            raw = update["metadata"] or {}
            if not isinstance(raw, Mapping):
                raise self._error(ValidationError, op, "INVALID_METADATA", "metadata must be a dict")
            try:
                meta = normalise_metadata(raw)
            except ValueError as exc:
                raise self._error(ValidationError, op, "INVALID_METADATA", str(exc)) from exc
        if vec is None and meta is None:
            raise self._error(
                ValidationError, op, "INVALID_ARGS", "No updates provided: pass vector and/or metadata"
            )
        if id is not None and (not isinstance(id, str) or not id):
            raise self._error(ValidationError, op, "INVALID_ID", "ids must be non-empty strings")
        native_filter = self._nonempty_filter(op, filter) if filter is not None else None
        if filter is not None and self.capabilities.update_by_filter == "none":
            raise self._error(
                CapabilityError, op, "UNSUPPORTED", f"{self.store_name} cannot update by filter"
            )
        if vec is not None:
            expected, metric = await self._shape(op, name)
            self._check_dimension(op, name, expected, vec.shape[0])
            self._check_direction(
                op,
                name,
                metric,
                vec,
                f"the update vector for id {id!r}" if id is not None else "the update vector (by filter)",
                "pass a non-zero vector or update only the metadata",
                " Nothing was changed.",
                id=id,
            )
        else:
            await self._dimension(op, name)  # raises IndexNotFoundError for a missing index
        if id is not None:
            await self._call(op, self._update_by_id(name, id, vec, meta), name)
        else:
            await self._call(op, self._update_by_filter(name, native_filter, vec, meta), name)

    async def delete_vector(self, index_name: str, id: str) -> None:
        """Delete one record; a missing id is a no-op."""
        op = "DELETE_VECTOR"
        name = self._native_name(op, index_name)
        if not isinstance(id, str) or not id:
            raise self._error(ValidationError, op, "INVALID_ID", "ids must be non-empty strings")
        await self._dimension(op, name)
        await self._call(op, self._delete_by_ids(name, [id]), name)

    async def delete_vectors(
        self, index_name: str, ids: Sequence[str] | None = None, filter: Mapping[str, Any] | None = None
    ) -> None:
        """Delete records by ids or by filter (exactly one of them)."""
        op = "DELETE_VECTORS"
        name = self._native_name(op, index_name)
        if ids is not None and filter is not None:
            raise self._error(ValidationError, op, "INVALID_ARGS", "ids and filter are mutually exclusive")
        if ids is None and filter is None:
            raise self._error(ValidationError, op, "INVALID_ARGS", "Either filter or ids must be provided")
        if ids is not None:
            if len(ids) == 0:
                raise self._error(
                    ValidationError, op, "INVALID_ARGS", "empty ids array: pass at least one id"
                )
            if not all(isinstance(i, str) and i for i in ids):
                raise self._error(ValidationError, op, "INVALID_ID", "ids must be non-empty strings")
            await self._dimension(op, name)
            await self._call(op, self._delete_by_ids(name, list(dict.fromkeys(ids))), name)
            return
        native_filter = self._nonempty_filter(op, filter)
        if self.capabilities.delete_by_filter == "none":
            raise self._error(
                CapabilityError, op, "UNSUPPORTED", f"{self.store_name} cannot delete by filter"
            )
        await self._dimension(op, name)
        await self._call(op, self._delete_by_filter(name, native_filter), name)

    async def wait_for_indexing(self, index_name: str) -> None:
        """Eventually consistent adapters wait here until writes are visible; others return at once."""
        return None

    async def close(self) -> None:
        """Release connections. The default has nothing to release."""
        return None

    async def __aenter__(self: T) -> T:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- adapter hooks --------------------------------------------------------------------------

    @abstractmethod
    async def _create_index(
        self,
        name: str,
        dimension: int,
        metric: Metric,
        config: IndexConfig,
        metadata_indexes: list[str],
        options: dict[str, Any],
    ) -> None:
        """Create the index, or no-op for the same dimension (warn on another metric); raise
        IndexDimensionMismatchError (via ``self._check_dimension``) for another dimension."""

    @abstractmethod
    async def _upsert(
        self, name: str, ids: list[str], vectors: npt.NDArray[np.float64], metadata: list[dict[str, Any]]
    ) -> None:
        """Insert or replace the records (ids unique here). Split into backend-sized batches."""

    @abstractmethod
    async def _query(
        self,
        name: str,
        vector: npt.NDArray[np.float64] | None,
        top_k: int,
        native_filter: Any,
        include_vector: bool,
        options: dict[str, Any],
    ) -> list[QueryResult]:
        """The top_k best matches with portable scores (``native_filter`` is None for match-all)."""

    @abstractmethod
    async def _list_indexes(self) -> list[str]: ...

    @abstractmethod
    async def _describe_index(self, name: str) -> IndexStats:
        """Raise ``self._not_found(...)`` for a missing index."""

    @abstractmethod
    async def _delete_index(self, name: str) -> None: ...

    @abstractmethod
    async def _update_by_id(
        self, name: str, id: str, vector: npt.NDArray[np.float64] | None, metadata: dict[str, Any] | None
    ) -> None: ...

    @abstractmethod
    async def _update_by_filter(
        self,
        name: str,
        native_filter: Any,
        vector: npt.NDArray[np.float64] | None,
        metadata: dict[str, Any] | None,
    ) -> None: ...

    @abstractmethod
    async def _delete_by_ids(self, name: str, ids: list[str]) -> None: ...

    @abstractmethod
    async def _delete_by_filter(self, name: str, native_filter: Any) -> None: ...
