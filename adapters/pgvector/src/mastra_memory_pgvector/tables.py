"""The two table layouts :class:`~.storage.PgStorage` can work on, and the read-only check of which one a
schema holds (docs/spec.md §4.7).

* ``mastra-memory`` (the default): this project's own tables -- ``resource_id``, ``created_at`` and
  ``updated_at`` as ``timestamptz(3)``, ``working_memory``, metadata as JSON *text* (jsonb cannot hold
  U+0000), a ``metadata`` column on messages for filtered listing.
* ``mastra``: the tables ``@mastra/pg`` 1.27.1 creates and uses (read from ``information_schema`` of a
  schema its ``PostgresStore.init()`` made; tests/interop/test_pg_storage.py compares them), so that a
  Mastra app and a Python service share one database. Columns ``"resourceId"``, ``"workingMemory"``;
  every timestamp twice, ``"createdAt" timestamp`` (UTC wall-clock time) and its mirror ``"createdAtZ"
  timestamptz`` (which Mastra reads first, falling back to the other); thread and resource metadata
  ``jsonb``; message content JSON text; no metadata column on messages.

Both name their tables ``mastra_threads``, ``mastra_messages`` and ``mastra_resources``, so a storage
opened on the other layout would pass over them with ``CREATE TABLE IF NOT EXISTS`` and fail on its first
query, or worse, add its indexes to the other side's tables. :func:`check_schema` tells the layout from the
catalog before the storage creates anything and raises :class:`StorageLayoutError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from mastra_memory.storage import codec
from mastra_memory.storage.layouts import (
    MASTRA_ONLY_TABLE,
    MEMORY_TABLES,
    Layout,
    StorageLayoutError,
    layout_of_fields,
    layout_setting,
    wrong_layout,
)

from .connection import Connection

__all__ = [
    "MASTRA",
    "OWN",
    "Layout",
    "StorageLayoutError",
    "TableLayout",
    "check_schema",
    "pgvector_wrong_layout",
    "schema_layout",
]

#: What each layout is, for error messages.
DESCRIPTIONS: Final[dict[Layout, str]] = {
    "mastra-memory": "mastra-memory's own PostgreSQL layout (columns resource_id, created_at, "
    "working_memory)",
    "mastra": 'Mastra\'s PostgreSQL layout (@mastra/pg: columns "resourceId", "createdAt"/"createdAtZ", '
    '"workingMemory")',
}


# Columns of this project's layout, named as the records' fields.
_THREAD_FIELDS: Final = codec.THREAD_COLUMNS
_MESSAGE_FIELDS: Final = (*codec.MESSAGE_COLUMNS, "metadata")
_RESOURCE_FIELDS: Final = codec.RESOURCE_COLUMNS


# Mastra's saveResource stores metadata as a jsonb *string* holding JSON text (it encodes it twice), its
# updateResource and saveThread as a jsonb object; Mastra reads both, and so does this.
_METADATA: Final = (
    "CASE WHEN jsonb_typeof(metadata) = 'string' THEN metadata #>> '{}' ELSE metadata::text END"
)


def _created(prefix: str = "") -> str:
    # Mastra reads the timezone-aware mirror first and falls back to the plain column (UTC wall time).
    return f'COALESCE({prefix}"createdAtZ", {prefix}"createdAt" AT TIME ZONE \'UTC\')'


@dataclass(frozen=True)
class TableLayout:
    """The SQL that differs between the layouts; the storage's queries are built from these pieces.

    Column lists are in the order of ``mastra_memory.storage.codec``'s ``*_COLUMNS``, so the codec reads
    every row the same way whichever layout it came from.
    """

    name: Layout
    thread_columns: str
    message_columns: str
    resource_columns: str
    #: Expressions of the sortable fields.
    resource_id: str
    created_at: str
    updated_at: str
    #: ``ORDER BY``/row-comparison form of the id (code-point order, docs/spec.md §4.3).
    id_order: str
    #: How a metadata parameter is written (``%s`` or ``%s::jsonb``).
    metadata_param: str
    #: Whether messages have a metadata column of their own.
    message_metadata_column: bool

    def thread_upsert(self, table: str) -> str:
        """``INSERT ... ON CONFLICT`` of a thread; named parameters as the record's fields."""
        if self.name == "mastra-memory":
            return _upsert(table, _THREAD_FIELDS, [f"%({c})s" for c in _THREAD_FIELDS])
        return _upsert(
            table,
            (
                "id",
                '"resourceId"',
                "title",
                "metadata",
                '"createdAt"',
                '"createdAtZ"',
                '"updatedAt"',
                '"updatedAtZ"',
            ),
            ["%(id)s", "%(resource_id)s", "%(title)s", "%(metadata)s::jsonb"]
            + ["%(created_at)s"] * 2
            + ["%(updated_at)s"] * 2,
        )

    def message_upsert(self, table: str) -> str:
        """``INSERT ... ON CONFLICT`` of a message; named parameters as the record's fields (and
        ``content``, ``metadata``)."""
        if self.name == "mastra-memory":
            return _upsert(table, _MESSAGE_FIELDS, [f"%({c})s" for c in _MESSAGE_FIELDS])
        return _upsert(
            table,
            ("id", "thread_id", '"resourceId"', "role", "type", "content", '"createdAt"', '"createdAtZ"'),
            ["%(id)s", "%(thread_id)s", "%(resource_id)s", "%(role)s", "%(type)s", "%(content)s"]
            + ["%(created_at)s"] * 2,
        )

    def resource_upsert(self, table: str) -> str:
        """``INSERT ... ON CONFLICT`` of a resource; named parameters as the record's fields."""
        if self.name == "mastra-memory":
            return _upsert(table, _RESOURCE_FIELDS, [f"%({c})s" for c in _RESOURCE_FIELDS])
        return _upsert(
            table,
            (
                "id",
                '"workingMemory"',
                "metadata",
                '"createdAt"',
                '"createdAtZ"',
                '"updatedAt"',
                '"updatedAtZ"',
            ),
            ["%(id)s", "%(working_memory)s", "%(metadata)s::jsonb"]
            + ["%(created_at)s"] * 2
            + ["%(updated_at)s"] * 2,
        )

    def ddl(self, schema: str, schema_name: str) -> list[str]:
        """The statements creating the memory tables in ``schema`` (quoted; ``schema_name`` unquoted)."""
        return _own_ddl(schema) if self.name == "mastra-memory" else _mastra_ddl(schema, schema_name)


