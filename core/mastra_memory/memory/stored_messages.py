"""What ``save_messages`` stores of the messages it is given (docs/spec.md §5.4 step 1): no system or
signal messages, and no working-memory markup or update-tool parts (§5.8), which are never stored."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..errors import ValidationError
from ..messages import MastraDBMessage, MessageInput, TextPart, ToolInvocationPart, normalize_messages

#: The tool whose invocation parts update working memory; they are not persisted (docs/spec.md §5.4).
WORKING_MEMORY_TOOL = "updateWorkingMemory"
_WORKING_MEMORY_MARKUP = re.compile(r"<working_memory>.*?</working_memory>", re.DOTALL)


def strip_working_memory(message: MastraDBMessage) -> MastraDBMessage | None:
    """Remove working-memory markup and update-tool parts; None when nothing is left.

    See docs/spec.md §5.4 step 1."""
    content = message.content
    parts = []
    for part in content.parts:
        if isinstance(part, ToolInvocationPart) and part.tool_invocation.tool_name == WORKING_MEMORY_TOOL:
            continue
        if isinstance(part, TextPart) and "<working_memory>" in part.text:
            text = _WORKING_MEMORY_MARKUP.sub("", part.text)
            if not text.strip():
                continue
            part = part.model_copy(update={"text": text})
        parts.append(part)
    text_shortcut = content.content
    if isinstance(text_shortcut, str) and "<working_memory>" in text_shortcut:
        text_shortcut = _WORKING_MEMORY_MARKUP.sub("", text_shortcut)
        if not text_shortcut.strip():
            text_shortcut = None
    if parts == list(content.parts) and text_shortcut == content.content:
        return message
    if not parts and not (isinstance(text_shortcut, str) and text_shortcut.strip()):
        return None
    new_content = content.model_copy(update={"parts": parts, "content": text_shortcut})
    return message.model_copy(update={"content": new_content})


def messages_to_store(messages: Sequence[MessageInput]) -> list[MastraDBMessage]:
    """What ``save_messages`` persists (docs/spec.md §5.4 step 1): the messages normalised, without
    system and signal messages, working-memory markup stripped, emptied messages dropped.

    Raises ValidationError (before any I/O) when one call repeats a message id.
    """
    normalised = normalize_messages(messages)
    seen: set[str] = set()
    for msg in normalised:
        if msg.id in seen:
            raise ValidationError(
                f"duplicate message id {msg.id!r} in one save_messages call; ids must be unique"
            )
        seen.add(msg.id)
    kept: list[MastraDBMessage] = []
    for msg in normalised:
        if msg.role in ("system", "signal"):
            continue
        stripped = strip_working_memory(msg)
        if stripped is not None:
            kept.append(stripped)
    return kept
