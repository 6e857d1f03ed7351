"""The rows of one SQLite vector index's table, read: table and index names, vector blobs, snapshots of
the rows (``snapshot.py``) and the sources of their metadata columns (split from ``store.py``, issue 24).

Table names are built from index names that the base class validated against ``^[a-z][a-z0-9_]{0,62}$``
(checked again here), so they never carry user text that needs quoting.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from hashlib import sha256
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ...errors import ValidationError
from ...vector.records import PORTABLE_INDEX_NAME
from ...vector.sql_translate import IDENTIFIER
from .scopes import Scope, nonscalar_index_name, nonscalar_probe_sql, value_sql
from .snapshot import FLOAT32, Snapshot, spare

__all__ = [
    "REGISTRY",
    "TABLE_PREFIX",
    "blob",
    "column_rows",
    "from_blob",
    "load_snapshot",
    "metadata_index_name",
    "scalar_index",
    "table",
]

REGISTRY: Final = "mastra_vector_indexes"
TABLE_PREFIX: Final = "mastra_vectors__"


def table(name: str) -> str:
    if not PORTABLE_INDEX_NAME.fullmatch(name):  # the base validated it; never build SQL from anything else
        raise ValidationError(f"invalid index name {name!r}")
    return f'"{TABLE_PREFIX}{name}"'


def metadata_index_name(index: str, key: str) -> str:
    digest = sha256(f"{index}\x00{key}".encode()).hexdigest()[:16]
    return f'"mastra_vidx_{digest}"'


def blob(vector: npt.NDArray[np.floating]) -> bytes:
    return np.ascontiguousarray(vector, dtype=FLOAT32).tobytes()


def from_blob(data: bytes) -> list[float]:
    return [float(x) for x in np.frombuffer(data, dtype=FLOAT32)]


def load_snapshot(
    conn: sqlite3.Connection, name: str, dimension: int, generation: str, where: str, params: tuple[Any, ...]
) -> Snapshot:
    """A snapshot of the rows ``where`` selects (every row for ``""``), read in seq order."""
    source = table(name)
    (count,) = conn.execute(f"SELECT count(*) FROM {source} {where}", params).fetchone()
    seqs = np.empty(spare(count), dtype=np.int64)
    ids: list[str] = []
    matrix = np.empty((spare(count), dimension), dtype=FLOAT32)
    flat = matrix.reshape(-1).view(np.uint8)
    width = dimension * FLOAT32.itemsize
    # Rows go straight into the preallocated matrix: no list of blobs, no joined copy (peak RSS).
    rows = conn.execute(f"SELECT seq, id, vector FROM {source} {where} ORDER BY seq", params)
    for i, (seq, rid, data) in enumerate(rows):
        seqs[i] = seq
        ids.append(rid)
        flat[i * width : (i + 1) * width] = np.frombuffer(data, dtype=np.uint8)
    return Snapshot(generation, seqs, ids, matrix)


def scalar_index(conn: sqlite3.Connection, name: str, key: str) -> bool:
    """Whether ``key`` has its metadata index and no row holds a list or an object there: then the
    index alone finds every row whose value is a given scalar (scopes.py)."""
    names = [metadata_index_name(name, key), nonscalar_index_name(name, key)]
    (found,) = conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN (?, ?)",
        [n.strip('"') for n in names],
    ).fetchone()
    return bool(found == 2) and conn.execute(nonscalar_probe_sql(table(name), key)).fetchone() is None


def column_rows(conn: sqlite3.Connection, name: str, scope: Scope | None, path: str) -> Any:
    """(seq, json_type, value) at JSON path ``path`` of every row (of ``scope``'s rows): a snapshot
    column's source."""
    key = path[3:-1]  # snapshot.py asks for '$."key"' only
    if scope is None and IDENTIFIER.fullmatch(key) and scalar_index(conn, name, key):
        return _column_from_index(conn, name, key)
    where, params = ("", {}) if scope is None else (f"WHERE {value_sql(scope.key)} = :v", {"v": scope.value})
    return conn.execute(
        f"SELECT seq, json_type(metadata, :p), json_extract(metadata, :p) FROM {table(name)} {where}",
        {"p": path, **params},
    )


def _column_from_index(conn: sqlite3.Connection, name: str, key: str) -> Iterator[tuple[Any, ...]]:
    """The column source read from the key's expression index instead of every row's JSON (1M rows:
    1.7 s instead of 8.9 s here). The index holds ``json_extract`` values, which cannot tell JSON null
    from a missing key, nor true/false from 1/0 (no list or object, :func:`scalar_index` checked):
    those rows alone are read again for their ``json_type``."""
    source, value = table(name), value_sql(key)
    kinds = {str: "text", int: "integer", float: "real"}
    for seq, found in conn.execute(f"SELECT seq, {value} FROM {source} ORDER BY {value}"):
        if found is None or (type(found) is not str and found in (0, 1)):
            continue
        yield seq, kinds[type(found)], found
    path = {"p": f'$."{key}"'}
    for where in (f"{value} IS NULL", f"{value} IN (0, 1)"):
        yield from conn.execute(
            f"SELECT seq, json_type(metadata, :p), json_extract(metadata, :p) FROM {source} WHERE {where}",
            path,
        )
