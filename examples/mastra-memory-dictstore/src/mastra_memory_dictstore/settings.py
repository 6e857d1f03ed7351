"""Settings of the dict store: which in-process space it lives in."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class DictStoreSettings(BaseModel):
    """Where the records live.

    ``space`` names a process-wide space: stores built with the same name see the same indexes (like a
    named in-memory database). ``None`` (the default) gives every store a private space of its own.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    space: str | None = Field(default=None, min_length=1)
