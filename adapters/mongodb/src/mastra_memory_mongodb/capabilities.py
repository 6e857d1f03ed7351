"""The capability manifests of the MongoDB adapter (docs/spec.md §2.9), one per server dialect.

``MONGODB_CAPABILITIES`` is MongoDB itself (Community, Enterprise, Atlas): every filter is one MQL query
the server runs (:mod:`.translate`); ``$contains`` has no MQL operator and is composed of ``$type``,
``$regex`` and ``$elemMatch`` (so it is declared *emulated*).

``FERRETDB_CAPABILITIES`` is FerretDB v1 (``dialect="ferretdb"``), which speaks the same protocol but
not the same language everywhere (``tests/servers/test_ferretdb.py`` asserts each gap):

* ``$elemMatch`` over documents matches nothing with one field and fails with two (§8.2 #40, #41, #43),
  and there is no ``$expr``, so ``$elemMatch`` and ``$contains`` cannot be sent;
* ``$regex`` runs on Go's RE2, whose ``$`` and case folding are not Python's (docs/spec.md §2.5);
* ``{"a.b": null}`` (and ``$exists``) through a list of scalars or an empty list counts the path as
  missing, where docs/spec.md §2.4 (the reference evaluator, MongoDB's path rules) finds no value;
* on a path through a list of documents, ``$ne``, ``$nin``, a field-level ``$not``, ``$all`` and an
  operator document with several operators are decided per element ("some element differs"), where
  §2.4 negates the whole path (§8.2 #49–#63). ``$eq``, ``$in``, ranges, ``$size`` and ``$nor`` are exact
  there, so the translator sends ``$ne``/``$nin`` as ``$nor`` of ``$eq``/``$in`` (the other forms are
  already ``$nor`` and ``$and`` of single conditions on both dialects): native, and exact.

So on FerretDB those parts of a filter are evaluated by the adapter with the reference evaluator, over the
documents the rest of the filter selects on the server (:class:`.translate.MongoFilter`): they are
declared *emulated*, the answer stays exact, and update/delete by filter select ids that way first
(``emulated``). Nothing is answered differently from the spec.

Both manifests share the deviations: BSON field names are C strings and MongoDB paths cannot address
keys with ``.`` or a leading ``$``, and BSON integers are 64-bit.
"""

from __future__ import annotations

from typing import Final

from mastra_memory.capabilities import AdapterCapabilities, Deviation, StorageCapabilities, int64_range
from mastra_memory.filters.ast import ALL_OPERATORS

__all__ = [
    "ATLAS_MAX_DIMENSION",
    "FERRETDB_CAPABILITIES",
    "MONGODB_CAPABILITIES",
    "UPSERT_BATCH",
    "capabilities_for",
]

#: Atlas Vector Search indexes up to 8,192 dimensions; the exact mode keeps the same limit so that an
#: index can move to Atlas unchanged.
ATLAS_MAX_DIMENSION: Final = 8192
#: Documents per ordered ``bulk_write`` of an upsert (docs/spec.md §3.8); far below the 16 MB message limit
#: at 8,192 float32 dimensions.
UPSERT_BATCH: Final = 500

_DEVIATIONS: Final = (
    Deviation(
        code="nul-character-rejected",
        description="metadata keys and strings containing U+0000 are rejected at upsert "
        "(UPSERT_INVALID_METADATA); nothing is stored",
        reason="BSON field names are NUL-terminated C strings and cannot hold U+0000; strings holding it "
        "are refused as well so that one rule covers all metadata text",
    ),
    int64_range(
        "BSON integers are int32/int64; MongoDB compares int64 and double exactly, so a larger "
        "operand is sent as the double it equals, and one no double equals has no BSON form"
    ),
    Deviation(
        code="mongodb-field-names",
        description="metadata keys that start with '$' or contain '.' are rejected at upsert "
        "(UPSERT_INVALID_METADATA); a filter path segment made only of digits raises "
        "UnsupportedFilterError",
        reason="MongoDB query paths split on '.', read '$' names as operators and a numeric segment as an "
        "array position (docs/spec.md §2.1 reads it as a key), and FerretDB refuses such keys on insert",
    ),
)

_STORAGE: Final = StorageCapabilities(resource_scope=True, list_by_resource=True, clone_thread=True)


def _manifest(*, ferretdb: bool, eventually_consistent: bool) -> AdapterCapabilities:
    emulated = {"$contains"} | ({"$elemMatch", "$regex"} if ferretdb else set())
    return AdapterCapabilities(
        name="mongodb",
        version="1",
        native_operators=ALL_OPERATORS - emulated,
        emulated_operators=frozenset(emulated),
        implicit_array_traversal=True,
        metadata_only_query=True,
        # hnsw: an Atlas Vector Search index (atlas mode); flat: exact search (every mode).
        index_types=frozenset({"hnsw", "flat"}),
        max_dimension=ATLAS_MAX_DIMENSION,
        update_by_filter="emulated" if ferretdb else "native",
        delete_by_filter="emulated" if ferretdb else "native",
        # delete_many, then the upserts: transactions need a replica set, which a single server (and
        # FerretDB) lacks (docs/spec.md §3.1).
        upsert_delete_filter="sequential",
        eventually_consistent=eventually_consistent,
        deviations=_DEVIATIONS,
        storage=_STORAGE,
    )


#: MongoDB with search mode ``atlas`` or ``auto`` (Atlas Search indexes are eventually consistent).
MONGODB_CAPABILITIES: Final = _manifest(ferretdb=False, eventually_consistent=True)
#: MongoDB with search mode ``exact``: every write is visible to the next query.
MONGODB_EXACT_CAPABILITIES: Final = _manifest(ferretdb=False, eventually_consistent=False)
#: FerretDB v1 (``dialect="ferretdb"``): exact search only, some filter parts evaluated by the adapter.
FERRETDB_CAPABILITIES: Final = _manifest(ferretdb=True, eventually_consistent=False)


def capabilities_for(dialect: str, search_mode: str) -> AdapterCapabilities:
    """The manifest of a store with these settings (FerretDB has no Atlas Search: always exact)."""
    if dialect == "ferretdb":
        return FERRETDB_CAPABILITIES
    return MONGODB_EXACT_CAPABILITIES if search_mode == "exact" else MONGODB_CAPABILITIES
