"""``mastra-memory migrate``: convert stored memory between storages and layouts (docs/spec.md §4.7).

A thin wrapper over :func:`mastra_memory.storage.migrate.migrate`: it builds the two storages from their
URLs through the plugins, runs the conversion (or the dry run, which prints the destination's SQL on
stdout and opens nothing there), and reports the counts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from ...errors import ValidationError
from ..common import JsonOption, key_values, masked_url, print_json, run, user_errors

FromOption = Annotated[
    str,
    typer.Option(
        "--from",
        metavar="URL",
        help="The storage to read (a plain path is an SQLite file): sqlite:///memory.db, libsql:///local.db, "
        "pgvector://user:pw@host/db, ...",
    ),
]
ToOption = Annotated[
    str,
    typer.Option(
        "--to",
        metavar="URL",
        help="The storage to write, without any of the ids and in its store's layout: libsql:///mastra.db, "
        "pgvector://user:pw@host/db, ...",
    ),
]
FromSettingOption = Annotated[
    list[str] | None,
    typer.Option(
        "--from-setting",
        metavar="KEY=VALUE",
        help="A setting of the source storage (repeatable), as in create_storage(URL, KEY=VALUE): "
        "layout=mastra, schema_name=app, ...",
    ),
]
ToSettingOption = Annotated[
    list[str] | None,
    typer.Option(
        "--to-setting",
        metavar="KEY=VALUE",
        help="A setting of the destination storage (repeatable): layout=mastra, ...",
    ),
]
DryRunOption = Annotated[
    bool,
    typer.Option(
        "--dry-run", metavar="", help="Print the SQL the destination would run; write nothing (a flag)."
    ),
]


def _url(value: str) -> str:
    """A plain path (no scheme, not a plugin name) means an SQLite file, as ``--db PATH`` does elsewhere."""
    text = value.strip()
    if ":" not in text and ("/" in text or "\\" in text or "." in text):
        return f"sqlite:///{text}"
    return text


def _existing_file(url: str) -> None:
    """A file source must exist: opening a missing one would create an empty database."""
    from ...stores.libsql.settings import libsql_path
    from ...stores.sqlite.connection import MEMORY, sqlite_path

    lowered = url.lower()
    if lowered.startswith("libsql:"):
        path = libsql_path(url)
    elif lowered.startswith(("sqlite:", "file:")):
        path = sqlite_path(url)
    else:
        return
    if path != MEMORY and not Path(path).is_file():
        raise ValidationError(f"--from {url}: the file {path} does not exist")


def migrate_command(
    source: FromOption,
    destination: ToOption,
    dry_run: DryRunOption = False,
    from_setting: FromSettingOption = None,
    to_setting: ToSettingOption = None,
    as_json: JsonOption = False,
) -> None:
    """Copy every thread, message and resource from one storage to another, losing nothing.

    Ids, timestamps (to the millisecond), metadata and working memory are kept
    as stored; the destination is written in one transaction (on failure it is
    left as it was) and must not hold any of the ids. Vectors are not copied:
    rebuild them afterwards with `mastra-memory reindex --storage URL`.
    """
    from ...plugins import create_storage
    from ...storage.migrate import MigrationReport, migrate

    with user_errors():
        source, destination = _url(source), _url(destination)
        read_settings = key_values("--from-setting", from_setting, example="layout=mastra", noun="setting")
        write_settings = key_values("--to-setting", to_setting, example="layout=mastra", noun="setting")
        if source == destination and read_settings == write_settings:
            raise ValidationError(f"--from and --to are the same storage ({source}); nothing to convert")
        _existing_file(source)
        reader = create_storage(source, **read_settings)
        writer = create_storage(destination, **write_settings)

        async def convert() -> MigrationReport:
            try:
                return await migrate(reader, writer, dry_run=dry_run)
            finally:
                await reader.close()
                await writer.close()

        report = run(convert())
    if as_json:  # the dry run's statements go into the document, not on stdout line by line
        print_json(
            {
                "source": masked_url(source),
                "destination": masked_url(destination),
                "threads": report.threads,
                "messages": report.messages,
                "resources": report.resources,
                "dry_run": report.dry_run,
                "already_there": report.already_there,
                "statements": list(report.statements),
            }
        )
        return
    counts = f"{report.threads} thread(s), {report.messages} message(s), {report.resources} resource(s)"
    if dry_run:
        for statement in report.statements:
            typer.echo(statement)
        Console(stderr=True).print(Text(f"Dry run: would copy {counts} into {destination}; nothing written."))
        return
    Console().print(
        Text.assemble(
            "Copied ",
            (counts, "bold"),
            f" into {destination}",
            # A rerun after a conversion stopped part-way (docs/spec.md §4.7): say what was there already.
            f" ({report.already_there} of them already there from an earlier run)"
            if report.already_there
            else "",
            ". Vectors were not copied: run `mastra-memory reindex --storage "
            f"{destination}` with the embedder to rebuild them.",
        )
    )
