"""The memory commands of ``mastra-memory``: ``demo``, ``ingest``, ``recall``, ``threads``, ``reindex``,
``migrate``, ``export`` and ``delete``.

One module per command (``threads`` and ``reindex``, both over the stored threads, share one), and
:func:`register`, which adds them to the typer app. By default a command works on one SQLite file that
holds both the messages and their vectors (``--db``, default ``./memory.db``; the demo uses its own file in
the user data directory); ``--storage URL`` and ``--vector URL`` point it at any registered store instead.
Errors print on stderr and exit with status 1; progress goes to stderr, results to stdout.
"""

from __future__ import annotations

import typer

from ..common import Command
from .delete import delete_command
from .demo import demo_command
from .export import export_command
from .ingest import ingest_command
from .migrate import migrate_command
from .recall import recall_command
from .threads import reindex_command, threads_command

__all__ = [
    "delete_command",
    "demo_command",
    "export_command",
    "ingest_command",
    "migrate_command",
    "recall_command",
    "register",
    "reindex_command",
    "threads_command",
]


def register(app: typer.Typer) -> None:
    """Add the memory commands (``demo`` ... ``delete``) to ``app``."""
    app.command("demo", cls=Command)(demo_command)
    app.command("ingest", cls=Command)(ingest_command)
    app.command("recall", cls=Command)(recall_command)
    app.command("threads", cls=Command)(threads_command)
    app.command("reindex", cls=Command)(reindex_command)
    app.command("migrate", cls=Command)(migrate_command)
    app.command("export", cls=Command)(export_command)
    app.command("delete", cls=Command)(delete_command)
