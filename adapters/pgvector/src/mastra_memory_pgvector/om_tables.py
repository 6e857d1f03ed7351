"""Observational memory in PostgreSQL: the ``mastra_observational_memory`` table of either layout and the
template's five OM hooks over it (docs/spec.md §4.8).

* ``mastra-memory``: the record's fields as columns (ids ``text COLLATE "C"``, timestamps
  ``timestamptz(3)``, config, metadata, chunks and id lists as JSON *text*, as this layout keeps every
  document, since jsonb cannot hold U+0000).
* ``mastra``: exactly the table ``@mastra/pg`` 1.27.1 creates (read from ``information_schema`` of a schema
  its ``PostgresStore.init()`` made): camelCase columns, ``config`` JSON text, id lists, chunks and
  metadata ``jsonb``, every timestamp twice (``"createdAt" timestamp`` in UTC wall time and its mirror
  ``"createdAtZ" timestamptz``, which Mastra reads; ``"lastBufferedAtTime"`` is read from the plain column
  as Mastra does, its mirror defaults to ``now()``), and the index ``idx_om_lookup_key``.

A compare-and-set is one ``UPDATE ... WHERE id = %s AND <column> = %s``; its row count says who won.
Read-modify-writes read the row ``FOR UPDATE``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC
from typing import Any, Final

from mastra_memory.storage import OM_COLUMNS, MemoryStorage, ObservationalMemoryRecord, OMKey, codec
from mastra_memory.storage.observational_hooks import GenerationsQuery
from mastra_memory.storage.observational_records import OM_KINDS, om_from_values

from .connection import Connection

__all__ = ["OM_TABLE", "PgOMTables", "om_ddl"]

OM_TABLE: Final = "mastra_observational_memory"

#: Mastra's jsonb columns (its ``config`` is text).
_MASTRA_JSONB: Final = frozenset(
    {"observed_message_ids", "buffered_message_ids", "buffered_observation_chunks", "metadata"}
)
#: Timestamps Mastra reads from the plain column (the mirror of this one defaults to ``now()``).
_PLAIN_READ: Final = frozenset({"last_buffered_at_time"})
_OWN_TYPES: Final = {
    "text": "text",
    "int": "bigint",
    "bool": "boolean",
    "time": "timestamptz(3)",
    "json": "text",
}
_MASTRA_TYPES: Final = {
    "text": "TEXT",
    "int": "INTEGER",
    "bool": "BOOLEAN",
    "time": "TIMESTAMP",
    "json": "TEXT",
}
_KEYS: Final = frozenset({"id", "lookup_key", "resource_id", "thread_id"})


def om_ddl(table: str, *, mastra: bool) -> list[str]:
    """The table (``table`` is schema-qualified and quoted) and its lookup index, in either layout."""
    lines = []
    for column in OM_COLUMNS:
        if mastra:
            kind = "JSONB" if column.field in _MASTRA_JSONB else _MASTRA_TYPES[column.kind]
            key = " PRIMARY KEY" if column.field == "id" else ""
            lines.append(f'"{column.mastra}" {kind}{key}{"" if column.nullable else " NOT NULL"}')
        else:
            kind = _OWN_TYPES[column.kind] + (' COLLATE "C"' if column.field in _KEYS else "")
            key = " PRIMARY KEY" if column.field == "id" else ""
            lines.append(f"{column.field} {kind}{key}{'' if column.nullable else ' NOT NULL'}")
    if mastra:
        lines += [f'"{c.mastra}Z" TIMESTAMPTZ DEFAULT NOW()' for c in OM_COLUMNS if c.kind == "time"]
        index = f'CREATE INDEX IF NOT EXISTS idx_om_lookup_key ON {table} ("lookupKey")'
    else:
        index = f"CREATE INDEX IF NOT EXISTS mastra_om_lookup_idx ON {table} (lookup_key, resource_id)"
    body = ",\n            ".join(lines)
    return [f"CREATE TABLE IF NOT EXISTS {table} (\n            {body})", index]


class PgOMTables(MemoryStorage):
    """The OM hooks in SQL; :class:`~.storage.PgStorage` gives the table and the layout."""

    supports_observational_memory = True

    def _om_table(self) -> str:
        raise NotImplementedError

    def _om_mastra(self) -> bool:
        raise NotImplementedError

    # -- columns

    def _om_read(self, field: str) -> str:
        """The expression that reads a field (timestamps as timestamptz, JSON as text)."""
        if not self._om_mastra():
            return field
        column = next(c for c in OM_COLUMNS if c.field == field)
        name = f'"{column.mastra}"'
        if column.kind == "time":
            plain = f"{name} AT TIME ZONE 'UTC'"
            return plain if field in _PLAIN_READ else f'COALESCE("{column.mastra}Z", {plain})'
        if field in _MASTRA_JSONB:
            return f"{name}::text"
        return name

    def _om_writes(self, field: str, value: Any) -> list[tuple[str, str, Any]]:
        """``(column, placeholder, parameter)`` for writing a field (two columns for a Mastra timestamp)."""
        kind = OM_KINDS[field]
        if kind == "json" and value is not None:
            value = codec.json_text(value, field)
        if not self._om_mastra():
            return [(field, "%s", value)]
        name = next(c.mastra for c in OM_COLUMNS if c.field == field)
        if kind == "time":
            naive = None if value is None else value.astimezone(UTC).replace(tzinfo=None)
            return [(f'"{name}"', "%s", naive), (f'"{name}Z"', "%s", value)]
        return [(f'"{name}"', "%s::jsonb" if field in _MASTRA_JSONB else "%s", value)]

    def _om_select(self) -> str:
        return f"SELECT {', '.join(self._om_read(c.field) for c in OM_COLUMNS)} FROM {self._om_table()}"

    def _om_record(self, row: Any) -> ObservationalMemoryRecord:
        values: dict[str, Any] = {}
        for column, value in zip(OM_COLUMNS, row, strict=True):
            if column.kind == "json" and isinstance(value, str):
                value = json.loads(value)
            values[column.field] = value
        return om_from_values(values)

    def _om_col(self, field: str) -> str:
        return self._om_writes(field, None)[-1][0]

    # -- hooks

    async def _om_load(
        self, conn: Connection, om_id: str, *, lock: bool = False
    ) -> ObservationalMemoryRecord | None:
        if not self._existing([om_id]):
            return None
        cursor = await conn.execute(
            f"{self._om_select()} WHERE id = %s" + (" FOR UPDATE" if lock else ""), (om_id,)
        )
        row = await cursor.fetchone()
        return None if row is None else self._om_record(row)

    async def _om_find_generations(
        self, conn: Connection, query: GenerationsQuery
    ) -> list[ObservationalMemoryRecord]:
        created = self._om_read("created_at")
        where = [f"{self._om_col('lookup_key')} = %s", f"{self._om_col('resource_id')} = %s"]
        params: list[Any] = [query.key.lookup_key, query.key.resource_id]
        for comparison, bound in query.created:
            where.append(f"{created} {comparison} %s")
            params.append(bound)
        generation = self._om_col("generation_count")
        cursor = await conn.execute(
            f"{self._om_select()} WHERE {' AND '.join(where)} "
            f"ORDER BY {generation} DESC, {created} DESC, id DESC LIMIT %s OFFSET %s",
            [*params, query.limit, query.offset],
        )
        return [self._om_record(row) for row in await cursor.fetchall()]

    async def _om_insert(self, conn: Connection, values: Mapping[str, Any]) -> bool:
        writes = [w for c in OM_COLUMNS for w in self._om_writes(c.field, values[c.field])]
        cursor = await conn.execute(
            f"INSERT INTO {self._om_table()} ({', '.join(w[0] for w in writes)}) "
            f"VALUES ({', '.join(w[1] for w in writes)}) ON CONFLICT (id) DO NOTHING",
            [w[2] for w in writes],
        )
        return cursor.rowcount > 0

    async def _om_update(
        self, conn: Connection, om_id: str, changes: Mapping[str, Any], expect: Mapping[str, Any]
    ) -> bool:
        if not self._existing([om_id]):
            return False
        writes = [w for field, value in changes.items() for w in self._om_writes(field, value)]
        conditions = []
        params = [w[2] for w in writes] + [om_id]
        for field, value in expect.items():
            # The column a timestamp is read from decides (the mirror in Mastra's layout).
            column, _, parameter = self._om_writes(field, value)[-1]
            conditions.append(f" AND {column} = %s")
            params.append(parameter)
        cursor = await conn.execute(
            f"UPDATE {self._om_table()} SET {', '.join(f'{w[0]} = {w[1]}' for w in writes)} "
            f"WHERE id = %s{''.join(conditions)}",
            params,
        )
        return cursor.rowcount > 0

    async def _om_delete(self, conn: Connection, key: OMKey) -> None:
        if len(self._existing([key.lookup_key, key.resource_id])) < 2:
            return
        await conn.execute(
            f"DELETE FROM {self._om_table()} WHERE {self._om_col('lookup_key')} = %s "
            f"AND {self._om_col('resource_id')} = %s",
            (key.lookup_key, key.resource_id),
        )