def _upsert(table: str, columns: tuple[str, ...], placeholders: list[str]) -> str:
    """Insert a row, or replace the columns other than ``id`` of the row with that id."""
    updates = ", ".join(f"{column} = EXCLUDED.{column}" for column in columns[1:])
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(placeholders)}) "
        f"ON CONFLICT (id) DO UPDATE SET {updates}"
    )


def _own_ddl(schema: str) -> list[str]:
    threads, messages, resources = (f"{schema}.{table}" for table in MEMORY_TABLES)
    return [
        f"""CREATE TABLE IF NOT EXISTS {threads} (
            id text COLLATE "C" PRIMARY KEY,
            resource_id text COLLATE "C" NOT NULL,
            title text NOT NULL DEFAULT '',
            metadata text,
            created_at timestamptz(3) NOT NULL,
            updated_at timestamptz(3) NOT NULL)""",
        f"CREATE INDEX IF NOT EXISTS mastra_threads_resource_idx ON {threads} (resource_id, created_at, id)",
        f"""CREATE TABLE IF NOT EXISTS {messages} (
            id text COLLATE "C" PRIMARY KEY,
            thread_id text COLLATE "C" NOT NULL,
            resource_id text COLLATE "C",
            role text NOT NULL,
            type text NOT NULL,
            content text NOT NULL,
            metadata text,
            created_at timestamptz(3) NOT NULL)""",
        f"CREATE INDEX IF NOT EXISTS mastra_messages_thread_idx ON {messages} (thread_id, created_at, id)",
        f"CREATE INDEX IF NOT EXISTS mastra_messages_resource_idx ON {messages} "
        "(resource_id, created_at, id)",
        f"""CREATE TABLE IF NOT EXISTS {resources} (
            id text COLLATE "C" PRIMARY KEY,
            working_memory text,
            metadata text,
            created_at timestamptz(3) NOT NULL,
            updated_at timestamptz(3) NOT NULL)""",
    ]


def _index_prefix(schema_name: str) -> str:
    """The prefix @mastra/pg gives its index names in a schema other than ``public``."""
    if schema_name == "public":
        return ""
    sanitized = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in schema_name)
    return f"_{sanitized}_" if sanitized[:1].isdigit() else f"{sanitized}_"


def _mastra_ddl(schema: str, schema_name: str) -> list[str]:
    # Exactly @mastra/pg 1.27.1's tables and default indexes (its exportSchemas()); on a schema Mastra
    # made, every statement is a no-op, so its schema stays as it is.
    threads, messages, resources = (f"{schema}.{table}" for table in MEMORY_TABLES)
    prefix = _index_prefix(schema_name)
    return [
        f"""CREATE TABLE IF NOT EXISTS {threads} (
            "id" TEXT PRIMARY KEY NOT NULL,
            "resourceId" TEXT NOT NULL,
            "title" TEXT NOT NULL,
            "metadata" JSONB,
            "createdAt" TIMESTAMP NOT NULL,
            "updatedAt" TIMESTAMP NOT NULL,
            "createdAtZ" TIMESTAMPTZ DEFAULT NOW(),
            "updatedAtZ" TIMESTAMPTZ DEFAULT NOW())""",
        f"""CREATE TABLE IF NOT EXISTS {messages} (
            "id" TEXT PRIMARY KEY NOT NULL,
            "thread_id" TEXT NOT NULL,
            "content" TEXT NOT NULL,
            "role" TEXT NOT NULL,
            "type" TEXT NOT NULL,
            "createdAt" TIMESTAMP NOT NULL,
            "resourceId" TEXT,
            "createdAtZ" TIMESTAMPTZ DEFAULT NOW())""",
        f"""CREATE TABLE IF NOT EXISTS {resources} (
            "id" TEXT PRIMARY KEY NOT NULL,
            "workingMemory" TEXT,
            "metadata" JSONB,
            "createdAt" TIMESTAMP NOT NULL,
            "updatedAt" TIMESTAMP NOT NULL,
            "createdAtZ" TIMESTAMPTZ DEFAULT NOW(),
            "updatedAtZ" TIMESTAMPTZ DEFAULT NOW())""",
        f'CREATE INDEX IF NOT EXISTS "{prefix}mastra_threads_resourceid_createdat_idx" ON {threads} '
        '("resourceId", "createdAt" DESC)',
        f'CREATE INDEX IF NOT EXISTS "{prefix}mastra_messages_thread_id_createdat_idx" ON {messages} '
        '("thread_id", "createdAt" DESC)',
    ]


