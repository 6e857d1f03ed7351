"""Argument checks shared by every vector store (docs/spec.md §3.3): nothing here does I/O.

:class:`VectorArguments` is the validation layer of :class:`~mastra_memory.vector.base.MastraVector`:
index names (§3.7), vectors and matrices (§3.3), ids (§3.5), metadata (§3.6) and the per-method
argument rules of §3.1, each raising a typed error whose id names the public operation. The template in
``base.py`` calls these checks before it translates a filter or touches the backend.

Every hostile-input rule of the vector contract (issue 12's classes: ids, vector values, metadata limits,
top_k and dimension bounds) is applied by this one class, so no store can reach its backend around it;
what metadata may hold is :mod:`.metadata`'s.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping, Sequence, Set, Sized
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from ..capabilities import AdapterCapabilities, Metric
from ..errors import (
    CapabilityError,
    IndexDimensionMismatchError,
    MastraMemoryError,
    ValidationError,
    error_id,
)
from ..metadata_limits import is_unicode, shown
from .metadata import shared_metadata
from .records import (
    MAX_DIMENSION,
    MAX_ID_LENGTH,
    MAX_TOP_K,
    MAX_VECTOR_NORM,
    MIN_COSINE_NORM,
    PORTABLE_INDEX_NAME,
    IndexConfig,
)

__all__ = ["VectorArguments"]

#: The types of vector components that need no per-element check (bools are not numbers here).
_NUMBER_TYPES: frozenset[type] = frozenset(
    {float, int, np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8}
    | {np.uint64, np.uint32, np.uint16, np.uint8}
)
_FLOAT32_RANGE = (
    "is outside the float32 range vector stores keep (magnitude at most about 3.4e38); scale the vector "
    "down, e.g. normalise it to length 1"
)


def _fits_float(value: Any) -> bool:
    try:
        float(value)
    except OverflowError:
        return False
    return True


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters (and never failing on huge integers)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        return f"an integer of about {len(format(value, 'x')) * 1.2:.0f} digits"
    text = repr(value)
    return shown(text if len(text) <= limit else text[: limit - 3] + "...")


class VectorArguments:
    """The validation layer of the vector-store template: pure checks, typed errors, no I/O.

    Subclasses set ``capabilities`` (their manifest); the limits it declares (dimension, top_k, metrics,
    index types) are enforced here.
    """

    capabilities: ClassVar[AdapterCapabilities]
    #: The backend's own index-name rule; names already in this form are accepted as they are.
    native_index_name_pattern: ClassVar[re.Pattern[str]] = PORTABLE_INDEX_NAME

    # --- naming (docs/spec.md §3.7) ------------------------------------------------------------

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

    # --- errors (docs/spec.md §3.3: ids name the public operation) -----------------------------

    def _error(
        self, cls: type[MastraMemoryError], operation: str, status: str, message: str, **details: Any
    ) -> MastraMemoryError:
        code = status if status.startswith(operation) else f"{operation}_{status}"
        return cls(
            message, id=error_id("VECTOR", self.store_name, "", code), domain="VECTOR", details=details
        )

    # --- vectors (docs/spec.md §3.3) -----------------------------------------------------------

    def _matrix(self, operation: str, vectors: Any) -> npt.NDArray[np.float64]:
        if vectors is None or (isinstance(vectors, Sized) and len(vectors) == 0):
            raise self._error(ValidationError, operation, "EMPTY_VECTORS", "vectors must not be empty")
        if isinstance(vectors, np.ndarray) and vectors.ndim == 2 and vectors.dtype.kind in "fiu":
            if vectors.shape[1] == 0:
                raise self._error(
                    ValidationError,
                    operation,
                    "INVALID_VECTOR",
                    "vector [0][0]: a vector must be a non-empty list",
                )
            return self._checked(operation, vectors.astype(np.float64), "vector ")
        if not isinstance(vectors, np.ndarray | Sequence) or isinstance(vectors, str | bytes | bytearray):
            raise self._error(
                ValidationError,
                operation,
                "INVALID_VECTOR",
                f"vector [0]: vectors must be a list of vectors (lists of numbers), got "
                f"{type(vectors).__name__}",
            )
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
        """One vector as float64, or ValidationError naming ``label[j]``: numbers only (bools are not),
        each finite in float32, the length at most `MAX_VECTOR_NORM` (docs/spec.md §3.3)."""
        if isinstance(vec, np.ndarray) and vec.dtype.kind == "O":
            vec = vec.tolist()
        if isinstance(vec, np.ndarray):
            if vec.ndim != 1 or vec.shape[0] == 0:
                raise self._error(
                    ValidationError, operation, status, f"{label}[0]: a vector must be a non-empty list"
                )
            if vec.dtype.kind not in "fiu":
                raise self._error(
                    ValidationError,
                    operation,
                    status,
                    f"{label}[0] is not a number: the array holds {vec.dtype} values",
                )
            arr = vec.astype(np.float64)
        elif isinstance(vec, Sequence) and not isinstance(vec, str | bytes | bytearray):
            if len(vec) == 0:
                raise self._error(
                    ValidationError, operation, status, f"{label}[0]: a vector must be a non-empty list"
                )
            if not set(map(type, vec)) <= _NUMBER_TYPES:
                for j, x in enumerate(vec):
                    if isinstance(x, bool | np.bool_) or not isinstance(
                        x, int | float | np.integer | np.floating
                    ):
                        raise self._error(
                            ValidationError,
                            operation,
                            status,
                            f"{label}[{j}] is not a number: {_short(x)} (bools are not numbers here)"
                            if isinstance(x, bool | np.bool_)
                            else f"{label}[{j}] is not a number: {_short(x)}",
                        )
            try:
                arr = np.asarray(vec, dtype=np.float64)
            except OverflowError:  # a Python int beyond the float range
                j = next(j for j, x in enumerate(vec) if not _fits_float(x))
                raise self._error(
                    ValidationError,
                    operation,
                    status,
                    f"{label}[{j}] {_FLOAT32_RANGE} (an integer that large)",
                ) from None
        else:
            raise self._error(
                ValidationError,
                operation,
                status,
                f"{label}[0]: expected a list of numbers, got {type(vec).__name__}",
            )
        row: npt.NDArray[np.float64] = self._checked(operation, arr.reshape(1, -1), label)[0]
        return row

    def _checked(
        self, operation: str, matrix: npt.NDArray[np.float64], label: str
    ) -> npt.NDArray[np.float64]:
        """``matrix`` (rows are vectors) if every value is finite in float32 and every row short enough.

        ``label`` names a single vector (``vector [0]``, ``query_vector``) or, ending in a space, the rows
        of a matrix (``vector `` + ``[i]``).
        """

        def name(i: int) -> str:
            return f"{label}[{i}]" if label.endswith(" ") else label

        status = "INVALID_VECTOR"
        bad = np.argwhere(~np.isfinite(matrix))
        if bad.size:
            i, j = (int(x) for x in bad[0])
            raise self._error(
                ValidationError, operation, status, f"{name(i)}[{j}] is not finite: {matrix[i, j]!r}"
            )
        with np.errstate(over="ignore"):
            overflow = np.argwhere(~np.isfinite(matrix.astype(np.float32)))
        if overflow.size:
            i, j = (int(x) for x in overflow[0])
            raise self._error(
                ValidationError,
                operation,
                status,
                f"{name(i)}[{j}] = {float(matrix[i, j]):.6g} {_FLOAT32_RANGE}",
            )
        norms = np.linalg.norm(matrix, axis=1)
        long = np.flatnonzero(norms > MAX_VECTOR_NORM)
        if long.size:
            i = int(long[0])
            raise self._error(
                ValidationError,
                operation,
                status,
                f"{name(i)} is too long: its length {float(norms[i]):.4g} is above {MAX_VECTOR_NORM:.0e}, "
                "where float32 scores overflow (cosine 0 or NaN, infinite dot products, euclidean records "
                "dropped); scale the vector down, e.g. normalise it to length 1",
            )
        return matrix

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

        Zero means shorter than `MIN_COSINE_NORM`: zero length at float32 precision.
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

    def _check_rows_direction(
        self, operation: str, index: str, matrix: npt.NDArray[np.float64], ids: list[str]
    ) -> None:
        """Every row of an upsert into a cosine index has a direction (docs/spec.md §3.3).

        Every row is checked, repeated ids included, so a rejected call writes nothing.
        """
        zero = np.flatnonzero(np.linalg.norm(matrix, axis=1) < MIN_COSINE_NORM)
        if not zero.size:
            return
        first = int(zero[0])
        more = f" ({zero.size} of the {matrix.shape[0]} vectors are)" if zero.size > 1 else ""
        self._check_direction(
            operation,
            index,
            "cosine",
            matrix[first],
            f"vector [{first}] (id {ids[first]!r})",
            f"give every record a non-zero vector{more} or leave such records out",
            " Nothing of this call was written.",
            id=ids[first],
            ids=[ids[int(i)] for i in zero[:100]],
        )

    # --- per-method arguments (docs/spec.md §3.1) ----------------------------------------------

    def _create_arguments(
        self,
        operation: str,
        dimension: Any,
        metric: Any,
        index_config: IndexConfig | Mapping[str, Any] | None,
        metadata_indexes: Any,
    ) -> tuple[Metric, IndexConfig, list[str]]:
        """The checked ``create_index`` arguments: (metric, config, metadata index keys)."""
        declared = self.capabilities.max_dimension
        max_dim = MAX_DIMENSION if declared is None else min(declared, MAX_DIMENSION)
        if isinstance(dimension, bool) or not isinstance(dimension, int) or not 1 <= dimension <= max_dim:
            raise self._error(
                ValidationError,
                operation,
                "INVALID_ARGS",
                f"dimension must be a positive integer (at most {max_dim} on {self.store_name}), "
                f"got {_short(dimension)}",
            )
        config = IndexConfig.from_any(index_config)
        chosen: Any = (
            config.metric if index_config is not None and config.metric and metric == "cosine" else metric
        )
        if chosen not in self.capabilities.metrics:
            raise self._error(
                CapabilityError if chosen in ("cosine", "euclidean", "dotproduct") else ValidationError,
                operation,
                "INVALID_ARGS",
                f"unsupported metric {chosen!r} for {self.store_name}; "
                f"use one of {sorted(self.capabilities.metrics)}",
            )
        if config.type is not None and config.type not in self.capabilities.index_types:
            raise self._error(
                CapabilityError,
                operation,
                "INVALID_ARGS",
                f"index type {config.type!r} is not available on {self.store_name}; "
                f"use one of {sorted(self.capabilities.index_types)}",
            )
        if metadata_indexes is not None and (
            not isinstance(metadata_indexes, list)
            or not all(isinstance(k, str) and k for k in metadata_indexes)
        ):
            raise self._error(
                ValidationError, operation, "INVALID_ARGS", "metadata_indexes must be a list of key names"
            )
        return chosen, config, list(metadata_indexes or [])

    def _upsert_arguments(
        self,
        operation: str,
        vectors: Any,
        metadata: Sequence[Mapping[str, Any]] | None,
        ids: Sequence[str] | None,
    ) -> tuple[npt.NDArray[np.float64], list[str], list[dict[str, Any]]]:
        """The checked ``upsert`` arguments: (matrix, ids, normalised metadata); missing ids are generated."""
        matrix = self._matrix(operation, vectors)
        n = matrix.shape[0]
        if metadata is not None and (
            isinstance(metadata, str | bytes | bytearray | Mapping) or not isinstance(metadata, Sequence)
        ):
            raise self._error(
                ValidationError,
                operation,
                "INVALID_METADATA",
                f"metadata must be a list of dicts, one per vector, got {type(metadata).__name__}",
            )
        if metadata is not None and len(metadata) not in (0, n):
            raise self._error(
                ValidationError,
                operation,
                "METADATA_LENGTH_MISMATCH",
                f"metadata length {len(metadata)} does not match vectors length {n}",
            )
        id_list = None if ids is None else self._id_list(operation, ids, ordered=True)
        if id_list is not None and len(id_list) != n:
            raise self._error(
                ValidationError,
                operation,
                "IDS_LENGTH_MISMATCH",
                f"ids length {len(id_list)} does not match vectors length {n}",
            )
        if id_list is None:
            id_list = [str(uuid.uuid4()) for _ in range(n)]
        else:
            self._check_ids(operation, id_list, max_length=MAX_ID_LENGTH)
        metas = [
            self._metadata(operation, metadata[i] if metadata else None, f"metadata[{i}]", id_list[i])
            for i in range(n)
        ]
        return matrix, id_list, metas

    def _query_arguments(
        self, operation: str, query_vector: Any, top_k: Any
    ) -> npt.NDArray[np.float64] | None:
        """The checked ``query`` vector (None for a metadata-only query); ``top_k`` is checked too."""
        self.check_top_k(top_k, operation)
        if query_vector is not None:
            return self._vector(operation, query_vector, "query_vector", "INVALID_VECTOR")
        if not self.capabilities.metadata_only_query:
            raise self._error(
                CapabilityError,
                operation,
                "MISSING_VECTOR",
                f"query_vector is required: {self.store_name} has no metadata-only query",
            )
        return None

    def check_top_k(self, top_k: Any, operation: str = "QUERY") -> int:
        """``top_k`` if this store can answer a query for that many results, else the typed ValidationError
        ``query`` raises (docs/spec.md §3.3). Callers that do I/O before querying (embedding the query
        text) check it first."""
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise self._error(
                ValidationError,
                operation,
                "INVALID_TOP_K",
                f"top_k must be a positive integer, got {_short(top_k)}",
            )
        declared = self.capabilities.max_top_k
        limit = MAX_TOP_K if declared is None else min(declared, MAX_TOP_K)
        if top_k > limit:
            raise self._error(
                ValidationError,
                operation,
                "TOP_K_TOO_LARGE",
                f"top_k {_short(top_k)} exceeds the limit of {limit} on {self.store_name}; ask for fewer "
                "results (narrow the query with a filter to see others)",
            )
        return int(top_k)

    def _update_arguments(
        self, operation: str, id: Any, filter: Any, update: Any
    ) -> tuple[npt.NDArray[np.float64] | None, dict[str, Any] | None]:
        """The checked ``update_vector`` arguments: (vector, normalised metadata), at least one set."""
        self._id_or_filter(operation, "id", id, filter, "Either id or filter must be provided")
        if not update or not isinstance(update, Mapping) or not (update.keys() & {"vector", "metadata"}):
            raise self._error(
                ValidationError, operation, "INVALID_ARGS", "No updates provided: pass vector and/or metadata"
            )
        unknown = set(update) - {"vector", "metadata"}
        if unknown:
            raise self._error(
                ValidationError, operation, "INVALID_ARGS", f"unknown update keys {sorted(map(str, unknown))}"
            )
        vec = None
        if update.get("vector") is not None:
            vec = self._vector(operation, update["vector"], "vector [0]", "INVALID_VECTOR")
        if id is not None:
            self._check_ids(operation, [id], max_length=MAX_ID_LENGTH)
        meta = None
        if "metadata" in update:
            # By filter the records are not known before I/O: the store's rules are judged without an id.
            meta = self._metadata(operation, update["metadata"] or {}, "metadata", id)
        if vec is None and meta is None:
            raise self._error(
                ValidationError, operation, "INVALID_ARGS", "No updates provided: pass vector and/or metadata"
            )
        return vec, meta

    def _delete_arguments(self, operation: str, ids: Sequence[str] | None, filter: Any) -> list[str] | None:
        """The checked ``delete_vectors`` ids (unique, in order), or None when deleting by filter."""
        self._id_or_filter(operation, "ids", ids, filter, "Either filter or ids must be provided")
        if ids is None:
            return None
        id_list = self._id_list(operation, ids, ordered=False)
        if len(id_list) == 0:
            raise self._error(
                ValidationError, operation, "INVALID_ARGS", "empty ids array: pass at least one id"
            )
        self._check_ids(operation, id_list)
        return list(dict.fromkeys(id_list))

    def _id_or_filter(self, operation: str, name: str, ids: Any, filter: Any, neither: str) -> None:
        """Exactly one of the ids (the argument ``name``) and ``filter`` is given; ``neither`` is the
        message when both are missing."""
        if ids is not None and filter is not None:
            raise self._error(
                ValidationError, operation, "INVALID_ARGS", f"{name} and filter are mutually exclusive"
            )
        if ids is None and filter is None:
            raise self._error(ValidationError, operation, "INVALID_ARGS", neither)

    # --- ids (docs/spec.md §3.5) ---------------------------------------------------------------

    def _id_list(self, operation: str, ids: Any, *, ordered: bool) -> list[Any]:
        """``ids`` as a list; a string, bytes, a dict or a scalar is a ValidationError (docs/spec.md §3.3).

        A string is a sequence of characters: accepting it would split ``"r1"`` into the ids ``"r"`` and
        ``"1"``. ``ordered`` (upsert, where ids pair with vectors) also refuses unordered sets.
        """
        if isinstance(ids, str | bytes | bytearray):
            raise self._error(
                ValidationError,
                operation,
                "INVALID_ID",
                f"ids must be a list of id strings, not a {type(ids).__name__} (it would be split into "
                f"its characters); pass [{_short(ids)}] for one id",
            )
        if isinstance(ids, Mapping) or not isinstance(ids, Iterable) or (ordered and isinstance(ids, Set)):
            raise self._error(
                ValidationError,
                operation,
                "INVALID_ID",
                f"ids must be a list of id strings{' in the order of the vectors' if ordered else ''}, "
                f"got {type(ids).__name__}",
            )
        return list(ids)

    def _check_ids(self, operation: str, ids: Sequence[Any], max_length: int | None = None) -> None:
        """Each id is a non-empty string of Unicode text (of at most ``max_length`` characters when given)."""
        for i, rid in enumerate(ids):
            if (
                not isinstance(rid, str)
                or not rid
                or (max_length is not None and len(rid) > max_length)
                or not is_unicode(rid)
            ):
                limit = f" of at most {max_length} characters" if max_length is not None else ""
                raise self._error(
                    ValidationError,
                    operation,
                    "INVALID_ID",
                    f"ids must be non-empty strings{limit} that encode as UTF-8 (no unpaired surrogates) "
                    f"(ids[{i}] = {_short(rid)})",
                )

    # --- metadata (docs/spec.md §3.6) ----------------------------------------------------------

    def _metadata(self, operation: str, raw: Any, label: str, record_id: str | None = None) -> dict[str, Any]:
        """One record's metadata, normalised, or ValidationError ``…_INVALID_METADATA`` naming ``label``.

        Within the shared limits and JSON data (`shared_metadata`), and storable by this
        backend (`_metadata_problem`, given the record's id when it is known).
        """
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise self._error(
                ValidationError,
                operation,
                "INVALID_METADATA",
                f"{label} must be a dict, got {type(raw).__name__}",
            )
        meta, problem = shared_metadata(raw)
        if meta is not None:
            problem = self._metadata_problem(meta, record_id)
        if problem is not None or meta is None:
            raise self._error(ValidationError, operation, "INVALID_METADATA", f"{label}: {problem}")
        return meta

    def _metadata_problem(self, metadata: dict[str, Any], record_id: str | None = None) -> str | None:
        """Why this backend cannot store ``metadata`` as the metadata of record ``record_id``, or None.

        The hook for an adapter's own metadata rules (docs/spec.md §3.3, §3.6): field names the backend
        reserves, value types or integer ranges it cannot hold, a per-record size budget — each declared
        as a deviation in the manifest. ``metadata`` is normalised JSON data already within the shared
        limits; ``record_id`` is the record's id (``None`` for ``update_vector`` by filter, whose records
        are not known before I/O). Return a sentence naming the key path, the rule and what to do; the
        template raises it as ``…_INVALID_METADATA``.

        It runs in the shared validation of ``upsert`` and ``update_vector``, before any I/O, and
        ``Memory`` runs it on every vector record it would write before it stores a message (§5.4), so
        a rule checked here refuses the message instead of storing it unindexed. A rule checked only
        inside ``_upsert`` would come too late for both. The default accepts everything.
        """
        return None
