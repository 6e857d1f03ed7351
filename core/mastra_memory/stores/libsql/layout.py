"""Mastra's memory tables, exactly as ``@mastra/libsql`` 1.23.1 creates them (read from ``sqlite_master``
of a file it wrote: tests/interop/test_libsql_storage.py compares them), and how values are encoded there.

* ``mastra_threads ("id", "resourceId", "title", "metadata", "createdAt", "updatedAt")``;
* ``mastra_messages ("id", "thread_id", "content", "role", "type", "createdAt", "resourceId")``;
* ``mastra_resources ("id", "workingMemory", "metadata", "createdAt", "updatedAt")``.

Timestamps are ISO-8601 text with milliseconds and ``Z`` (JavaScript's ``toISOString()``), which sorts as
time does; thread and resource metadata are JSONB blobs (``jsonb(?)`` in, ``json(...)`` out); message
content is JSON text. On a new file the store creates these tables and Mastra's two message indexes; on a
file Mastra wrote it creates nothing (``IF NOT EXISTS``), so the schema stays as Mastra made it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

from ...timestamps import canonical_timestamp
from ..sqlite.om_tables import om_schema
from ..sqlite.tables import TableLayout

__all__ = ["MASTRA_LAYOUT", "SCHEMA", "iso"]

SCHEMA: Final = (
    'CREATE TABLE IF NOT EXISTS mastra_threads (\n  "id" TEXT NOT NULL PRIMARY KEY,\n'
    '  "resourceId" TEXT NOT NULL,\n  "title" TEXT NOT NULL,\n  "metadata" TEXT,\n'
    '  "createdAt" TEXT NOT NULL,\n  "updatedAt" TEXT NOT NULL\n)',
    'CREATE TABLE IF NOT EXISTS mastra_messages (\n  "id" TEXT NOT NULL PRIMARY KEY,\n'
    '  "thread_id" TEXT NOT NULL,\n  "content" TEXT NOT NULL,\n  "role" TEXT NOT NULL,\n'
    '  "type" TEXT NOT NULL,\n  "createdAt" TEXT NOT NULL,\n  "resourceId" TEXT\n)',
    'CREATE TABLE IF NOT EXISTS mastra_resources (\n  "id" TEXT NOT NULL PRIMARY KEY,\n'
    '  "workingMemory" TEXT,\n  "metadata" TEXT,\n  "createdAt" TEXT NOT NULL,\n'
    '  "updatedAt" TEXT NOT NULL\n)',
    'CREATE INDEX IF NOT EXISTS idx_messages_thread_created_at ON mastra_messages (thread_id, "createdAt")',
    "CREATE INDEX IF NOT EXISTS idx_messages_thread_resource_created_at "
    'ON mastra_messages (thread_id, "resourceId", "createdAt")',
    # Mastra's observational-memory table and its lookup index (docs/spec.md §4.8).
    *om_schema(mastra=True),
)


def iso(value: datetime) -> str:
    """A timestamp as Mastra stores it: ``2026-01-02T03:04:05.678Z`` (``Date.toISOString()``)."""
    return canonical_timestamp(value)


#: The statements over these tables (:mod:`..sqlite.tables`): Mastra's camelCase columns, ISO text
#: timestamps, JSONB metadata written with ``jsonb(?)`` and read back as JSON text with ``json(...)``.
#: The template applies a §4.6 metadata filter itself (no SQL narrowing over JSONB).
MASTRA_LAYOUT: Final = TableLayout(
    name="mastra",
    schema=SCHEMA,
    timestamp=iso,
    renamed={
        "resource_id": '"resourceId"',
        "created_at": '"createdAt"',
        "updated_at": '"updatedAt"',
        "working_memory": '"workingMemory"',
    },
    metadata_in="jsonb(?)",
    metadata_out="json(metadata)",
)
