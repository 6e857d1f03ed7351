"""How a record is laid out in a Lance table so that filters stay exact, and how a table describes itself.

==========================  ====================================================================
column                      content
==========================  ====================================================================
``id``                      the record id, verbatim (BTREE scalar index)
``vector``                  ``fixed_size_list<float32>[dimension]``
``metadata``                the metadata as JSON text, exactly as written: what reads return
``_mastra_json``            the same document as JSONB (``pa.json_(pa.utf8())``): what filters read
``_mastra_idx_<n>``         for each key of ``create_index(metadata_indexes=...)``: its string values
                            (``list<string>``, LabelList scalar index), so ``{thread_id: "t1"}`` is
                            answered from an index (dropped for a key whose values are mostly
                            distinct, e.g. ``message_id``: its column is scanned instead)
==========================  ====================================================================

The schema metadata records dimension, metric, ANN configuration and the indexed keys (:func:`schema`),
so a table describes itself to every process that opens it (:func:`describe_table`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from mastra_memory.capabilities import Metric

from .translate import JSON_COLUMN

__all__ = [
    "FLOAT32",
    "INDEX_PREFIX",
    "JSON_FIELD",
    "TableInfo",
    "describe_table",
    "matrix",
    "metadata_json",
    "rows",
    "schema",
    "string_values",
]

INDEX_PREFIX: Final = "_mastra_idx_"
META_PREFIX: Final = "mastra."
FLOAT32: Final = np.dtype("<f4")
JSON_FIELD: Final = pa.field(JSON_COLUMN, pa.json_(pa.utf8()), nullable=False)


@dataclass
class TableInfo:
    """An open table and what its schema metadata says about it."""

    table: Any  # lancedb.AsyncTable (the package ships no type information)
    schema: pa.Schema  # as written: the JSONB column typed pa.json_(pa.utf8()), which Lance encodes
    dimension: int
    metric: Metric
    index: dict[str, Any]
    indexed: dict[str, str]  # metadata key -> index column
    has_ann: bool
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    writes: int = 0
    # Rows as last counted plus this store's inserts since: whether to count (and train) the ANN index.
    rows: int | None = None
    selectivity_checked: bool = False


def schema(dimension: int, metric: Metric, index: Mapping[str, Any], keys: Sequence[str]) -> pa.Schema:
    fields = [
        pa.field("id", pa.utf8(), nullable=False),
        pa.field("vector", pa.list_(pa.float32(), dimension), nullable=False),
        pa.field("metadata", pa.utf8(), nullable=False),
        JSON_FIELD,
    ]
    fields += [
        pa.field(f"{INDEX_PREFIX}{i}", pa.list_(pa.utf8()), nullable=False, metadata={"mastra.key": key})
        for i, key in enumerate(keys)
    ]
    meta = {
        f"{META_PREFIX}dimension": str(dimension),
        f"{META_PREFIX}metric": metric,
        f"{META_PREFIX}index": json.dumps(dict(index), sort_keys=True),
        f"{META_PREFIX}layout": "1",
    }
    return pa.schema(fields, metadata=meta)


def string_values(value: Any) -> list[str]:
    """What an index column holds for one value: the string itself, or a list's string elements."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def metadata_json(metadata: Mapping[str, Any]) -> str:
    """Metadata as stored: compact JSON text (what LanceDB cannot hold was refused by the shared
    validation: text that is not Unicode)."""
    return json.dumps(metadata, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


async def describe_table(table: Any) -> TableInfo:
    stored = await table.schema()
    # Lance reports its JSONB column as large_binary; writes must send JSON text typed pa.json_.
    schema = pa.schema(
        [JSON_FIELD if f.name == JSON_COLUMN else f for f in stored],
        metadata=stored.metadata,
    )
    meta = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
    vector_type = schema.field("vector").type
    dimension = int(meta.get(f"{META_PREFIX}dimension", vector_type.list_size))
    metric = cast(Metric, meta.get(f"{META_PREFIX}metric", "cosine"))
    index = json.loads(meta.get(f"{META_PREFIX}index", "{}"))
    indexed = {}
    for f in schema:
        if f.name.startswith(INDEX_PREFIX) and f.metadata and b"mastra.key" in f.metadata:
            indexed[f.metadata[b"mastra.key"].decode()] = f.name
    has_ann = any(list(i.columns) == ["vector"] for i in await table.list_indices())
    return TableInfo(table, schema, dimension, metric, index, indexed, has_ann)


def rows(
    info: TableInfo, ids: Sequence[str], vectors: npt.NDArray[np.floating[Any]], metadata: Sequence[str]
) -> pa.Table:
    """Rows in the table's schema; ``metadata`` are the documents' JSON texts."""
    # Every value fits float32: the shared validation refused any other (docs/spec.md §3.3).
    as_float32 = np.ascontiguousarray(vectors, dtype=FLOAT32)
    columns: dict[str, Any] = {
        "id": pa.array(ids, pa.utf8()),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(as_float32.ravel()), info.dimension),
        "metadata": pa.array(metadata, pa.utf8()),
        JSON_COLUMN: pa.array(metadata, pa.json_(pa.utf8())),
    }
    if info.indexed:
        documents = [json.loads(m) for m in metadata]
        for key, column in info.indexed.items():
            values = [string_values(d.get(key)) for d in documents]
            columns[column] = pa.array(values, pa.list_(pa.utf8()))
    return pa.table(columns, schema=info.schema)


def matrix(column: pa.ChunkedArray | pa.Array, dimension: int) -> npt.NDArray[np.float32]:
    """A ``fixed_size_list<float32>`` column as an ``(n, dimension)`` float32 matrix."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    values = array.flatten().to_numpy(zero_copy_only=False)
    return np.asarray(values, dtype=FLOAT32).reshape(-1, dimension)
