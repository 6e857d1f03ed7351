"""Re-indexing stored messages without letting one bad message block its thread (docs/spec.md §5.4).

Storage is the source of truth; reindex rebuilds vectors from it. A stored message the vector store cannot
take (written before the write path checked it, or refused for a reason no check foresaw) is skipped and
reported, and every other message is indexed. Failures that are not a message's fault — an index of another
dimension, an invalid configuration, the embedder or the store being unavailable — still raise.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...errors import ConfigError, IndexDimensionMismatchError, ValidationError
from ...messages import MastraDBMessage
from ...metadata_limits import shown
from ...storage import Thread
from ..results import SkippedMessage
from .indexability import shown_id
from .indexer import MessageIndexer
from .indexer import logger as indexing_logger

#: Messages embedded per indexing call while re-indexing a thread.
REINDEX_BATCH = 256


async def reindex_messages(
    indexer: MessageIndexer,
    thread: Thread,
    messages: Sequence[MastraDBMessage],
    *,
    keep_other_indexes: bool,
) -> list[SkippedMessage]:
    """Index ``messages`` of ``thread`` in batches; return the ones skipped, with the reason (also logged).

    ``keep_other_indexes``: True when the messages are stored unchanged (a reindex), so other embedders'
    vectors of them are still right and stay; False when their resource changed (a thread move), so every
    memory index must lose them (docs/spec.md §5.6).
    """
    thread_id = thread.id
    threads: dict[str, Thread | None] = {thread.id: thread}
    skipped: dict[str, str] = {}
    for start in range(0, len(messages), REINDEX_BATCH):
        batch = messages[start : start + REINDEX_BATCH]
        bad = await indexer.unindexable(batch, threads)
        skipped.update(bad)
        good = [m for m in batch if m.id not in bad]
        try:
            await indexer.index_messages(good, threads, keep_other_indexes=keep_other_indexes)
        except ValidationError as exc:
            if isinstance(exc, ConfigError | IndexDimensionMismatchError):
                raise  # not a message's fault: nothing of the thread could be indexed
            # A refusal the check above did not foresee: isolate it, one message at a time.
            for message in good:
                try:
                    await indexer.index_messages([message], threads, keep_other_indexes=keep_other_indexes)
                except ValidationError as one:
                    if isinstance(one, ConfigError | IndexDimensionMismatchError):
                        raise
                    skipped[message.id] = f"the vector store refused it ({shown(str(one))})"
    report = [
        SkippedMessage(message_id=m.id, thread_id=m.thread_id, reason=skipped[m.id])
        for m in messages
        if m.id in skipped
    ]
    if report:
        indexing_logger.warning(
            "reindex of thread %s skipped %d stored message(s) the vector store cannot take; semantic "
            "recall will not find them until they are fixed (update_messages) or deleted: %s",
            shown_id(thread_id),
            len(report),
            "; ".join(f"{shown_id(s.message_id)}: {s.reason}" for s in report[:20]),
        )
    return report
