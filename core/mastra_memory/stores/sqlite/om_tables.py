"""The observational-memory table of a SQLite-family file, in either layout (docs/spec.md §4.8).

One table, ``mastra_observational_memory``, with Mastra's columns (:data:`~mastra_memory.storage.OM_COLUMNS`):
this project's embedded layout names them by the record's fields and keeps timestamps as epoch
milliseconds; Mastra's LibSQL layout uses its camelCase names and ISO text, exactly as ``@mastra/libsql``
1.23.1 creates the table (so either side reads the other's rows). Booleans are 0/1, JSON is text.

:class:`SQLiteOMTables` implements the template's five OM hooks over it. A compare-and-set is one
``UPDATE ... WHERE id = ? AND <field> = ?`` whose ``changes()`` says whether it won; the write transaction
(``BEGIN IMMEDIATE``) already keeps other processes out for the unit of work.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar

from ...storage import OM_COLUMNS, MemoryStorage, ObservationalMemoryRecord, OMKey, codec, om_from_values
from ...storage.observational_hooks import GenerationsQuery
from ...storage.observational_records import OM_KINDS, OMColumn

__all__ = ["OM_TABLE", "SQLiteOMTables", "om_schema"]

OM_TABLE = "mastra_observational_memory"

_SQL_TYPES = {"text": "TEXT", "int": "INTEGER", "bool": "INTEGER", "json": "TEXT"}


def _name(column: OMColumn, mastra: bool) -> str:
    return f'"{column.mastra}"' if mastra else column.field


def om_schema(*, mastra: bool) -> tuple[str, ...]:
    """The table and its lookup index: Mastra's DDL (``mastra``) or this project's naming."""
    lines = []
    for column in OM_COLUMNS:
        kind = "TEXT" if column.kind == "time" and mastra else _SQL_TYPES.get(column.kind, "INTEGER")
        extra = " NOT NULL" if not column.nullable else ""
        extra += " PRIMARY KEY" if column.field == "id" else ""
        lines.append(f"  {_name(column, mastra)} {kind}{extra}")
    table = f"CREATE TABLE IF NOT EXISTS {OM_TABLE} (\n" + ",\n".join(lines) + "\n)"
    if mastra:
        index = f'CREATE INDEX IF NOT EXISTS idx_om_lookup_key ON "{OM_TABLE}" ("lookupKey")'
    else:
        index = f"CREATE INDEX IF NOT EXISTS {OM_TABLE}_lookup_idx ON {OM_TABLE} (lookup_key, resource_id)"
    return (table, index)


class SQLiteOMTables(MemoryStorage):
    """The OM hooks over ``mastra_observational_memory``; the subclass says how its layout names columns
    (:meth:`_om_mastra_names`) and stores a timestamp (:meth:`_om_stamp`)."""

    supports_observational_memory: ClassVar[bool] = True

    def _om_mastra_names(self) -> bool:
        """Mastra's camelCase column names (the LibSQL layout) rather than the record's field names."""
        return False

    def _om_stamp(self, value: datetime) -> Any:
        """How this layout stores a timestamp (it must sort as time does)."""
        raise NotImplementedError

    def _om_column(self, field: str) -> str:
        return f'"{codec_camel(field)}"' if self._om_mastra_names() else field

    def _om_encode(self, field: str, value: Any) -> Any:
        if value is None:
            return None
        kind = OM_KINDS[field]
        if kind == "time":
            return self._om_stamp(value)
        if kind == "json":
            return codec.json_text(value, field)
        if kind == "bool":
            return 1 if value else 0
        return value

    def _om_select(self) -> str:
        return f"SELECT {', '.join(self._om_column(c.field) for c in OM_COLUMNS)} FROM {OM_TABLE}"

    def _om_record(self, row: Any) -> ObservationalMemoryRecord:
        values: dict[str, Any] = {}
        for column, value in zip(OM_COLUMNS, row, strict=True):
            if column.kind == "json" and isinstance(value, str | bytes):
                value = json.loads(value)
            values[column.field] = value
        return om_from_values(values)

    async def _om_load(
        self, conn: Any, om_id: str, *, lock: bool = False
    ) -> ObservationalMemoryRecord | None:
        # fetchall: a statement left unfinished would keep the read snapshot open past the unit of work.
        rows = conn.execute(f"{self._om_select()} WHERE id = ?", (om_id,)).fetchall()
        return self._om_record(rows[0]) if rows else None

    async def _om_find_generations(
        self, conn: Any, query: GenerationsQuery
    ) -> list[ObservationalMemoryRecord]:
        col = self._om_column
        where = [f"{col('lookup_key')} = ?", f"{col('resource_id')} = ?"]
        params: list[Any] = [query.key.lookup_key, query.key.resource_id]
        for comparison, bound in query.created:
            where.append(f"{col('created_at')} {comparison} ?")
            params.append(self._om_encode("created_at", bound))
        rows = conn.execute(
            f"{self._om_select()} WHERE {' AND '.join(where)} "
            f"ORDER BY {col('generation_count')} DESC, {col('created_at')} DESC, id DESC LIMIT ? OFFSET ?",
            [*params, -1 if query.limit is None else query.limit, query.offset],
        ).fetchall()
        return [self._om_record(row) for row in rows]

    async def _om_insert(self, conn: Any, values: Mapping[str, Any]) -> bool:
        columns = [c.field for c in OM_COLUMNS]
        conn.execute(
            f"INSERT INTO {OM_TABLE} ({', '.join(self._om_column(c) for c in columns)}) "
            f"VALUES ({', '.join('?' for _ in columns)}) ON CONFLICT(id) DO NOTHING",
            [self._om_encode(c, values[c]) for c in columns],
        )
        inserted: int = conn.execute("SELECT changes()").fetchall()[0][0]
        return inserted > 0

    async def _om_update(
        self, conn: Any, om_id: str, changes: Mapping[str, Any], expect: Mapping[str, Any]
    ) -> bool:
        sets = ", ".join(f"{self._om_column(f)} = ?" for f in changes)
        where = "".join(f" AND {self._om_column(f)} = ?" for f in expect)
        conn.execute(
            f"UPDATE {OM_TABLE} SET {sets} WHERE id = ?{where}",
            [
                *(self._om_encode(f, v) for f, v in changes.items()),
                om_id,
                *(self._om_encode(f, v) for f, v in expect.items()),
            ],
        )
        changed: int = conn.execute("SELECT changes()").fetchall()[0][0]
        return changed > 0

    async def _om_delete(self, conn: Any, key: OMKey) -> None:
        col = self._om_column
        conn.execute(
            f"DELETE FROM {OM_TABLE} WHERE {col('lookup_key')} = ? AND {col('resource_id')} = ?",
            (key.lookup_key, key.resource_id),
        )


def codec_camel(field: str) -> str:
    """Mastra's column name of a record field."""
    return next(c.mastra for c in OM_COLUMNS if c.field == field)
