"""The ANN index of a Lance table, and the scalar indexes that cost more than they save.

The configured ANN index (``hnsw`` or ``ivfflat``, with ``sq``/``pq`` quantisation or none) is trained once
the table holds ``index_min_rows`` rows (:func:`train`); the table's maintenance drops the LabelList index
of a key whose values are mostly distinct (:func:`drop_unselective_indexes`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

import pyarrow.compute as pc
from lancedb.index import HnswFlat, HnswPq, HnswSq, IvfFlat, IvfPq
from mastra_memory.vector import DEFAULT_EF_CONSTRUCTION, DEFAULT_M

from .layout import TableInfo

__all__ = ["DISTANCE_TYPES", "drop_unselective_indexes", "train"]

DISTANCE_TYPES: Final[Mapping[str, Literal["cosine", "l2", "dot"]]] = {
    "cosine": "cosine",
    "euclidean": "l2",
    "dotproduct": "dot",
}
# A LabelList index keeps one bitmap per distinct value, and every optimize rebuilds it whole: about 30 µs
# per distinct value here, 0.3 s per optimize at 10k rows for a key that is unique per record (Memory's
# message_id). For such a key a scan of its small list column is as fast as the index (2 vs 4 ms for 20
# values at 100k rows), so the index is dropped once the table shows the key's values are mostly distinct.
_UNSELECTIVE_SHARE: Final = 0.5
_UNSELECTIVE_MIN_ROWS: Final = 1000


async def drop_unselective_indexes(info: TableInfo) -> None:
    """Drop the LabelList index of index columns whose values are mostly distinct (once per table).

    The column stays and filters keep reading it (docs/spec.md §3.1: ``metadata_indexes`` is a hint);
    only the per-value bitmaps, which cost more to maintain than they save, go.
    """
    if info.selectivity_checked or not info.indexed:
        return
    rows = await info.table.query().select(list(info.indexed.values())).to_arrow()
    if rows.num_rows < _UNSELECTIVE_MIN_ROWS:
        return
    unselective = {
        column
        for column in info.indexed.values()
        if pc.count_distinct(rows[column].combine_chunks().flatten()).as_py()
        > _UNSELECTIVE_SHARE * rows.num_rows
    }
    for index in await info.table.list_indices():
        columns = list(index.columns)
        if index.index_type == "LabelList" and len(columns) == 1 and columns[0] in unselective:
            await info.table.drop_index(index.name)
    info.selectivity_checked = True  # only once it succeeded: a failed drop is retried next optimize


async def train(info: TableInfo) -> None:
    """Train the configured ANN index of the table (replacing any) and optimise the table."""
    index = info.index
    distance = DISTANCE_TYPES[info.metric]
    lists = index.get("lists")
    quantization = index.get("quantization", "none")
    config: Any
    if index.get("type") == "hnsw":
        hnsw = {
            "m": index.get("m", DEFAULT_M),
            "ef_construction": index.get("ef_construction", DEFAULT_EF_CONSTRUCTION),
        }
        cls = {"sq": HnswSq, "pq": HnswPq, "none": HnswFlat}[quantization]
        config = cls(distance_type=distance, num_partitions=lists, **hnsw)
    elif quantization == "pq":
        config = IvfPq(distance_type=distance, num_partitions=lists)
    else:
        config = IvfFlat(distance_type=distance, num_partitions=lists)
    await info.table.create_index("vector", config=config, replace=True)
    await info.table.optimize()
    info.has_ann = True
