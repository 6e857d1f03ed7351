"""``MessageList``: the messages of one agent turn, each tagged with where it came from.

Processors read and extend it: history and recalled context are tagged ``memory`` (not new), the
caller's messages ``input`` and the model's ``response`` (both new, so the output side indexes them).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal

from ..messages import MastraDBMessage, MessageInput, normalize_messages

Source = Literal["input", "response", "memory", "context"]
NEW_SOURCES: frozenset[str] = frozenset({"input", "response"})


class MessageList:
    """An ordered, id-deduplicated list of messages with a source tag per message.

    ``all()`` returns memory/context messages first in ``(created_at, id)`` order, then new messages in
    the order they were added, so recalled history reads before the current input.
    """

    def __init__(
        self,
        messages: Iterable[MastraDBMessage | MessageInput] = (),
        *,
        thread_id: str | None = None,
        resource_id: str | None = None,
        source: Source = "input",
    ) -> None:
        self.thread_id = thread_id
        self.resource_id = resource_id
        self._messages: dict[str, MastraDBMessage] = {}
        self._sources: dict[str, Source] = {}
        self._system: list[tuple[MastraDBMessage, Source]] = []
        self.add(messages, source=source)

    def _normalise(self, messages: Iterable[MastraDBMessage | MessageInput]) -> list[MastraDBMessage]:
        raw = list(messages)
        ready = [m for m in raw if isinstance(m, MastraDBMessage)]
        if len(ready) == len(raw):
            return ready
        return normalize_messages(
            [m.model_dump() if isinstance(m, MastraDBMessage) else m for m in raw],
            thread_id=self.thread_id,
            resource_id=self.resource_id,
        )

    def add(self, messages: Iterable[MastraDBMessage | MessageInput], source: Source) -> MessageList:
        """Add messages; an id already present keeps its first source (history is never made 'new').

        System messages go to `system_messages` (once per id), never into `all`.
        """
        for msg in self._normalise(messages):
            if msg.role == "system":
                if all(m.id != msg.id for m, _ in self._system):
                    self._system.append((msg, source))
                continue
            if msg.id not in self._messages:
                self._sources[msg.id] = source
            self._messages[msg.id] = msg
        return self

    def remove(self, message_ids: Iterable[str]) -> MessageList:
        """Drop (non-system) messages by id from what goes to the model; unknown ids are ignored.

        Used by ``ToolCallFilter`` and ``TokenLimiter``; storage is never touched."""
        for message_id in message_ids:
            self._messages.pop(message_id, None)
            self._sources.pop(message_id, None)
        return self

    def add_system(
        self, message: MastraDBMessage | str | Mapping[str, Any], source: Source = "context"
    ) -> MessageList:
        """Add a system message (e.g. the cross-thread recall block) with its source tag."""
        if isinstance(message, str):
            message = {"role": "system", "content": message, "thread_id": self.thread_id or ""}
        msg = message if isinstance(message, MastraDBMessage) else self._normalise([message])[0]
        self._system.append((msg, source))
        return self

    def all(self) -> list[MastraDBMessage]:
        """Non-system messages: memory/context by time, then new messages in insertion order."""
        old = [m for i, m in self._messages.items() if self._sources[i] not in NEW_SOURCES]
        new = [m for i, m in self._messages.items() if self._sources[i] in NEW_SOURCES]
        return sorted(old, key=lambda m: (m.created_at, m.id)) + new

    @property
    def system_messages(self) -> list[MastraDBMessage]:
        """The system messages, in the order they were added."""
        return [m for m, _ in self._system]

    def system_messages_from(self, source: Source) -> list[MastraDBMessage]:
        """The system messages added with ``source``."""
        return [m for m, s in self._system if s == source]

    def source_of(self, message_id: str) -> Source | None:
        """The source tag of a (non-system) message, None if it is not in the list."""
        return self._sources.get(message_id)

    def is_new(self, message_id: str) -> bool:
        """True for messages of this turn (input or response), False for history and recalled context."""
        return self._sources.get(message_id) in NEW_SOURCES

    def new_messages(self) -> list[MastraDBMessage]:
        """The messages of this turn (input and response), in the order they were added."""
        return [m for i, m in self._messages.items() if self._sources[i] in NEW_SOURCES]

    def from_source(self, source: Source) -> list[MastraDBMessage]:
        """The (non-system) messages tagged ``source``, in the order they were added."""
        return [m for i, m in self._messages.items() if self._sources[i] == source]

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._messages

    def __iter__(self) -> Iterator[MastraDBMessage]:
        return iter(self.all())

    def __len__(self) -> int:
        return len(self._messages)
