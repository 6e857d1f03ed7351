"""Snapshots of one scope of an SQLite vector index: the rows of one ``resource_id`` (or ``thread_id``) only.

Why. A process serving many users should not read every user's vectors to answer one of them: loading
the whole index (1M rows: 1.5 GB, about 13 s here) before the first recall is what made a cold start cost
the size of the store (issue 28). A filter that requires a string at a top-level key with a metadata index
(``Memory`` indexes ``thread_id``, ``resource_id`` and ``message_id``) is answered from a
:class:`~.snapshot.Snapshot` of that scope's rows alone, read through the expression index, while the
whole-index snapshot is not loaded. Such partial snapshots are kept (most recently used first, up to a
row budget) and patched by this store's own writes exactly as the whole snapshot is; any other change
(another connection or process) drops them, through the same generation token (``store.py``).

Exactness. The expression index finds the rows whose value at the key *is* the string; a filter
``key == "x"`` also matches a row whose value is a list holding ``"x"`` (docs/spec.md §2.3). A scope is
therefore used only while no row holds a list or an object at that key, which a partial index (only such
rows, normally none) answers without a scan: :func:`nonscalar_index_sql`. A write of this store that puts
one there drops the key's scopes.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from hashlib import sha256
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ...filters.ast import And, Comparison, Node
from ...vector.sql_translate import IDENTIFIER
from .snapshot import Snapshot

__all__ = [
    "DEFAULT_SCOPE_ROWS",
    "Scope",
    "ScopeCache",
    "nonscalar_index_name",
    "nonscalar_index_sql",
    "nonscalar_probe_sql",
    "scopes_of",
    "value_sql",
]

#: Rows kept in scope snapshots per store (about 600 MB at 384 dimensions) before the least recently
#: used scope is dropped.
DEFAULT_SCOPE_ROWS: Final = 400_000


@dataclass(frozen=True, slots=True)
class Scope:
    """``key == value`` (a top-level key, a string)."""

    key: str
    value: str

    def holds(self, metadata: Mapping[str, Any]) -> bool:
        found = metadata.get(self.key)
        return isinstance(found, str) and found == self.value


def value_sql(key: str) -> str:
    """The expression of the key's metadata index, spelled as ``create_index`` spells it (so SQLite uses
    the index): only identifier keys get one."""
    return f"json_extract(metadata, '$.\"{key}\"')"


def _nonscalar_where(key: str) -> str:
    return f"json_type(metadata, '$.\"{key}\"') IN ('array', 'object')"


def nonscalar_index_sql(table: str, index_name: str, key: str) -> str:
    """A partial index of the rows holding a list or an object at ``key``: normally empty, it tells in
    O(1) whether the scope of a value may be read through the expression index exactly."""
    return f"CREATE INDEX IF NOT EXISTS {index_name} ON {table} (seq) WHERE {_nonscalar_where(key)}"


def nonscalar_index_name(index: str, key: str) -> str:
    digest = sha256(f"{index}\x00{key}\x00nonscalar".encode()).hexdigest()[:16]
    return f'"mastra_vidx_{digest}"'


def nonscalar_probe_sql(table: str, key: str) -> str:
    """Whether any row holds a list or an object at ``key`` (answered from the partial index)."""
    return f"SELECT 1 FROM {table} WHERE {_nonscalar_where(key)} LIMIT 1"


def scopes_of(node: Node) -> Iterator[Scope]:
    """The string equalities on top-level identifier keys that ``node`` requires (a superset condition of
    every match: the node itself, or a child of a top-level ``$and``)."""
    if isinstance(node, And):
        for child in node.children:
            yield from scopes_of(child)
        return
    if (
        isinstance(node, Comparison)
        and node.op == "$eq"
        and len(node.path) == 1
        and isinstance(node.value, str)
        and IDENTIFIER.fullmatch(node.path[0])
    ):
        yield Scope(node.path[0], node.value)


def _seqs(values: npt.NDArray[np.int64], mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    return np.sort(values[mask])


class ScopeCache:
    """The scope snapshots of one index, most recently used last, within a row budget."""

    def __init__(self, budget: int = DEFAULT_SCOPE_ROWS) -> None:
        self.budget = budget
        self._scopes: OrderedDict[Scope, Snapshot] = OrderedDict()
        self._rows = 0
        # Scopes not held as snapshots, counted (up to a cap) at a generation: a count still reads that many
        # index entries (~3 ms at 50,000; ~1 ms for a 20,000-row thread scored from the graph).
        self._counts: dict[Scope, tuple[str, int]] = {}

    def counted(self, scope: Scope, generation: str) -> int | None:
        """The rows of ``scope`` as counted at ``generation`` (None: not counted since)."""
        found = self._counts.get(scope)
        return found[1] if found is not None and found[0] == generation else None

    def count(self, scope: Scope, generation: str, rows: int) -> None:
        if len(self._counts) >= 256 and scope not in self._counts:  # forget the oldest beyond that
            del self._counts[next(iter(self._counts))]
        self._counts[scope] = (generation, rows)

    def __len__(self) -> int:
        return len(self._scopes)

    def get(self, scope: Scope, generation: str) -> Snapshot | None:
        snapshot = self._scopes.get(scope)
        if snapshot is None:
            return None
        if snapshot.generation != generation:
            self.drop(scope)
            return None
        self._scopes.move_to_end(scope)
        return snapshot

    def put(self, scope: Scope, snapshot: Snapshot) -> None:
        self.drop(scope)
        self._scopes[scope] = snapshot
        self._rows += snapshot.n
        while self._rows > self.budget and len(self._scopes) > 1:
            self.drop(next(iter(self._scopes)))

    def drop(self, scope: Scope) -> None:
        old = self._scopes.pop(scope, None)
        if old is not None:
            self._rows -= old.n

    def clear(self) -> None:
        self._scopes.clear()
        self._rows = 0

    # --- patches by this store's own writes (the token read inside the write transaction) ------------

    def changed(self, before: str, after: str, patch: Any) -> None:
        """A write of this store moved the index from generation ``before`` to ``after``: scopes at
        ``before`` are patched by ``patch(scope, snapshot) -> bool`` (False drops it), others dropped."""
        for scope, snapshot in list(self._scopes.items()):
            if snapshot.generation != before:
                self.drop(scope)
                continue
            snapshot.generation = after
            rows = snapshot.n
            if not patch(scope, snapshot):
                self.drop(scope)
            else:
                self._rows += snapshot.n - rows

    @staticmethod
    def upsert(
        scope: Scope,
        snapshot: Snapshot,
        gone: npt.NDArray[np.int64],
        seqs: npt.NDArray[np.int64],
        ids: list[str],
        matrix: npt.NDArray[np.float32],
        metadata: list[Mapping[str, Any]],
    ) -> bool:
        """Rows deleted (``gone``) and upserted: those of the scope appended or replaced, those that left
        it killed. False when the scope cannot be patched (a row joined it out of order, a list or an
        object at the key)."""
        if any(isinstance(m.get(scope.key), (list, dict)) for m in metadata):
            return False
        inside = np.asarray([scope.holds(m) for m in metadata], dtype=np.bool_)
        present = snapshot.find(seqs) >= 0
        leaving = np.concatenate([gone, seqs[present & ~inside]])
        if leaving.size:
            found = snapshot.find(leaving)
            killed = np.sort(np.unique(leaving[found >= 0]))
            if killed.size and not snapshot.apply_delete(killed):
                return False
        if not inside.any():
            return True
        picked = np.flatnonzero(inside)
        return snapshot.apply_upsert(
            seqs[picked],
            [ids[i] for i in picked.tolist()],
            matrix[picked],
            [metadata[i] for i in picked.tolist()],
        )

    @staticmethod
    def update(
        scope: Scope,
        snapshot: Snapshot,
        seqs: npt.NDArray[np.int64],
        vector: npt.NDArray[np.float32] | None,
        metadata: Mapping[str, Any] | None,
    ) -> bool:
        """Rows ``seqs`` given one new vector and/or metadata."""
        present = snapshot.find(seqs) >= 0
        if metadata is None:
            return not present.any() or snapshot.apply_update(_seqs(seqs, present), vector, None)
        if isinstance(metadata.get(scope.key), (list, dict)):
            return False
        if scope.holds(metadata):
            # Rows joining the scope would need their vectors: only a scope already holding them all stays.
            return bool(present.all()) and snapshot.apply_update(seqs, vector, metadata)
        return not present.any() or snapshot.apply_delete(_seqs(seqs, present))

    @staticmethod
    def delete(scope: Scope, snapshot: Snapshot, seqs: npt.NDArray[np.int64]) -> bool:
        present = snapshot.find(seqs) >= 0
        return not present.any() or snapshot.apply_delete(_seqs(seqs, present))
