"""The capability manifest every adapter publishes (docs/spec.md §2.9).

It is data: the conformance kit reads it to decide what to expect, and the documentation renders the
operator support matrix from it. Anything an adapter does not declare must raise
``UnsupportedFilterError`` (operators) or ``CapabilityError`` (features).
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from .filters.ast import ALL_OPERATORS

Metric = Literal["cosine", "euclidean", "dotproduct"]
IndexType = Literal["hnsw", "ivfflat", "flat"]
ByFilterSupport = Literal["native", "emulated", "none"]
#: How ``upsert(..., delete_filter=...)`` runs (docs/spec.md §3.1): ``"atomic"`` — the delete and the
#: upsert are one transaction (a crash leaves either the old records or the new ones); ``"sequential"`` —
#: the delete, then the upsert, as two writes (a crash or failure between them leaves the matching records
#: deleted and the new ones not written; repeating the same call completes it); ``"none"`` — refused with
#: ``CapabilityError`` before any I/O.
ReplaceSupport = Literal["atomic", "sequential", "none"]


class _Manifest(BaseModel):
    model_config = ConfigDict(frozen=True, alias_generator=to_camel, populate_by_name=True, extra="forbid")


class Deviation(_Manifest):
    """A documented, reasoned difference from the spec. Conformance checks that it really occurs."""

    code: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    description: str = Field(min_length=1)
    reason: str = Field(min_length=1)


class StorageCapabilities(_Manifest):
    """What an adapter's ``MemoryStorage`` can do."""

    resource_scope: bool = True
    list_by_resource: bool = True
    clone_thread: bool = True


class AdapterCapabilities(_Manifest):
    """The capability manifest of one adapter. A manifest states what differs from these defaults (every
    metric, flat indexes only, native update and delete by filter, nothing else: no metadata-only query and
    no ``upsert(..., delete_filter=...)``)."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    version: str = "0"
    native_operators: frozenset[str] = frozenset()
    emulated_operators: frozenset[str] = frozenset()
    implicit_array_traversal: bool = False
    metadata_only_query: bool = False
    namespaces: bool = False
    metrics: frozenset[Metric] = frozenset({"cosine", "euclidean", "dotproduct"})
    index_types: frozenset[IndexType] = frozenset({"flat"})
    index_separator: str = "_"
    max_dimension: int | None = None
    max_top_k: int | None = None
    max_upsert_batch: int | None = None
    max_filter_op_matches: int | None = None
    update_by_filter: ByFilterSupport = "native"
    delete_by_filter: ByFilterSupport = "native"
    upsert_delete_filter: ReplaceSupport = "none"
    eventually_consistent: bool = False
    #: The store keeps a lexical (full-text) index beside each vector index, which hybrid recall
    #: (``semanticRecall.mode: "hybrid"``) searches; without it that mode is refused before any I/O.
    lexical_search: bool = False
    deviations: tuple[Deviation, ...] = ()
    storage: StorageCapabilities | None = None

    @field_validator("native_operators", "emulated_operators")
    @classmethod
    def _known_operators(cls, value: frozenset[str]) -> frozenset[str]:
        unknown = sorted(value - ALL_OPERATORS)
        if unknown:
            raise ValueError(f"unknown operators {unknown}; known: {sorted(ALL_OPERATORS)}")
        return value

    @model_validator(mode="after")
    def _disjoint(self) -> AdapterCapabilities:
        both = self.native_operators & self.emulated_operators
        if both:
            raise ValueError(f"operators declared both native and emulated: {sorted(both)}")
        if self.upsert_delete_filter == "sequential" and self.delete_by_filter == "none":
            raise ValueError(
                "upsert_delete_filter 'sequential' needs delete_by_filter (it deletes by filter first)"
            )
        return self

    @property
    def supported_operators(self) -> frozenset[str]:
        """Operators the adapter evaluates exactly (natively or by exact emulation)."""
        return self.native_operators | self.emulated_operators

    def deviation(self, code: str) -> Deviation | None:
        """The declared deviation with this code, if any."""
        return next((d for d in self.deviations if d.code == code), None)


# --- deviations several adapters declare (each with its own reason) ------------------------------------

#: What ``int64-range`` means wherever it is declared with this text.
INT64_RANGE: Final = (
    "integers outside the signed 64-bit range are rejected at upsert; a filter integer beyond it that is "
    "not exactly a float raises UnsupportedFilterError"
)
#: What ``no-string-ranges`` means wherever it is declared.
NO_STRING_RANGES: Final = "$gt/$gte/$lt/$lte with a string or datetime operand raise UnsupportedFilterError"


def int64_range(reason: str) -> Deviation:
    """The ``int64-range`` deviation (:data:`INT64_RANGE`), for the backend's ``reason``."""
    return Deviation(code="int64-range", description=INT64_RANGE, reason=reason)


def no_string_ranges(reason: str) -> Deviation:
    """The ``no-string-ranges`` deviation (:data:`NO_STRING_RANGES`), for the backend's ``reason``."""
    return Deviation(code="no-string-ranges", description=NO_STRING_RANGES, reason=reason)