OWN: Final = TableLayout(
    name="mastra-memory",
    resource_id="resource_id",
    created_at="created_at",
    updated_at="updated_at",
    thread_columns=", ".join(codec.THREAD_COLUMNS),
    message_columns=", ".join(codec.MESSAGE_COLUMNS),
    resource_columns=", ".join(codec.RESOURCE_COLUMNS),
    id_order="id",
    metadata_param="%s",
    message_metadata_column=True,
)

MASTRA: Final = TableLayout(
    name="mastra",
    thread_columns=f'id, "resourceId", title, {_METADATA}, {_created()}, '
    'COALESCE("updatedAtZ", "updatedAt" AT TIME ZONE \'UTC\')',
    message_columns=f'id, thread_id, "resourceId", role, type, content, {_created()}',
    resource_columns=f'id, "workingMemory", {_METADATA}, {_created()}, '
    'COALESCE("updatedAtZ", "updatedAt" AT TIME ZONE \'UTC\')',
    resource_id='"resourceId"',
    created_at=_created(),
    updated_at='COALESCE("updatedAtZ", "updatedAt" AT TIME ZONE \'UTC\')',
    # Mastra's id columns have the database's default collation; the spec's order is by code points.
    id_order='id COLLATE "C"',
    metadata_param="%s::jsonb",
    message_metadata_column=False,
)

LAYOUTS: Final[dict[Layout, TableLayout]] = {"mastra-memory": OWN, "mastra": MASTRA}


async def schema_layout(conn: Connection, schema_name: str) -> Layout | None:
    """The layout of the memory tables in ``schema_name``: ``None`` when it has none of them (nor
    Mastra's workflow table). Reads the catalog only."""
    cursor = await conn.execute(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = %s "
        "AND table_name = ANY(%s::text[])",
        (schema_name, list(MEMORY_TABLES)),
    )
    columns: dict[str, set[str]] = {}
    for table, column in await cursor.fetchall():
        columns.setdefault(table, set()).add(column)
    for table in MEMORY_TABLES:
        found = layout_of_fields(columns.get(table, set()))
        if found is not None:
            return found
    cursor = await conn.execute(
        "SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = %s",
        (schema_name, MASTRA_ONLY_TABLE),
    )
    return "mastra" if await cursor.fetchone() else None


def pgvector_wrong_layout(
    place: str,
    found: Layout,
    expected: Layout,
    descriptions: dict[Layout, str],
    convert: str,
    **details: object,
) -> StorageLayoutError:
    """:func:`~mastra_memory.storage.layouts.wrong_layout` of this adapter (id
    ``MASTRA_STORAGE_PGVECTOR_INIT_WRONG_LAYOUT``; the place opens as it is with the ``layout`` setting of
    ``PgVectorSettings``): the storage's schema guard and the vector store's index-table guard raise it."""
    open_with = layout_setting("PgVectorSettings", "PGVECTOR", found)
    return wrong_layout(
        "PGVECTOR",
        place,
        found,
        expected,
        descriptions=descriptions,
        open_with=open_with,
        convert=convert,
        details=details,
    )


async def check_schema(conn: Connection, schema_name: str, expected: Layout, where: str) -> None:
    """Raise :class:`StorageLayoutError` (id ``MASTRA_STORAGE_PGVECTOR_INIT_WRONG_LAYOUT``) when the schema
    holds the other layout; a new or empty schema passes. Run before the storage creates anything."""
    found = await schema_layout(conn, schema_name)
    if found is None or found == expected:
        return
    raise pgvector_wrong_layout(
        f"schema {schema_name!r} at {where}",
        found,
        expected,
        DESCRIPTIONS,
        f"convert it into another schema with `mastra-memory migrate --from <url> --from-setting "
        f"layout={found} --to <url> --to-setting layout={expected} --to-setting schema_name=<new schema>`",
        schema=schema_name,
        where=where,
    )
