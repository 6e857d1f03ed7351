"""The in-memory copy of one SQLite vector index: the float32 matrix and columnar copies of hot metadata keys.

Why this module is long: the columns, their postings and the evaluator over them share
one invariant (a column's facts decide whether numpy may answer exactly), easiest to check in one place.

A :class:`Snapshot` holds one row *slot* per stored row, in ascending ``seq`` order (the table's row key),
so a ``seq`` is found by binary search. It is maintained incrementally by the store's own writes —
appended, replaced in place, or killed (a tombstone; compacted once a quarter of the slots are dead) —
instead of being reloaded after each write. Whether it may be trusted is the store's business
(``store.py``: the registry's generation token).

Columns. The first filter on a top-level key builds a :class:`Column` of that key: per slot, the kind of
the value (missing, null, false, true, number, text, or *other*: a list, an object, or an integer float64
cannot hold exactly), the number, and the text as a code into the column's distinct strings. While no live
row holds an *other* value at a key, a filter on that key has the plain-scalar semantics of
docs/spec.md §2.3 (no list to traverse or test element-wise), which :func:`evaluate_filter` computes with
numpy over the columns. As soon as one live row holds a list or an object there, the filter goes back to
the exact SQL: the facts decide which evaluator runs, never a weaker condition.

Postings. A column looked up by string equality (``resource_id``, ``thread_id``) also groups its slots by
value (:class:`Postings`), so a scoped filter is evaluated over that scope's slots alone
(:func:`matching_slots`), not over every row of the index (issue 28).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, TypeVar

import numpy as np
import numpy.typing as npt

from ...filters.ast import And, Comparison, ElemMatch, Node, Nor, Not, Or, Regex, Scalar
from ...filters.evaluate import matches
from ...filters.numbers import COMPARISONS, EXACT_FLOAT_LIMIT

__all__ = [
    "Column",
    "Postings",
    "Snapshot",
    "decoded",
    "evaluate_filter",
    "kind_of",
    "matching_slots",
    "row_norms",
    "spare",
]

FLOAT32: Final = np.dtype("<f4")
_G = TypeVar("_G", bound=np.generic)

# Value kinds of a column slot.
MISSING: Final = 0
NULL: Final = 1
FALSE: Final = 2
TRUE: Final = 3
NUMBER: Final = 4
TEXT: Final = 5
OTHER: Final = 6  # a list, an object, or an integer beyond float64's exact range: handled in SQL only

#: json_type names as the SQL loader reads them.
_JSON_KINDS: Final = {"null": NULL, "true": TRUE, "false": FALSE}
# Keys a JSON path spells the same way on every SQLite version (see translate.py): columns exist only
# for them, so the loader's path and the translator's path name the same value.
_ESCAPED_IN_JSON: Final = re.compile(r'["\\\x00-\x1f]')


def kind_of(present: bool, value: Any) -> tuple[int, float, str | None]:
    """(kind, number, text) of a metadata value as JSON decoding gives it."""
    if not present:
        return MISSING, np.nan, None
    if value is None:
        return NULL, np.nan, None
    if value is True:
        return TRUE, np.nan, None
    if value is False:
        return FALSE, np.nan, None
    if isinstance(value, int):
        exact = -EXACT_FLOAT_LIMIT <= value <= EXACT_FLOAT_LIMIT
        return (NUMBER, float(value), None) if exact else (OTHER, np.nan, None)
    if isinstance(value, float):
        return NUMBER, value, None
    if isinstance(value, str):
        return TEXT, np.nan, value
    return OTHER, np.nan, None


def row_norms(block: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """L2 norm of each row, 8,192 rows at a time (no temporary the size of the matrix)."""
    out = np.empty(block.shape[0], dtype=FLOAT32)
    for start in range(0, block.shape[0], 8192):
        out[start : start + 8192] = np.linalg.norm(block[start : start + 8192], axis=1)
    return out


def spare(rows: int) -> int:
    """Rows to allocate for ``rows``: room to append without copying. ``np.empty`` leaves the spare
    pages untouched, so they cost address space, not memory, until rows are written there."""
    return rows + max(1024, rows // 2)


def _grow(array: npt.NDArray[Any], used: int, capacity: int) -> npt.NDArray[Any]:
    """A fresh ``array`` with room for ``capacity`` rows and its first ``used`` rows copied.

    A new allocation rather than ``ndarray.resize``: resize zero-fills the spare rows (touching them) and
    may hold the old and the new block at once anyway.
    """
    grown = np.empty((capacity, *array.shape[1:]), dtype=array.dtype)
    grown[:used] = array[:used]
    return grown


class Column:
    """One top-level metadata key over every slot of a snapshot: kinds, numbers and text codes."""

    def __init__(self, capacity: int) -> None:
        self.kind = np.zeros(capacity, dtype=np.int8)
        self.number = np.full(capacity, np.nan, dtype=np.float64)
        self.code = np.full(capacity, -1, dtype=np.int32)
        self.strings: list[str] = []
        self._codes: dict[str, int] = {}
        self._sorted: tuple[list[str], npt.NDArray[np.int32]] | None = None
        self.other = 0  # live slots holding an OTHER value: while > 0 the key is filtered in SQL
        self.postings: Postings | None = None  # built by the first equality lookup on this key

    def _touched(self, slots: npt.NDArray[np.int64]) -> None:
        if self.postings is not None:
            self.postings.touched(slots)

    def grow(self, used: int, capacity: int) -> None:
        self.kind = _grow(self.kind, used, capacity)
        self.number = _grow(self.number, used, capacity)
        self.code = _grow(self.code, used, capacity)

    def _code_of(self, text: str) -> int:
        code = self._codes.get(text)
        if code is None:
            code = self._codes[text] = len(self.strings)
            self.strings.append(text)
            self._sorted = None
        return code

    def assign(self, slots: npt.NDArray[np.int64], values: Iterable[tuple[int, float, str | None]]) -> None:
        """Store one (kind, number, text) per slot of ``slots`` (live slots; old values are replaced)."""
        kinds: list[int] = []
        numbers: list[float] = []
        codes: list[int] = []
        for kind, number, text in values:
            kinds.append(kind)
            numbers.append(number)
            codes.append(-1 if text is None else self._code_of(text))
        self.other -= int(np.count_nonzero(self.kind[slots] == OTHER))
        self.kind[slots] = kinds
        self.number[slots] = numbers
        self.code[slots] = codes
        self.other += kinds.count(OTHER)
        self._touched(slots)

    def fill(self, slots: npt.NDArray[np.int64], value: tuple[int, float, str | None]) -> None:
        """Store the same value in every slot of ``slots``."""
        kind, number, text = value
        self.other -= int(np.count_nonzero(self.kind[slots] == OTHER))
        self.kind[slots] = kind
        self.number[slots] = number
        self.code[slots] = -1 if text is None else self._code_of(text)
        if kind == OTHER:
            self.other += int(slots.size)
        self._touched(slots)

    def kill(self, slots: npt.NDArray[np.int64]) -> None:
        """Forget the values of ``slots`` (deleted rows)."""
        self.other -= int(np.count_nonzero(self.kind[slots] == OTHER))
        self.kind[slots] = MISSING
        self.code[slots] = -1

    def compact(self, keep: npt.NDArray[np.int64]) -> None:
        m = keep.size
        self.kind[:m] = self.kind[keep]
        self.number[:m] = self.number[keep]
        self.code[:m] = self.code[keep]
        self.postings = None  # every slot moved: rebuilt by the next lookup

    def _postings(self, n: int) -> Postings:
        if self.postings is None or self.postings.stale(n):
            self.postings = Postings(self.code[:n], len(self.strings))
        return self.postings

    def candidates_at_most(self, text: str, n: int) -> int:
        """An upper bound of the slots :meth:`slots_with` would check for ``text`` (no array built)."""
        code = self._codes.get(text)
        return 0 if code is None else self._postings(n).size_of(code)

    def slots_with(self, text: str, n: int, live: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        """Ascending live slots (below ``n``) whose value at this key is the string ``text``.

        Cost follows the matches, not the snapshot: the postings give a superset of the candidates
        (entries go stale when a slot is killed, reused or changes value) and each one is checked
        against the column itself, so the answer is exact whatever the postings hold.
        """
        code = self._codes.get(text)
        if code is None:
            return np.empty(0, dtype=np.int64)
        candidates = self._postings(n).candidates(code, self.code)
        candidates = candidates[candidates < n]
        keep: npt.NDArray[np.bool_] = (self.code[candidates] == code) & live[candidates]
        return candidates[keep]

    def text_codes(self, test: Callable[[str], bool]) -> npt.NDArray[np.bool_]:
        """Per distinct string, whether ``test`` holds (indexed by code; one extra False for code -1)."""
        table = np.zeros(len(self.strings) + 1, dtype=np.bool_)
        for code, text in enumerate(self.strings):
            table[code] = test(text)
        return table

    def text_range(self, op: str, bound: str) -> npt.NDArray[np.bool_]:
        """Per code, whether the string compares to ``bound`` by ``op`` (code-point order, as Python)."""
        if self._sorted is None:
            order = sorted(range(len(self.strings)), key=self.strings.__getitem__)
            self._sorted = [self.strings[i] for i in order], np.asarray(order, dtype=np.int32)
        texts, codes = self._sorted
        if op == "$gt":
            picked = codes[bisect.bisect_right(texts, bound) :]
        elif op == "$gte":
            picked = codes[bisect.bisect_left(texts, bound) :]
        elif op == "$lt":
            picked = codes[: bisect.bisect_left(texts, bound)]
        else:
            picked = codes[: bisect.bisect_right(texts, bound)]
        table = np.zeros(len(self.strings) + 1, dtype=np.bool_)
        table[picked] = True
        return table

    def code_for(self, text: str) -> int | None:
        return self._codes.get(text)


class Postings:
    """Slots grouped by text code, for equality lookups (a ``resource_id``, a ``thread_id``).

    ``order`` holds every slot at build time sorted by code (CSR: ``bounds[c]:bounds[c + 1]`` are the
    slots of code ``c``); slots assigned since then are listed in the tail and scanned. The tail is folded
    in by a rebuild once it outgrows a sixteenth of the snapshot, so the rebuild (one stable argsort) is
    paid once per n/16 writes. Entries may be stale: :meth:`Column.slots_with` checks each candidate.
    """

    #: The tail never triggers a rebuild below this many rows (tests lower it).
    REBUILD_MIN: int = 4096

    def __init__(self, codes: npt.NDArray[np.int32], strings: int) -> None:
        order = np.argsort(codes, kind="stable")
        self.order = order.astype(np.int32 if codes.size < 2**31 else np.int64)
        self.bounds = np.searchsorted(codes[order], np.arange(strings + 1, dtype=np.int32))
        self.size = codes.size
        self._tail: list[npt.NDArray[np.int64]] = []
        self._tail_rows = 0

    def touched(self, slots: npt.NDArray[np.int64]) -> None:
        """``slots`` were given a (possibly new) value since the build."""
        self._tail.append(np.array(slots, dtype=np.int64))
        self._tail_rows += int(slots.size)

    def size_of(self, code: int) -> int:
        built = int(self.bounds[code + 1] - self.bounds[code]) if code + 1 < self.bounds.size else 0
        return built + self._tail_rows

    def stale(self, n: int) -> bool:
        return self._tail_rows > max(self.REBUILD_MIN, n // 16)

    def candidates(self, code: int, codes: npt.NDArray[np.int32]) -> npt.NDArray[np.int64]:
        """Ascending, distinct slots that may hold ``code`` (a superset; ``codes`` is the column)."""
        if code + 1 < self.bounds.size:
            built = self.order[self.bounds[code] : self.bounds[code + 1]].astype(np.int64)
        else:
            built = np.empty(0, dtype=np.int64)  # a string first seen after the build
        if not self._tail:
            return built  # a stable argsort: already ascending
        if len(self._tail) > 1:
            self._tail = [np.concatenate(self._tail)]
        tail = self._tail[0]
        tail = tail[tail < codes.size]
        return np.unique(np.concatenate([built, tail[codes[tail] == code]]))


class Snapshot:
    """The vectors (and column copies) of one index, tagged with the registry generation they match."""

    def __init__(
        self,
        generation: str,
        seqs: npt.NDArray[np.int64],
        ids: list[str],
        matrix: npt.NDArray[np.float32],
    ) -> None:
        """``seqs`` and ``matrix`` may have spare rows beyond ``len(ids)`` (see :func:`spare`)."""
        self.generation = generation
        self.n = n = len(ids)
        self.seqs = seqs
        self.ids = ids
        self.matrix = matrix
        capacity = seqs.shape[0]
        self.norms = np.empty(capacity, dtype=FLOAT32)
        self.norms[:n] = row_norms(matrix[:n])
        self.live = np.zeros(capacity, dtype=np.bool_)
        self.live[:n] = True
        self.dead = 0
        self.columns: dict[str, Column] = {}
        self.layout = 0  # bumped whenever slots are renumbered (compaction, dead tail dropped): ann.py

    # --- lookup ------------------------------------------------------------------------------------

    def live_slots(self) -> npt.NDArray[np.int64]:
        """Slots of the live rows, ascending."""
        if self.dead == 0:
            return np.arange(self.n, dtype=np.int64)
        return np.flatnonzero(self.live[: self.n]).astype(np.int64)

    def slots_of(self, seqs: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Slots of ``seqs`` (ascending seqs of live rows; each must be in the snapshot)."""
        return np.searchsorted(self.seqs[: self.n], seqs).astype(np.int64)

    def find(self, seqs: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Slot of each seq, or -1 where the snapshot has no live row with it."""
        slots = np.searchsorted(self.seqs[: self.n], seqs).astype(np.int64)
        inside = slots < self.n
        hit = np.zeros(seqs.size, dtype=np.bool_)
        hit[inside] = (self.seqs[slots[inside]] == seqs[inside]) & self.live[slots[inside]]
        return np.where(hit, slots, -1)

    # --- maintenance ------------------------------------------------------------------------------

    def column(self, key: str, load: Callable[[str], Iterable[tuple[int, str | None, Any]]]) -> Column | None:
        """The column of top-level ``key``, built from ``load(path)`` rows (seq, json_type, value) once."""
        existing = self.columns.get(key)
        if existing is not None:
            return existing
        if _ESCAPED_IN_JSON.search(key):
            return None
        column = Column(self.seqs.shape[0])
        seqs: list[int] = []
        values: list[tuple[int, float, str | None]] = []
        for seq, json_kind, value in load(f'$."{key}"'):
            seqs.append(seq)
            if json_kind is None:
                values.append((MISSING, np.nan, None))
            elif json_kind == "text":
                values.append((TEXT, np.nan, value))
            elif json_kind in ("integer", "real"):
                values.append(kind_of(True, value))  # an integer beyond 2**53 becomes OTHER
            else:
                values.append((_JSON_KINDS.get(json_kind, OTHER), np.nan, None))
        column.assign(self.slots_of(np.asarray(seqs, dtype=np.int64)), values)
        self.columns[key] = column
        return column

    def _reserve(self, extra: int) -> None:
        need = self.n + extra
        if need <= self.seqs.shape[0]:
            return
        capacity = spare(need)
        n = self.n
        self.matrix = _grow(self.matrix, n, capacity)  # old and new block together: once per 1.5x growth
        self.seqs = _grow(self.seqs, n, capacity)
        self.norms = _grow(self.norms, n, capacity)
        self.live = _grow(self.live, n, capacity)
        for column in self.columns.values():
            column.grow(n, capacity)

    def apply_upsert(
        self,
        seqs: npt.NDArray[np.int64],
        ids: list[str],
        matrix: npt.NDArray[np.float32],
        metadata: list[Mapping[str, Any]],
    ) -> bool:
        """Replace or append the upserted rows; False when the new seqs do not extend the order."""
        slots = self.find(seqs)
        fresh = np.flatnonzero(slots < 0)
        if fresh.size:
            new_seqs = seqs[fresh]
            # SQLite gives a new row max(seq) + 1, which reuses the seq of a deleted last row: drop
            # the dead slots at the tail first, so such an append still extends the order.
            while self.n and not self.live[self.n - 1]:
                self.layout += 1
                self.n -= 1
                self.dead -= 1
                self.ids.pop()
            last = self.seqs[self.n - 1] if self.n else np.iinfo(np.int64).min
            if new_seqs[0] <= last or (new_seqs.size > 1 and bool(np.any(np.diff(new_seqs) <= 0))):
                return False
            self._reserve(fresh.size)
            start = self.n
            slots[fresh] = np.arange(start, start + fresh.size)
            self.seqs[start : start + fresh.size] = new_seqs
            self.live[start : start + fresh.size] = True
            self.ids.extend(ids[i] for i in fresh.tolist())
            for column in self.columns.values():
                column.kind[start : start + fresh.size] = MISSING  # replaced by assign below
            self.n += fresh.size
        self.matrix[slots] = matrix
        self.norms[slots] = row_norms(matrix)
        for key, column in self.columns.items():
            column.assign(slots, (kind_of(key in meta, meta.get(key)) for meta in metadata))
        return True

    def apply_update(
        self,
        seqs: npt.NDArray[np.int64],
        vector: npt.NDArray[np.float32] | None,
        metadata: Mapping[str, Any] | None,
    ) -> bool:
        """Give the rows ``seqs`` one new vector and/or metadata; False if a row is unknown here."""
        slots = self.find(seqs)
        if bool(np.any(slots < 0)):
            return False
        if vector is not None:
            self.matrix[slots] = vector
            self.norms[slots] = row_norms(vector.reshape(1, -1))[0]
        if metadata is not None:
            for key, column in self.columns.items():
                column.fill(slots, kind_of(key in metadata, metadata.get(key)))
        return True

    def apply_delete(self, seqs: npt.NDArray[np.int64]) -> bool:
        """Kill the rows ``seqs``; False if a row is unknown here."""
        slots = self.find(seqs)
        if bool(np.any(slots < 0)):
            return False
        self.live[slots] = False
        for column in self.columns.values():
            column.kill(slots)
        self.dead += int(slots.size)
        if self.dead > max(64, self.n // 4):
            self._compact()
        return True

    def _compact(self) -> None:
        keep = np.flatnonzero(self.live[: self.n])
        m = keep.size
        # keep is ascending and keep[i] >= i: moving chunk by chunk never overwrites a row still to move.
        for start in range(0, m, 8192):
            part = keep[start : start + 8192]
            self.matrix[start : start + part.size] = self.matrix[part]
        self.seqs[:m] = self.seqs[keep]
        self.norms[:m] = self.norms[keep]
        self.live[:m] = True
        self.ids = [self.ids[i] for i in keep.tolist()]
        for column in self.columns.values():
            column.compact(keep)
        self.n = m
        self.dead = 0
        self.layout += 1


# --- the in-memory filter evaluator --------------------------------------------------------------


class _InSQL(Exception):
    """The filter needs the exact SQL (a key with lists/objects, a nested path, an inexact number)."""


def evaluate_filter(
    node: Node, snapshot: Snapshot, load: Callable[[str], Iterable[tuple[int, str | None, Any]]]
) -> npt.NDArray[np.bool_] | None:
    """Live slots matching ``node`` (a mask over ``snapshot.n``), or None when the SQL must decide.

    Exact under docs/spec.md §2.3/§2.4 for filters whose every path is one top-level key at which no live
    row holds a list or an object: such a path reaches one scalar or *missing*, so each operator is a test
    of that one value, which is what the numpy expressions below compute (typed equality, numbers never
    booleans, strings in code-point order; a negation matches *missing*).
    """
    try:
        mask = _Evaluator(snapshot, load).visit(node)
    except _InSQL:
        return None
    return mask & snapshot.live[: snapshot.n]


def matching_slots(
    node: Node, snapshot: Snapshot, load: Callable[[str], Iterable[tuple[int, str | None, Any]]]
) -> npt.NDArray[np.int64] | None:
    """Ascending live slots matching ``node``, or None when the SQL must decide (as :func:`evaluate_filter`).

    A filter that requires a string at a top-level key (``resource_id``, ``thread_id``: every scoped
    recall) first narrows the slots to that key's postings, then evaluates the whole filter over those
    slots alone, so its cost follows the matching rows, not the size of the index (issue 28). Evaluating
    the whole filter again over the narrowed slots keeps the result that of :func:`evaluate_filter`.
    """
    evaluator = _Evaluator(snapshot, load)
    try:
        rows = evaluator.preselect(node)
        if rows is None:
            mask = evaluator.visit(node) & snapshot.live[: snapshot.n]
            return np.flatnonzero(mask).astype(np.int64)
        if rows.size == 0:
            return rows
        evaluator.narrow(rows)
        return rows[evaluator.visit(node)]
    except _InSQL:
        return None


class _Evaluator:
    def __init__(
        self, snapshot: Snapshot, load: Callable[[str], Iterable[tuple[int, str | None, Any]]]
    ) -> None:
        self.s = snapshot
        self.n = snapshot.n
        self.load = load
        self.rows: npt.NDArray[np.int64] | None = None  # None: every slot below n
        self.size = self.n

    def narrow(self, rows: npt.NDArray[np.int64]) -> None:
        """Evaluate over ``rows`` only (ascending slots): every mask is then one entry per row."""
        self.rows = rows
        self.size = int(rows.size)

    def _at(self, values: npt.NDArray[_G]) -> npt.NDArray[_G]:
        return values[: self.n] if self.rows is None else values[self.rows]

    def preselect(self, node: Node) -> npt.NDArray[np.int64] | None:
        """The live slots of the most selective string equality that ``node`` requires, if any: a
        superset of the matches (``node`` may add conditions), or None when nothing narrows it."""
        if isinstance(node, And):
            best: npt.NDArray[np.int64] | None = None
            for child in node.children:
                rows = self.preselect(child)
                if rows is not None and (best is None or rows.size < best.size):
                    best = rows
            return best
        if not isinstance(node, Comparison) or len(node.path) != 1:
            return None
        if node.op == "$eq" and isinstance(node.value, str):
            texts: tuple[str, ...] = (node.value,)
        elif node.op == "$in" and isinstance(node.value, tuple) and node.value:
            if not all(isinstance(v, str) for v in node.value):
                return None
            texts = tuple(str(v) for v in node.value)
        else:
            return None
        column = self._column(node.path)
        if sum(column.candidates_at_most(text, self.n) for text in texts) * 2 > self.n:
            return None  # most rows (one big user): one pass over the column is cheaper than gathering
        live = self.s.live
        parts = [column.slots_with(text, self.n, live) for text in texts]
        return parts[0] if len(parts) == 1 else np.unique(np.concatenate(parts))

    def visit(self, node: Node) -> npt.NDArray[np.bool_]:
        if isinstance(node, And):
            out = self.visit(node.children[0])
            for child in node.children[1:]:
                out = out & self.visit(child)
            return out
        if isinstance(node, (Or, Nor)):
            out = self.visit(node.children[0])
            for child in node.children[1:]:
                out = out | self.visit(child)
            return ~out if isinstance(node, Nor) else out
        if isinstance(node, Not):
            return ~self.visit(node.child)
        column = self._column(node.path)
        if isinstance(node, ElemMatch):
            return np.zeros(self.size, dtype=np.bool_)  # no list at the key: nothing to match in
        if isinstance(node, Regex):
            key = node.path[0]
            table = column.text_codes(lambda text: matches(node, {key: text}))
            return table[self._at(column.code)]
        return self._comparison(node, column)

    def _column(self, path: tuple[str, ...]) -> Column:
        if len(path) != 1:
            raise _InSQL
        column = self.s.column(path[0], self.load)
        if column is None or column.other:
            raise _InSQL
        return column

    def _comparison(self, node: Comparison, column: Column) -> npt.NDArray[np.bool_]:
        op, value = node.op, node.value
        if op == "$eq":
            return self._equal(column, _scalar(value))
        if op == "$ne":
            return ~self._equal(column, _scalar(value))
        if op in ("$in", "$nin", "$all"):
            values = value if isinstance(value, tuple) else (value,)
            if op == "$all":
                if not values:
                    return np.zeros(self.size, dtype=np.bool_)
                out = self._equal(column, values[0])
                for v in values[1:]:
                    out = out & self._equal(column, v)
                return out
            found = np.zeros(self.size, dtype=np.bool_)
            for v in values:
                found |= self._equal(column, v)
            return found if op == "$in" else ~found
        if op in ("$gt", "$gte", "$lt", "$lte"):
            bound = _scalar(value)
            if isinstance(bound, str):
                return column.text_range(op, bound)[self._at(column.code)]
            number = self._number(bound)
            values_ = self._at(column.number)
            with np.errstate(invalid="ignore"):  # NaN (not a number) compares False, as wanted
                compared: npt.NDArray[np.bool_] = COMPARISONS[op](values_, number)
                return compared
        if op == "$exists":
            present: npt.NDArray[np.bool_] = self._at(column.kind) != MISSING
            return present if value is True else ~present
        if op == "$size":
            return np.zeros(self.size, dtype=np.bool_)  # no list at the key
        if op == "$contains":
            needle = _scalar(value)
            if not isinstance(needle, str):
                return np.zeros(self.size, dtype=np.bool_)  # only a list could contain a non-string
            return column.text_codes(lambda text: needle in text)[self._at(column.code)]
        raise _InSQL  # pragma: no cover - every ComparisonOp is handled above

    def _equal(self, column: Column, value: Scalar) -> npt.NDArray[np.bool_]:
        kind = self._at(column.kind)
        out: npt.NDArray[np.bool_]
        if value is None:
            out = (kind == NULL) | (kind == MISSING)
        elif value is True:
            out = kind == TRUE
        elif value is False:
            out = kind == FALSE
        elif isinstance(value, str):
            code = column.code_for(value)
            out = np.zeros(self.size, dtype=np.bool_) if code is None else self._at(column.code) == code
        else:
            with np.errstate(invalid="ignore"):
                out = self._at(column.number) == self._number(value)
        return out

    @staticmethod
    def _number(value: Scalar) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _InSQL  # pragma: no cover - the parser gives numbers here
        if isinstance(value, int) and not -EXACT_FLOAT_LIMIT <= value <= EXACT_FLOAT_LIMIT:
            raise _InSQL
        return float(value)


def _scalar(value: Scalar | tuple[Scalar, ...]) -> Scalar:
    if isinstance(value, tuple):
        raise _InSQL  # pragma: no cover - the parser gives scalars here
    return value


def decoded(text: str) -> Mapping[str, Any]:
    """The metadata as the database will give it back (``json.loads`` of the stored text)."""
    value = json.loads(text)
    return value if isinstance(value, dict) else {}
