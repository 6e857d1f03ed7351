"""The ``mastra-memory`` command (needs the ``cli`` extra: typer and rich).

``app`` is the typer application. Each command is one function: ``plugins`` lives here, the memory
commands in :mod:`.commands`, one module each, attached with ``app.command()``. Commands wrap their work
in the one error wrapper of :mod:`.common` so a typed error prints as one red line and exit status 1, not
a traceback.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from .. import plugins as plugin_registry
from .commands import register as register_memory_commands
from .common import Command, Group, JsonOption, user_errors

app = typer.Typer(
    name="mastra-memory",
    help="Mastra-style agent memory (message history + semantic recall) over any vector database.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    cls=Group,
)


def _print_version(value: bool) -> None:
    if value:
        from ..version import __version__

        typer.echo(f"mastra-memory {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    _version: Annotated[
        bool,
        typer.Option(
            "--version",
            metavar="",
            callback=_print_version,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Mastra-style agent memory (message history + semantic recall) over any vector database."""


def _provides(info: plugin_registry.PluginInfo) -> str:
    kinds = [
        ("vector stores", info.vector_stores),
        ("storages", info.storages),
        ("embedder providers", info.embedder_providers),
    ]
    return "\n".join(f"{label}: {', '.join(names)}" for label, names in kinds if names) or "-"


@app.command("plugins", cls=Command)
def plugins_command(
    as_json: JsonOption = False,
) -> None:
    """List the loaded plugins: version, source, and what each provides."""
    with user_errors():
        infos = plugin_registry.list_plugins()
    if as_json:
        typer.echo(json.dumps([dataclasses.asdict(info) for info in infos], indent=2))
        return
    table = Table(title="mastra-memory plugins", show_lines=True)
    # fold, not ellipsis: a long source or name wraps inside its cell and is never cut off.
    table.add_column("Plugin", overflow="fold")
    table.add_column("Version", no_wrap=True)
    table.add_column("Source", overflow="fold")
    table.add_column("Provides", overflow="fold")
    for info in infos:
        table.add_row(info.name, info.version or "-", info.source, _provides(info))
    console = Console()
    if not console.is_terminal:
        # A pipe or file has no width; rich would assume 80 columns and squeeze the table: print it at
        # its natural width instead, one line per row.
        natural = console.measure(table, options=console.options.update_width(10_000)).maximum
        console = Console(width=max(80, natural))
    console.print(table)


# The memory commands (demo, ingest, recall, threads, reindex) live in .commands, one module each.
register_memory_commands(app)


def main() -> None:
    """Entry point of the ``mastra-memory`` console script."""
    app()
