"""Thread listing narrows by metadata in SQL, and the §4.6 rule still decides (docs/spec.md §4.4, §4.6).

``metadata_fragments`` turns the filter's booleans, nulls and ASCII strings into LIKE patterns over the
stored JSON text; archived threads are found that way instead of reading every thread of the resource.
The listing must stay exactly what the rule says for values the patterns do not cover (numbers stored as
``2`` or ``2.0``, non-ASCII text) and for LIKE's own special characters.
"""

from __future__ import annotations

from mastra_memory_pgvector.storage import PgStorage, metadata_fragments


def test_only_values_spelled_one_way_become_patterns() -> None:
    assert metadata_fragments({"archived": True}) == ['%"archived":true%']
    assert metadata_fragments({"team": None}) == ['%"team":null%']
    assert metadata_fragments({"tag": "50%_off\\"}) == ['%"tag":"50\\%\\_off\\\\\\\\"%']
    assert metadata_fragments({"n": 2, "x": 2.5, "name": "Zoë"}) == []
    assert metadata_fragments(None) == []


async def test_listing_is_exact_with_and_without_patterns(storage: PgStorage) -> None:
    resource = "narrowing-resource"
    metadata = {
        "narrow-t1": {"tag": "50%_off", "n": 2, "name": "Zoë"},
        "narrow-t2": {"tag": "50xyoff", "n": 2.0, "name": "Zoe"},
        "narrow-t3": {"tag": "50%_off", "n": 3, "nested": {"archived": True}},
        "narrow-t4": {"tag": "50%_off", "archived": True},
    }
    for thread_id, meta in metadata.items():
        await storage.save_thread(
            {"id": thread_id, "resource_id": resource, "title": thread_id, "metadata": meta}
        )
    await storage.archive_thread("narrow-t4", resource_id=resource)

    async def listed(**kwargs: object) -> list[str]:
        page = await storage.list_threads(filter={"resource_id": resource, **kwargs}, per_page=False)
        return sorted(t.id for t in page.threads)

    # LIKE's % and _ in a value are literal: "50xyoff" does not match "50%_off".
    assert await listed(metadata={"tag": "50%_off"}) == ["narrow-t1", "narrow-t3"]
    # Numbers are left to the rule: 2 equals 2.0.
    assert await listed(metadata={"n": 2}) == ["narrow-t1", "narrow-t2"]
    assert await listed(metadata={"name": "Zoë"}) == ["narrow-t1"]
    # A nested "archived": true matches the pattern but not the rule: t3 is listed, t4 is archived.
    assert await listed() == ["narrow-t1", "narrow-t2", "narrow-t3"]
    page = await storage.list_threads(filter={"resource_id": resource}, per_page=False, include_archived=True)
    assert sorted(t.id for t in page.threads) == ["narrow-t1", "narrow-t2", "narrow-t3", "narrow-t4"]
    assert page.total == 4
