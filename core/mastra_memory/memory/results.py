"""What ``Memory`` returns: :class:`RecallResult` (docs/spec.md §5.3) and :class:`SaveResult` (§5.4).

Pydantic models with camelCase aliases, like Mastra's results; ``usage`` holds provider-reported embedding
tokens of non-cached calls (None when every embedding came from the cache or the provider reports none).
"""

from __future__ import annotations

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
    """What :meth:`Memory.recall` returns (docs/spec.md §5.3) plus the semantic hits that shaped it."""

    messages: list[MastraDBMessage]
    total: int | None
    page: int
    per_page: int | Literal[False]
    has_more: bool
    usage: Usage | None = None
    hits: list[RecallHit] = Field(default_factory=list)
    index_name: str | None = None


class SaveResult(_Result):
    """What :meth:`Memory.save_messages` returns."""

    messages: list[MastraDBMessage]
    usage: Usage | None = None


def usage(tokens: int | None) -> Usage | None:
    """``Usage(tokens=...)``, or None when no tokens were reported."""
    return None if tokens is None else Usage(tokens=tokens)
