"""The ``MastraVector`` template (docs/spec.md §3.1): validate, translate, then call the adapter's hooks.

Public methods check their arguments (``arguments.py``, raising typed errors with the exact phrases of
docs/spec.md §3.3), parse and translate filters through the adapter's translator *before any I/O*, and
then call the adapter's ``_``-prefixed hooks with clean arguments: native index names, float64 vector
matrices, normalised metadata, translated filters. An adapter implements only the hooks.

A filter may be given as a filter dict or as an already parsed AST node (``mastra_memory.filters.Node``):
only dicts are parsed, so a caller that parsed once (``Memory`` combining a configured filter with a
thread or resource scope) is not parsed again (docs/spec.md §2.7). ``query`` also takes a
:class:`TranslatedFilter` from :meth:`MastraVector.prepare_filter`, so the queries of one search (one per
query chunk, docs/spec.md §5.3 step 7.4) share one translation.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias, TypeVar, get_args

import numpy as np
import numpy.typing as npt

from ..capabilities import Metric
from ..errors import (
    CapabilityError,
    IndexNotFoundError,
    MastraMemoryError,
    ValidationError,
    VectorStoreError,
    error_id,
)
from ..filters.ast import Node
from ..filters.visitor import FilterTranslator
from .arguments import VectorArguments
from .records import RESERVED_PREFIX, IndexConfig, IndexStats, QueryResult

__all__ = ["FilterInput", "MastraVector", "Matrix", "Metadata", "QueryRequest", "TranslatedFilter", "Vector"]

logger = logging.getLogger("mastra_memory.vector")

T = TypeVar("T")
N = TypeVar("N")

#: What the filter-taking methods accept: a filter dict, a parsed AST node, or None (match all).
FilterInput: TypeAlias = Mapping[str, Any] | Node | None
#: One vector as the hooks receive it: float64, checked (docs/spec.md §3.3).
Vector: TypeAlias = npt.NDArray[np.float64]
#: Vectors as ``_upsert`` receives them: one per row of a float64 matrix.
Matrix: TypeAlias = npt.NDArray[np.float64]
#: One record's metadata as the hooks receive it: normalised JSON data (docs/spec.md §3.6).
Metadata: TypeAlias = dict[str, Any]
_NODE_TYPES: tuple[type, ...] = get_args(Node)


def _parsed(flt: Any) -> Node | None:
    """The AST of ``flt``: a node as it is, a filter dict parsed (FilterError)."""
    if isinstance(flt, _NODE_TYPES):
        return flt  # type: ignore[return-value]  # one of the Node union's classes
    from ..filters.parse import parse

    return parse(flt)


@dataclass(frozen=True, slots=True, eq=False)
class TranslatedFilter:
    """A filter validated and translated once by ``store`` (:meth:`MastraVector.prepare_filter`); its
    ``query`` calls reuse ``native``, any other store translates ``node`` again."""

    store: MastraVector
    node: Node | None
    native: Any


@dataclass(frozen=True, slots=True, eq=False)
class QueryRequest:
    """One validated query as `MastraVector.query` hands it to the ``_query`` hook (docs/spec.md §3.1).

    One object rather than one parameter each, so that the template can hand a hook something more
    without changing every store's signature.
    """

    #: The native index name.
    name: str
    #: The query vector (float64, checked); ``None`` only on a store that declares
    #: ``metadata_only_query``: then the answer is the first ``top_k`` matches in id order (code point
    #: order), each with score 0.0.
    vector: Vector | None
    top_k: int
    #: What the store's translator returned for the filter; ``None`` for match-all (docs/spec.md §3.4).
    native_filter: Any
    #: Whether the results carry their vectors (the template drops them otherwise).
    include_vector: bool
    #: The caller's ``**adapter_options``: only names the store declares in ``query_options``.
    options: Mapping[str, Any]


class MastraVector(VectorArguments, ABC):
    """Base class of every vector store adapter.

    Subclasses set ``capabilities`` (their manifest) and ``translator`` (a `FilterTranslator`
    subclass producing the native filter), and implement the ``_``-prefixed hooks. Hooks receive
    validated input only and may raise any exception; unexpected ones are wrapped in
    `VectorStoreError` with the backend exception as ``__cause__`` (docs/spec.md §3.3).
    """

    translator: ClassVar[type[FilterTranslator[Any]] | None] = None
    #: The ``**adapter_options`` :meth:`query` accepts and hands to ``_query`` (``QueryRequest.options``:
    #: ``ef``, ``exact``, ...); any other is refused before any I/O (docs/spec.md §3.1).
    query_options: ClassVar[frozenset[str]] = frozenset()
    #: The ``**adapter_options`` :meth:`create_index` accepts and hands to ``_create_index`` (Pinecone's
    #: ``cloud``, LanceDB's ``quantization``, ...); any other is refused before any I/O (docs/spec.md §3.1).
    create_options: ClassVar[frozenset[str]] = frozenset()

    def __init__(self) -> None:
        self._dimensions: dict[str, int] = {}
        self._metrics: dict[str, Metric] = {}

    # --- calling hooks --------------------------------------------------------------------------

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

    def _check_options(
        self, operation: str, method: str, options: Mapping[str, Any], declared: frozenset[str]
    ) -> None:
        """Refuse any of ``options`` (a public ``method``'s ``**adapter_options``) not ``declared``."""
        unknown = set(options) - declared
        if unknown:
            accepted = ", ".join(sorted(declared)) or "none"
            raise self._error(
                ValidationError,
                operation,
                "INVALID_ARGS",
                f"unknown {method} options {sorted(unknown)} for {self.store_name} (it accepts: {accepted})",
            )

    def _count_option(self, key: str, value: object, maximum: int | None = None) -> int:
        """``value`` of the query option ``key`` (``ef``, ``probes``, ``num_candidates``, ...) if it is a
        whole number from 1 (to ``maximum``), else the ValidationError an adapter raises before any I/O."""
        if isinstance(value, bool) or not isinstance(value, int) or value < 1 or value > (maximum or value):
            bounds = "a positive integer" if maximum is None else f"an integer from 1 to {maximum}"
            raise self._error(
                ValidationError, "QUERY", "INVALID_ARGS", f"{key} must be {bounds}, got {value!r}"
            )
        return value

    def _keep_existing(
        self, index: str, existing_dimension: int, existing_metric: str, dimension: int, metric: Metric
    ) -> None:
        """``create_index`` of an index that exists (docs/spec.md §3.1): another dimension raises
        IndexDimensionMismatchError; another metric is logged as a warning and the existing one is kept."""
        self._check_dimension("CREATE_INDEX", index, existing_dimension, dimension)
        if existing_metric != metric:
            logging.getLogger(type(self).__module__).warning(
                "%s index %r exists with metric %s; keeping it (asked for %s)",
                self.store_name,
                index,
                existing_metric,
                metric,
            )

    def _native(self, native_filter: Any, kind: type[N]) -> N:
        """``native_filter`` as this store's translator made it (a ``kind``); anything else is a bug."""
        if not isinstance(native_filter, kind):
            raise MastraMemoryError(
                f"{self.store_name} expected a translated {kind.__name__}, got {type(native_filter).__name__}"
            )
        return native_filter

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

    # --- filters (docs/spec.md §2.6, §2.7) ------------------------------------------------------

    def translate_filter(self, flt: Any) -> Any:
        """Validate ``flt`` (FilterError) and translate it (UnsupportedFilterError); ``None`` = match all.

        ``flt`` is a filter dict (parsed here) or an already parsed `Node`
        (translated as it is). Runs before any I/O. Adapters without a translator support no filter.
        """
        node = _parsed(flt)
        if node is None:
            return None
        if self.translator is None:
            raise CapabilityError(f"{self.store_name} does not support metadata filters")
        return self.translator().translate(node)

    def prepare_filter(self, flt: FilterInput) -> TranslatedFilter:
        """Validate and translate ``flt`` once for several `query` calls of this store (raises as
        [`translate_filter`][mastra_memory.vector.MastraVector.translate_filter] does, before any I/O)."""
        node = _parsed(flt)
        return TranslatedFilter(self, node, self.translate_filter(node))

    def _nonempty_filter(self, operation: str, flt: Any) -> Any:
        if isinstance(flt, Mapping) and len(flt) == 0:
            raise self._error(
                ValidationError,
                operation,
                "INVALID_ARGS",
                "empty filter: pass a filter with at least one condition (to touch every record, "
                "delete and recreate the index)",
            )
        return self.translate_filter(flt)

    # --- index shape cache ----------------------------------------------------------------------

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

    # --- public API (docs/spec.md §3.1) ---------------------------------------------------------

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
        chosen, config, keys = self._create_arguments(op, dimension, metric, index_config, metadata_indexes)
        self._check_options(op, "create_index", adapter_options, self.create_options)
        await self._call(op, self._create_index(name, dimension, chosen, config, keys, adapter_options), name)
        self._forget_index(name)

    async def upsert(
        self,
        index_name: str,
        vectors: Sequence[Sequence[float]] | npt.NDArray[np.floating],
        metadata: Sequence[Mapping[str, Any]] | None = None,
        ids: Sequence[str] | None = None,
        delete_filter: FilterInput = None,
    ) -> list[str]:
        """Insert or fully replace records; returns the ids in input order (docs/spec.md §3.1).

        ``delete_filter`` (Mastra's ``deleteFilter``) first deletes every record it matches — all chunks
        of one source, say — so the call replaces them with ``vectors``. The manifest's
        ``upsert_delete_filter`` says how: ``"atomic"`` (one transaction), ``"sequential"`` (delete, then
        upsert) or ``"none"`` (CapabilityError before any I/O). An empty filter is refused as by
        [`delete_vectors`][mastra_memory.vector.MastraVector.delete_vectors].
        """
        op = "UPSERT"
        name = self._native_name(op, index_name)
        matrix, id_list, metas = self._upsert_arguments(op, vectors, metadata, ids)
        native_delete = None
        if delete_filter is not None:
            native_delete = self._nonempty_filter(op, delete_filter)
            if self.capabilities.upsert_delete_filter == "none":
                raise self._error(
                    CapabilityError,
                    op,
                    "UNSUPPORTED",
                    f"{self.store_name} cannot upsert with delete_filter; call delete_vectors(filter=...) "
                    "and then upsert (two writes, not atomic)",
                )
        expected, metric = await self._shape(op, name)
        self._check_dimension(op, name, expected, matrix.shape[1])
        if metric == "cosine":
            self._check_rows_direction(op, name, matrix, id_list)
        # A repeated id inside one call: the last occurrence wins.
        last = {rid: i for i, rid in enumerate(id_list)}
        keep = sorted(last.values()) if len(last) != len(id_list) else None
        rows = (
            (id_list, matrix, metas)
            if keep is None
            else ([id_list[i] for i in keep], matrix[keep], [metas[i] for i in keep])
        )
        if delete_filter is None:
            await self._call(op, self._upsert(name, *rows), name)
        elif self.capabilities.upsert_delete_filter == "atomic":
            await self._call(op, self._upsert_replacing(name, native_delete, *rows), name)
        else:
            # "sequential" (docs/spec.md §3.1): a failure between the two leaves the matches deleted and
            # the new records unwritten; the same call again completes it.
            await self._call(op, self._delete_by_filter(name, native_delete), name)
            await self._call(op, self._upsert(name, *rows), name)
        return id_list

    async def query(
        self,
        index_name: str,
        query_vector: Sequence[float] | npt.NDArray[np.floating] | None = None,
        top_k: int = 10,
        filter: FilterInput | TranslatedFilter = None,
        include_vector: bool = False,
        **adapter_options: Any,
    ) -> list[QueryResult]:
        """The ``top_k`` best records among those matching ``filter``, best first (docs/spec.md §3.1)."""
        op = "QUERY"
        name = self._native_name(op, index_name)
        vector = self._query_arguments(op, query_vector, top_k)
        self._check_options(op, "query", adapter_options, self.query_options)
        if isinstance(filter, TranslatedFilter):
            native_filter = filter.native if filter.store is self else self.translate_filter(filter.node)
        else:
            native_filter = self.translate_filter(filter)
        if vector is not None:
            expected, metric = await self._shape(op, name)
            self._check_dimension(op, name, expected, vector.shape[0])
            self._check_direction(op, name, metric, vector, "query_vector", "query with a non-zero vector")
        request = QueryRequest(name, vector, top_k, native_filter, bool(include_vector), adapter_options)
        results = await self._call(op, self._query(request), name)
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
        filter: FilterInput = None,
        update: Mapping[str, Any] | None = None,
    ) -> None:
        """Replace the vector and/or the metadata of one record (``id``) or of every match (``filter``)."""
        op = "UPDATE_VECTOR"
        name = self._native_name(op, index_name)
        vec, meta = self._update_arguments(op, id, filter, update)
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
        self._check_ids(op, [id])
        await self._dimension(op, name)
        await self._call(op, self._delete_by_ids(name, [id]), name)

    async def delete_vectors(
        self, index_name: str, ids: Sequence[str] | None = None, filter: FilterInput = None
    ) -> None:
        """Delete records by ids or by filter (exactly one of them)."""
        op = "DELETE_VECTORS"
        name = self._native_name(op, index_name)
        unique_ids = self._delete_arguments(op, ids, filter)
        if unique_ids is not None:
            await self._dimension(op, name)
            await self._call(op, self._delete_by_ids(name, unique_ids), name)
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
        IndexDimensionMismatchError (via ``self._check_dimension``) for another dimension. ``options``
        holds only names the store declares in ``create_options``."""

    @abstractmethod
    async def _upsert(self, name: str, ids: list[str], vectors: Matrix, metadata: list[Metadata]) -> None:
        """Insert or replace the records (ids unique here). Split into backend-sized batches (§3.8)."""

    async def _upsert_replacing(
        self, name: str, native_filter: Any, ids: list[str], vectors: Matrix, metadata: list[Metadata]
    ) -> None:
        """``upsert(..., delete_filter=...)`` of a store that declares ``upsert_delete_filter="atomic"``:
        delete every record ``native_filter`` matches and insert or replace the records, in one
        transaction (docs/spec.md §3.1). Records whose ids are among ``ids`` end up as given either way.
        Stores that declare ``"sequential"`` or ``"none"`` do not implement it."""
        raise MastraMemoryError(
            f"{self.store_name} declares upsert_delete_filter='atomic' "
            "but does not implement _upsert_replacing"
        )

    @abstractmethod
    async def _query(self, request: QueryRequest) -> list[QueryResult]:
        """The ``request.top_k`` best matches with portable scores; with ``request.vector`` None (a store
        that declares ``metadata_only_query``), the first ``top_k`` matches in id order, score 0.0
        (docs/spec.md §3.1). Fields: [`QueryRequest`][mastra_memory.vector.QueryRequest]."""

    @abstractmethod
    async def _list_indexes(self) -> list[str]: ...

    @abstractmethod
    async def _describe_index(self, name: str) -> IndexStats:
        """Raise ``self._not_found(...)`` for a missing index."""

    @abstractmethod
    async def _delete_index(self, name: str) -> None: ...

    @abstractmethod
    async def _update_by_id(
        self, name: str, id: str, vector: Vector | None, metadata: Metadata | None
    ) -> None: ...

    @abstractmethod
    async def _update_by_filter(
        self, name: str, native_filter: Any, vector: Vector | None, metadata: Metadata | None
    ) -> None: ...

    @abstractmethod
    async def _delete_by_ids(self, name: str, ids: list[str]) -> None: ...

    @abstractmethod
    async def _delete_by_filter(self, name: str, native_filter: Any) -> None: ...
