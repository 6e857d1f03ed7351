"""``mastra-memory recall``: recent history plus the messages similar to a question, for one thread."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from ...errors import IndexNotFoundError, ThreadNotFoundError
from ..common import (
    DEFAULT_EMBEDDER,
    DbOption,
    EmbedderOption,
    EmbedderOptionsOption,
    JsonOption,
    Layout,
    LayoutOption,
    Mode,
    ModeOption,
    Scope,
    StorageOption,
    Stores,
    VectorOption,
    embedder_flags,
    embedder_options,
    existing,
    open_memory,
    run_closing,
    stores,
    thread_titles,
    user_errors,
)
from ..render import recall_json, render_recall

if TYPE_CHECKING:
    from ...memory import RecallResult


async def _check_index(
    memory: Any, question: str, where: Stores, embedder: str, extra: Mapping[str, Any]
) -> None:
    """Raise IndexNotFoundError, before recall searches (and would create an empty index), when the store
    holds no vectors of this embedder: recall would find nothing, and only ``reindex`` can help."""
    indexer = memory.indexer()
    await indexer.embed([question])  # learns the dimension; recall reuses the cached embedding
    dimension = memory.embedder.dimension
    if not dimension:
        return
    name = indexer.index_name_for(dimension)
    indexes = await indexer.message_index_set()
    native = memory.vector.to_native_index_name(name)
    if native in indexes and (await memory.vector.describe_index(native)).count > 0:
        return
    others = [n for n in indexes if n != native]
    held = f"; the store has {', '.join(others)}, built with another embedder" if others else ""
    raise IndexNotFoundError(
        f"no vector index for embedder {embedder} in {where.label}: recall would search {name}, which "
        f"{'is empty' if native in indexes else 'was never built'}{held}. Build it with "
        f"`mastra-memory reindex {where.options()} {embedder_flags(embedder, extra)}`, or recall with the "
        "embedder the messages were indexed with",
        details={"index_name": name, "indexes": indexes, "embedder": embedder},
    )


def recall_command(
    question: Annotated[str, typer.Argument(help="What to search the memory for.")],
    thread: Annotated[str, typer.Option("--thread", help="The current thread (it may be new).")],
    resource: Annotated[
        str | None,
        typer.Option("--resource", help="The user (resource) of the thread; default: the thread's owner."),
    ] = None,
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="Similar messages to retrieve.")] = 4,
    scope: Annotated[
        Scope, typer.Option("--scope", help="Search the current thread or every thread of the resource.")
    ] = Scope.resource,
    last: Annotated[
        int, typer.Option("--last", min=0, help="Newest messages of the thread returned as history.")
    ] = 10,
    message_range: Annotated[
        int, typer.Option("--message-range", min=0, help="Context messages on either side of each hit.")
    ] = 1,
    db: DbOption = None,
    storage: StorageOption = None,
    vector: VectorOption = None,
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    embedder_option: EmbedderOptionsOption = None,
    as_json: JsonOption = False,
    layout: LayoutOption = Layout.auto,
    mode: ModeOption = Mode.auto,
) -> None:
    """Recall for a thread: recent history plus messages similar to QUESTION.

    Semantic hits come with their neighbours (--message-range). In resource
    scope the thread may be new: recall searches every thread of --resource.
    """
    options = {
        "last_messages": last,
        "semantic_recall": {
            "top_k": top_k,
            "message_range": message_range,
            "scope": scope.value,
            "mode": mode.value,
        },
    }
    with user_errors():
        extra = embedder_options(embedder_option)
        where = existing(stores(db, storage, vector))
        memory = open_memory(where, embedder, options, extra)

        async def recall() -> tuple[RecallResult, dict[str, str], str | None]:
            found = await memory.get_thread_by_id(thread)
            if found is None and (scope is Scope.thread or resource is None):
                # Only resource-scoped recall may start from a thread that does not exist yet.
                raise ThreadNotFoundError(
                    f"thread {thread!r} does not exist in {where.label}; a new thread can only be used "
                    "with --resource and --scope resource"
                )
            # Without --resource, an existing thread's owner is the resource.
            owner = resource if resource is not None else found.resource_id if found else None
            await _check_index(memory, question, where, embedder, extra)
            result = await memory.recall(thread_id=thread, resource_id=owner, vector_search_string=question)
            titles = await thread_titles(memory, [thread, *(m.thread_id for m in result.messages)])
            return result, titles, owner

        result, titles, owner = run_closing(memory, recall())
    if as_json:
        data = recall_json(
            question=question,
            thread_id=thread,
            resource_id=owner,
            embedder=embedder,
            result=result,
            titles=titles,
            message_range=message_range,
        )
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    render_recall(
        Console(),
        question=question,
        thread_id=thread,
        result=result,
        titles=titles,
        message_range=message_range,
        embedder=embedder,
        layout=layout,
        last=last,
    )
