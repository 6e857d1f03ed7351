"""What ``Memory`` returns: :class:`RecallResult` (docs/spec.md §5.3), :class:`SaveResult` (§5.4) and
:class:`ReindexResult` (§5.4, what ``reindex_thread``/``reindex`` indexed and skipped).

Pydantic models with camelCase aliases, like Mastra's results; ``usage`` holds provider-reported embedding
tokens of non-cached calls (None when every embedding came from the cache or the provider reports none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ..messages import MastraDBMessage


class _Result(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class Usage(_Result):
    """Provider-reported embedding tokens of non-cached calls."""

    tokens: int


class RecallHit(_Result):
    """Why a message was recalled: the semantic hit behind an include window."""

    message_id: str
    thread_id: str | None
    score: float


class RecallResult(_Result):
    """What `Memory.recall` returns (docs/spec.md §5.3) plus the semantic hits that shaped it."""

    messages: list[MastraDBMessage]
    total: int | None
    page: int
    per_page: int | Literal[False]
    has_more: bool
    usage: Usage | None = None
    hits: list[RecallHit] = Field(default_factory=list)
    index_name: str | None = None


class SaveResult(_Result):
    """What [`Memory.save_messages`][mastra_memory.memory.Memory.save_messages] returns."""

    messages: list[MastraDBMessage]
    usage: Usage | None = None


class SkippedMessage(_Result):
    """A stored message that re-indexing left out because no vector of it can be written (docs/spec.md
    §5.4): ``reason`` says what the vector store refuses (never message text)."""

    message_id: str
    thread_id: str
    reason: str


class ReindexResult(int):
    """What `Memory.reindex_thread` and `Memory.reindex` return: the number of messages
    re-indexed, as a plain ``int`` (as before), plus `skipped`, the stored messages that could not be
    indexed and were left out so that the others are (docs/spec.md §5.4)."""

    skipped: tuple[SkippedMessage, ...]

    def __new__(cls, indexed: int, skipped: Sequence[SkippedMessage] = ()) -> ReindexResult:
        result = super().__new__(cls, indexed)
        result.skipped = tuple(skipped)
        return result

    @property
    def indexed(self) -> int:
        """The number of messages re-indexed (the value of the ``int``)."""
        return int(self)

    @property
    def skipped_ids(self) -> list[str]:
        """The ids of the skipped messages, in storage order."""
        return [s.message_id for s in self.skipped]

    def __repr__(self) -> str:
        return f"ReindexResult(indexed={int(self)}, skipped={list(self.skipped)!r})"

    def __str__(self) -> str:  # prints and formats as the count, like the int it replaces
        return str(int(self))

    def __format__(self, spec: str) -> str:
        return format(int(self), spec)


def usage(tokens: int | None) -> Usage | None:
    """``Usage(tokens=...)``, or None when no tokens were reported."""
    return None if tokens is None else Usage(tokens=tokens)
