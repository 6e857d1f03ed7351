"""The capability manifest of the dict store: read by the conformance kit, rendered by the docs."""

from __future__ import annotations

from mastra_memory.capabilities import AdapterCapabilities, Deviation

from . import __version__

#: The operators the translator compiles. Anything else (``$regex``, ``$contains``, ``$elemMatch``,
#: ``$size``, ``$all``) is rejected with ``UnsupportedFilterError`` by the ``FilterTranslator`` base.
OPERATORS = frozenset(
    {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$and", "$or", "$not", "$nor", "$exists"}
)

EXISTS_EMPTY_LIST = Deviation(
    code="exists-empty-list",
    description="$exists treats an empty list as absent: {f: {$exists: true}} does not match f = []",
    reason="the example mirrors backends such as Qdrant whose emptiness test cannot tell [] from a missing "
    "key, so that the conformance kit's check of a declared deviation can be seen at work",
)

CAPABILITIES = AdapterCapabilities(
    name="dictstore",
    version=__version__,
    native_operators=OPERATORS,
    implicit_array_traversal=True,
    metadata_only_query=True,
    metrics=frozenset({"cosine", "euclidean", "dotproduct"}),
    index_types=frozenset({"flat"}),
    update_by_filter="native",
    delete_by_filter="native",
    # No hook to write: the template deletes by filter, then upserts (two steps, not atomic).
    upsert_delete_filter="sequential",
    deviations=(EXISTS_EMPTY_LIST,),
)
