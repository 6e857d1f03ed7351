"""The ``Memory`` a memory command works on, over an SQLite file or a storage given by URL or name.

An SQLite file holds the messages and, unless another vector store is given, their vectors; a storage
given by URL or plugin name brings its plugin's own vector store unless another is given (docs/memory.md).
The ``mastra-memory`` commands (``--db``, ``--storage``, ``--vector``) and
:func:`~mastra_memory.demo.run_demo` both open their memory here, so that rule is written once; nothing
here needs the CLI extra.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..memory import Memory
from ..plugins import create_storage, create_vector

if TYPE_CHECKING:
    from ..vector import MastraVector


def memory_over(
    db: Path | None,
    storage: str | None,
    vector: MastraVector | None,
    embedder: str,
    options: Mapping[str, Any],
    embedder_options: Mapping[str, Any] | None = None,
) -> Memory:
    """A ``Memory`` over the SQLite file ``db`` or else ``storage`` (a URL or plugin name), with ``vector``
    (already built, so a bad vector URL fails before anything else is touched) as its vector store when
    given. Stores are built through the plugins: a bad URL or name is a typed error."""
    if db is not None:
        # --db PATH: messages and, unless --vector says otherwise, vectors in one SQLite file.
        url = str(db)
        return Memory(
            create_storage("sqlite", url=url),
            vector or create_vector("sqlite", url=url),
            embedder,
            options=options,
            embedder_options=embedder_options,
        )
    assert storage is not None
    # Without --vector, Memory takes the vector store of the storage's plugin, same URL (docs/memory.md).
    return Memory(
        storage if vector is None else create_storage(storage),
        vector,
        embedder,
        options=options,
        embedder_options=embedder_options,
    )
