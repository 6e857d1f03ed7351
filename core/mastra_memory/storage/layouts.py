"""The two layouts of the memory tables (or collections) a storage may find, and the error that refuses the
other one before any write (docs/spec.md §4.7).

Every storage that can work on Mastra's own tables as well as this project's (the embedded SQLite and
``libsql`` stores, pgvector, MongoDB) names them ``mastra_threads``, ``mastra_messages`` and
``mastra_resources`` in both layouts, tells them apart by the same field names, and refuses the other
layout with the same sentence: what it found, that nothing was written, how to open it, how to convert it.
The rule lives here once; each store says how its own place is named, opened and converted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

from ..errors import StorageError

__all__ = [
    "MASTRA_ONLY_TABLE",
    "MEMORY_TABLES",
    "Layout",
    "StorageLayoutError",
    "layout_of_fields",
    "layout_setting",
    "wrong_layout",
]

Layout = Literal["mastra-memory", "mastra"]

#: The three memory tables (collections) both layouts name alike.
MEMORY_TABLES: Final = ("mastra_threads", "mastra_messages", "mastra_resources")
#: A table (collection) only Mastra's stores create, before or beside their memory tables: a place
#: holding it is Mastra's even before a thread exists.
MASTRA_ONLY_TABLE: Final = "mastra_workflow_snapshot"

# Fields (columns) only one layout has; a table or document with either set tells its layout.
_MASTRA_FIELDS: Final = frozenset({"resourceId", "createdAt", "updatedAt", "workingMemory"})
_OWN_FIELDS: Final = frozenset({"resource_id", "created_at", "updated_at", "working_memory"})


class StorageLayoutError(StorageError):
    """The place holds the other layout of the memory tables; nothing was written (docs/spec.md §4.7).

    ``details`` has where the store looked (``path``, or ``database``/``schema`` and ``where``), ``found``
    and ``expected`` (``"mastra-memory"`` or ``"mastra"``).
    """

    default_category = "USER"


def layout_of_fields(fields: set[str]) -> Layout | None:
    """The layout a memory table with these columns (or a document with these fields) belongs to, or
    ``None`` when they tell neither."""
    if fields & _MASTRA_FIELDS:
        return "mastra"
    if fields & _OWN_FIELDS:
        return "mastra-memory"
    return None


def layout_setting(settings: str, store: str, layout: Layout) -> str:
    """How to open a place of ``layout`` with an adapter's ``layout`` setting, for :func:`wrong_layout`."""
    return f"layout={layout!r} ({settings}(layout={layout!r}) or MASTRA_MEMORY_{store}_LAYOUT={layout})"


def wrong_layout(
    store: str,
    where: str,
    found: Layout,
    expected: Layout,
    *,
    descriptions: Mapping[Layout, str],
    open_with: str,
    convert: str,
    details: Mapping[str, object],
) -> StorageLayoutError:
    """The :class:`StorageLayoutError` (id ``MASTRA_STORAGE_<STORE>_INIT_WRONG_LAYOUT``) of a store that
    found ``found`` at ``where`` but works on ``expected``.

    ``descriptions`` says what each layout is in this store, ``open_with`` how to open the place as it is,
    ``convert`` how to convert it (a clause starting "convert it"); ``details`` names the place.
    """
    return StorageLayoutError(
        f"{where} holds {descriptions[found]}, not {descriptions[expected]}; nothing was written. Open it "
        f"with {open_with}, or {convert} (docs/sharing-memory-with-mastra.md, 'Converting').",
        id=f"MASTRA_STORAGE_{store}_INIT_WRONG_LAYOUT",
        details={**details, "found": found, "expected": expected},
    )
