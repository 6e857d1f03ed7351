"""The lexical index beside a vector store, for hybrid recall (``semanticRecall.mode``: ``"hybrid"``, and
``"auto"``, the default, wherever a store has one).

A vector store that declares ``lexical_search`` in its capability manifest (docs/spec.md §2.9) has one:
it offers ``lexical_index()`` returning a :class:`LexicalIndex` (the embedded SQLite store's FTS5 side lives
in :mod:`mastra_memory.stores.sqlite.lexical`). The indexer writes each vector's text
and metadata there beside the vector and deletes them with it; the search runs the same filter (tenant
scope and ``semanticRecall.filter``) on both sides.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Generic, Protocol, TypeVar, runtime_checkable

from ...errors import CapabilityError, MastraMemoryError
from ...filters.ast import Node
from ...vector import MastraVector

#: At most this many distinct words of a query are searched (a pasted document stays a bounded query).
MAX_TERMS: Final = 64
_WORD: Final = re.compile(r"\w+")


def query_words(text: str) -> list[str]:
    """The distinct words (``\\w+``) of ``text``, lowercased, in order, at most ``MAX_TERMS``.

    Every lexical index searches these and nothing else of the user's text, so no query syntax of the
    engine underneath (FTS5, tsquery, a query DSL) is ever reached.
    """
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        seen.setdefault(word, None)
        if len(seen) >= MAX_TERMS:
            break
    return list(seen)


@runtime_checkable
class LexicalHitLike(Protocol):
    """What a lexical search returns per row: the vector id, a score (higher is better), the metadata."""

    @property
    def id(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def metadata(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class LexicalHit:
    """One row a lexical search found: its id, its score (higher is better) and its metadata."""

    id: str
    score: float
    metadata: dict[str, Any]


@runtime_checkable
class LexicalIndex(Protocol):
    """A full-text index keyed like the vector index it sits beside."""

    async def upsert(
        self, index: str, ids: Sequence[str], texts: Sequence[str], metadata: Sequence[Mapping[str, Any]]
    ) -> None:
        """Insert or replace one row per id."""
        ...

    async def delete(self, index: str, flt: Node) -> int:
        """Delete the rows the filter matches."""
        ...

    async def search(
        self, index: str, query: str, *, top_k: int, flt: Node | None
    ) -> Sequence[LexicalHitLike]:
        """The best ``top_k`` rows for ``query`` among those the filter keeps, best first."""
        ...


V = TypeVar("V", bound=MastraVector)


class StoreLexicalIndex(Generic[V]):
    """The base of a vector store's own lexical index (what its ``lexical_index()`` returns): it holds the
    store weakly and reaches it through :meth:`_store`.

    ``store_name`` names the store in the error raised once the store is gone.
    """

    store_name: ClassVar[str]

    def __init__(self, vector: V) -> None:
        # Weak: the core keeps one lexical index per store in a WeakKeyDictionary keyed by the store.
        self._vector = weakref.ref(vector)

    def _store(self) -> V:
        vector = self._vector()
        if vector is None:
            raise MastraMemoryError(
                f"the {self.store_name} store of this lexical index was garbage-collected"
            )
        return vector


_INDEXES: weakref.WeakKeyDictionary[MastraVector, LexicalIndex] = weakref.WeakKeyDictionary()


def supports_lexical(vector: MastraVector) -> bool:
    """Whether the store's manifest declares a lexical index (``lexical_search``)."""
    capabilities = getattr(vector, "capabilities", None)
    return bool(getattr(capabilities, "lexical_search", False))


def lexical_index_for(vector: MastraVector) -> LexicalIndex | None:
    """The lexical index beside ``vector`` (one per store object), or None when it declares none."""
    if not supports_lexical(vector):
        return None
    found = _INDEXES.get(vector)
    if found is not None:
        return found
    provider = getattr(vector, "lexical_index", None)
    if not callable(provider):
        return None
    index: LexicalIndex = provider()
    _INDEXES[vector] = index
    return index


def shares_mastra_layout(vector: MastraVector) -> bool:
    """Whether ``vector`` works on Mastra's own tables (``layout="mastra"``, docs/spec.md §4.7), where
    Mastra writes vectors too and ranks by them alone."""
    return getattr(getattr(vector, "settings", None), "layout", None) == "mastra"


def resolve_mode(vector: MastraVector, mode: str) -> str:
    """The mode a recall runs in: ``"auto"`` is ``"hybrid"`` where the store's manifest declares a lexical
    index that holds every write, ``"vector"`` elsewhere (an SQLite ``:memory:`` database included) and on
    Mastra's layout (docs/spec.md §5.3 step 7, [Δ]); ``"vector"`` and ``"hybrid"`` are kept as given
    (``"hybrid"`` without a lexical index is refused by :func:`require_lexical`).

    Mastra's layout stays on vectors because Mastra writes there too: its messages never reach our
    lexical rows, and its recall ranks by vectors, so vectors alone keep both sides' recall identical on
    shared data.
    """
    if mode != "auto":
        return mode
    # A lexical index that misses some of the store's vectors (SQLite :memory:) would rank by a part.
    complete = getattr(vector, "lexical_holds_every_write", True)
    return (
        "hybrid" if supports_lexical(vector) and complete and not shares_mastra_layout(vector) else "vector"
    )


def require_lexical(vector: MastraVector) -> LexicalIndex:
    """The lexical index for a hybrid recall, or :class:`CapabilityError` (before any I/O) when the store
    has none."""
    index = lexical_index_for(vector)
    if index is None:
        name = getattr(getattr(vector, "capabilities", None), "name", type(vector).__name__)
        raise CapabilityError(
            f"semanticRecall.mode 'hybrid' needs a lexical index beside the vectors, and the {name!r} vector "
            "store has none (its capability manifest does not declare lexical_search); use mode 'vector' "
            "or a store that has one (the embedded SQLite store does)",
            details={"store": name, "mode": "hybrid"},
        )
    return index
