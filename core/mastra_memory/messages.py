"""Message records (docs/spec.md §4.1): ``MastraDBMessage``, its v2 content and parts, and legacy v1
normalisation. Timestamps and their conversions (``epoch_ms``, ``coerce_datetime``) live in
:mod:`mastra_memory.timestamps` and are importable from here too.

Every model accepts snake_case and camelCase keys and dumps either: ``by_alias=True`` gives the keys of
Mastra's ``MastraDBMessage`` (format 2: ``toolInvocation{toolCallId, toolName}``, ``providerMetadata``,
``mimeType``, but ``experimental_attachments`` as the AI SDK spells it), which is what every storage writes
(docs/spec.md §4.1), while rows written by earlier versions in snake_case still read. Optional fields that
were never given are left out of dumps, while an explicit ``None`` is kept, so a message read back from
storage serialises exactly as it was written. Parts and content keep unknown keys verbatim, and parts of
an unknown ``type`` are kept as :class:`UnknownPart`.

Legacy v1 content becomes format-2 part dicts in :mod:`.message_v1` (plain data, a leaf); the v2 part
union, the normalisation over that conversion and the text rules stay here, one record's definition
(docs/spec.md §4.1, §5.4).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal, TypeAlias

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    PlainSerializer,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    Tag,
    field_serializer,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic import ValidationError as PydanticValidationError
from pydantic.alias_generators import to_camel

from .errors import ValidationError, pydantic_problems
from .message_v1 import provider_options, tool_call_id, tool_result_part, v1_parts_to_v2
from .metadata_limits import RECORD_METADATA, metadata_problem, shown
from .timestamps import StampClock, canonical_timestamp
from .timestamps import coerce_datetime as coerce_datetime  # re-exported: importable from here as before
from .timestamps import epoch_ms as epoch_ms
from .timestamps import from_epoch_ms as from_epoch_ms

Role = Literal["user", "assistant", "system", "signal"]
ToolInvocationState = Literal[
    "partial-call",
    "call",
    "result",
    "approval-requested",
    "approval-responded",
    "output-error",
    "output-denied",
]


class _Record(BaseModel):
    """Base of the content models: camelCase aliases, unknown keys kept, unset ``None`` fields not dumped."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")
    #: Fields dumped after all others, in this order.
    _trailing: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _omit_unset_nulls(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        if not isinstance(data, dict):
            return data
        fields = type(self).model_fields
        for name, field in fields.items():
            if name not in self.model_fields_set and getattr(self, name) is None:
                data.pop(_key(name, field.alias, info), None)
        for name in self._trailing:
            key = _key(name, fields[name].alias, info)
            if key in data:
                data[key] = data.pop(key)
        return data


def _key(name: str, alias: str | None, info: SerializationInfo) -> str:
    return alias if info.by_alias and alias else name


#: The snake_case spellings of Mastra's keys inside the untyped dicts of content (the v1 ``toolInvocations``
#: mirror, ``experimental_attachments``, a v2 ``source``), written in Mastra's spelling like typed fields.
_MASTRA_KEYS = {
    name: to_camel(name)
    for name in (
        "tool_call_id",
        "tool_name",
        "is_error",
        "error_text",
        "raw_input",
        "content_type",
        "source_type",
        "provider_metadata",
    )
}


def _mastra_keys(item: Mapping[str, Any]) -> dict[str, Any]:
    """``item`` with the keys of :data:`_MASTRA_KEYS` renamed where they stand (top level only); a key whose
    Mastra spelling is there too stays as it is, so nothing is lost."""
    return {
        key if _MASTRA_KEYS.get(key, key) in item else _MASTRA_KEYS[key]: value for key, value in item.items()
    }


class _PartBase(_Record):
    """Fields every part may carry."""

    provider_metadata: dict[str, Any] | None = None
    created_at: int | None = Field(default=None, description="epoch milliseconds")
    # Mastra writes a part's own keys first and these two extensions after them; same order here.
    _trailing: ClassVar[tuple[str, ...]] = ("provider_metadata", "created_at")

    @field_validator("created_at", mode="before")
    @classmethod
    def _epoch_ms(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("part created_at must be epoch milliseconds (an int)")
        if isinstance(value, datetime):
            return epoch_ms(value)
        return value


class TextPart(_PartBase):
    """Plain text."""

    type: Literal["text"] = "text"
    text: str


class ToolInvocation(_Record):
    """One tool call and, once known, its result.

    The optional fields after ``result`` are Mastra's (``isError``, ``errorText``, ``rawInput``,
    ``approval``); like ``step`` they are kept as given and left out when absent.
    """

    state: ToolInvocationState
    step: Any = None
    tool_call_id: str
    tool_name: str
    args: Any = Field(default_factory=dict)
    result: Any = None
    is_error: Any = None
    error_text: Any = None
    raw_input: Any = None
    approval: Any = None


class ToolInvocationPart(_PartBase):
    """A tool call of an assistant message; the result lives in the same part (state ``result``).

    ``provider_executed``, ``title`` and ``preliminary`` are Mastra's, kept as given when present.
    """

    type: Literal["tool-invocation"] = "tool-invocation"
    tool_invocation: ToolInvocation
    provider_executed: Any = None
    title: Any = None
    preliminary: Any = None


class ReasoningPart(_PartBase):
    """Model reasoning (``reasoning`` in the v2 shape, ``text`` in newer shapes; both kept)."""

    type: Literal["reasoning"] = "reasoning"
    reasoning: str | None = None
    text: str | None = None
    details: list[Any] | None = None


class FilePart(_PartBase):
    """A file, inline (``data``) or by ``url``."""

    type: Literal["file"] = "file"
    mime_type: str | None = None
    media_type: str | None = None
    data: str | None = None
    url: str | None = None
    filename: str | None = None


class SourcePart(_PartBase):
    """A cited source in the v2 shape: ``{type: "source", source: {sourceType, id, url, title}}``."""

    type: Literal["source"] = "source"
    source: dict[str, Any] = Field(default_factory=dict)

    @field_serializer("source")
    def _source_keys(self, value: dict[str, Any], info: SerializationInfo) -> Any:
        return _mastra_keys(value) if info.by_alias else value


class SourceUrlPart(_PartBase):
    """A cited web source."""

    type: Literal["source-url"] = "source-url"
    source_id: str | None = None
    url: str | None = None
    title: str | None = None


class SourceDocumentPart(_PartBase):
    """A cited document."""

    type: Literal["source-document"] = "source-document"
    source_id: str | None = None
    media_type: str | None = None
    title: str | None = None
    filename: str | None = None


class StepStartPart(_PartBase):
    """Marks the start of a model step (``model``: the model that ran it, when Mastra recorded one)."""

    type: Literal["step-start"] = "step-start"
    model: Any = None


class ErrorPart(_PartBase):
    """An error surfaced in the conversation."""

    type: Literal["error"] = "error"
    error: Any = None


class DataPart(_PartBase):
    """Application data; ``type`` is ``data-<name>``."""

    type: str = Field(pattern=r"^data-")
    id: str | None = None
    data: Any = None


class UnknownPart(_PartBase):
    """A part of a type this version does not know; every key is kept verbatim."""

    type: str


_KNOWN_PART_TYPES = frozenset(
    {
        "text",
        "tool-invocation",
        "reasoning",
        "file",
        "source",
        "source-url",
        "source-document",
        "step-start",
        "error",
    }
)


def _part_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, Mapping) else getattr(value, "type", None)
    if kind in _KNOWN_PART_TYPES:
        return str(kind)
    if isinstance(kind, str) and kind.startswith("data-"):
        return "data"
    return "unknown"


Part: TypeAlias = Annotated[
    Annotated[TextPart, Tag("text")]
    | Annotated[ToolInvocationPart, Tag("tool-invocation")]
    | Annotated[ReasoningPart, Tag("reasoning")]
    | Annotated[FilePart, Tag("file")]
    | Annotated[SourcePart, Tag("source")]
    | Annotated[SourceUrlPart, Tag("source-url")]
    | Annotated[SourceDocumentPart, Tag("source-document")]
    | Annotated[StepStartPart, Tag("step-start")]
    | Annotated[ErrorPart, Tag("error")]
    | Annotated[DataPart, Tag("data")]
    | Annotated[UnknownPart, Tag("unknown")],
    Discriminator(_part_tag),
]
"""A message part: a tagged union on ``type``; unknown types become :class:`UnknownPart`."""


class MessageContentV2(_Record):
    """Message content in format 2: typed parts plus optional message-level fields stored verbatim."""

    # Fields in the order Mastra writes them (docs/spec.md §4.1), so stored JSON reads alike.
    format: Literal[2] = 2
    parts: list[Part] = Field(default_factory=list)
    tool_invocations: list[Any] | None = None
    reasoning: Any = None
    annotations: list[Any] | None = None
    # The AI SDK's own spelling, which Mastra stores as it is (not experimentalAttachments).
    experimental_attachments: list[Any] | None = Field(default=None, alias="experimental_attachments")
    content: str | None = None
    metadata: dict[str, Any] | None = None
    provider_metadata: dict[str, Any] | None = None

    @field_serializer("tool_invocations", "experimental_attachments")
    def _mirror_keys(self, value: list[Any] | None, info: SerializationInfo) -> Any:
        if not info.by_alias or value is None:
            return value
        return [_mastra_keys(item) if isinstance(item, Mapping) else item for item in value]


_clock = StampClock()


Timestamp: TypeAlias = Annotated[
    datetime,
    BeforeValidator(lambda value: coerce_datetime(value, "timestamp")),
    PlainSerializer(canonical_timestamp, when_used="json"),
]
"""An aware UTC millisecond datetime; accepts ISO strings and epoch ms, dumps the canonical form in JSON."""


class MastraDBMessage(BaseModel):
    """A stored message. ``content`` may be given as a string or a v1 part list; it is stored as v2.

    A missing ``id`` becomes a uuid4 string and a missing ``created_at`` "now" (strictly increasing in
    the process). Role ``tool`` is not a stored role: pass such messages through `normalize_messages`,
    which folds their results into the assistant message that made the call.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    id: str = Field(default_factory=lambda: str(uuid.uuid4()), min_length=1)
    role: Role
    created_at: Timestamp = Field(default_factory=_clock.next)
    thread_id: str
    resource_id: str | None = None
    type: str = "v2"
    content: MessageContentV2

    @model_validator(mode="before")
    @classmethod
    def _legacy_content(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "content" in data and not _is_v2_content(data["content"]):
            converted = dict(data)
            if isinstance(data.get("parts"), list) and isinstance(data["content"], str):
                # An AI SDK UI message: its parts are already format-2 parts and its string content only
                # their text, so the parts are kept and the string dropped, as Mastra stores it (§4.1).
                del converted["parts"]
                converted["content"] = {"format": 2, "parts": data["parts"]}
            else:
                parts = v1_parts_to_v2(data["content"])
                converted["content"] = (
                    {"format": 2, "content": data["content"], "parts": parts}
                    if isinstance(data["content"], str)
                    else {"format": 2, "parts": parts}
                )
            converted["type"] = "v2"
            # A v1 message's own metadata and providerOptions belong to its content in v2, as in Mastra.
            if data.get("metadata") is not None:
                converted["content"]["metadata"] = data["metadata"]
            options = provider_options(data)
            if options is not None:
                converted["content"]["provider_metadata"] = options
            return converted
        return data


def _is_v2_content(content: Any) -> bool:
    return isinstance(content, MessageContentV2) or (
        isinstance(content, Mapping) and ("format" in content or "parts" in content)
    )


def _as_validation_error(exc: PydanticValidationError, what: str) -> ValidationError:
    return ValidationError(f"invalid {what}: " + "; ".join(pydantic_problems(exc, strip_value_error=True)))


MessageInput: TypeAlias = MastraDBMessage | Mapping[str, Any]
"""Anything :func:`normalize_message` accepts."""


def normalize_message(obj: MessageInput) -> MastraDBMessage:
    """One message in any accepted shape (v2, v1 string or part list, camelCase) as a MastraDBMessage.

    A role ``tool`` message on its own becomes an assistant message holding its results.
    Invalid input raises ValidationError.
    """
    return normalize_messages([obj])[0]


def normalize_messages(
    objs: Iterable[MessageInput],
    *,
    thread_id: str | None = None,
    resource_id: str | None = None,
) -> list[MastraDBMessage]:
    """Normalise messages of one call to v2, in order.

    * Missing ``created_at`` values get strictly increasing stamps 1 ms apart in list order.
    * ``thread_id`` / ``resource_id`` fill messages that lack them.
    * A role ``tool`` message is folded into the latest earlier assistant message of the list that holds
      the matching tool call (that part's state becomes ``result``); results with no matching call stay
      as an assistant message of their own.

    Invalid input (naive datetimes, unknown roles, malformed parts) raises ValidationError.
    """
    items = list(objs)
    missing_stamp = [
        isinstance(o, Mapping) and o.get("created_at", o.get("createdAt")) is None for o in items
    ]
    stamps = iter(_clock.take(sum(missing_stamp)))
    result: list[MastraDBMessage] = []
    for position, obj in enumerate(items):
        if isinstance(obj, MastraDBMessage):
            message = obj
            if thread_id is not None and not message.thread_id:
                message = message.model_copy(update={"thread_id": thread_id})
            if resource_id is not None and message.resource_id is None:
                message = message.model_copy(update={"resource_id": resource_id})
            result.append(message)
            continue
        if not isinstance(obj, Mapping):
            raise ValidationError(f"message [{position}] must be a dict or a MastraDBMessage")
        data = dict(obj)
        if missing_stamp[position]:
            data.pop("createdAt", None)
            data["created_at"] = next(stamps)
        if thread_id is not None and not (data.get("thread_id") or data.get("threadId")):
            data.pop("threadId", None)
            data["thread_id"] = thread_id
        if resource_id is not None and data.get("resource_id", data.get("resourceId")) is None:
            data.pop("resourceId", None)
            data["resource_id"] = resource_id
        if data.get("role") == "tool":
            remaining = _fold_tool_message(data, result, position)
            if remaining is None:
                continue
            data = remaining
        try:
            result.append(MastraDBMessage.model_validate(data))
        except PydanticValidationError as exc:
            raise _as_validation_error(exc, f"message [{position}]") from None
    for position, message in enumerate(result):
        # docs/spec.md §4.1: a message's metadata has the limits of a thread's.
        metadata = message.content.metadata
        problem = None if metadata is None else metadata_problem(metadata, RECORD_METADATA)
        if problem is not None:
            raise ValidationError(f"message [{position}] ({shown(message.id)}): content.{problem}")
    return result


def _fold_tool_message(
    data: dict[str, Any], earlier: list[MastraDBMessage], position: int
) -> dict[str, Any] | None:
    """Fold a role ``tool`` message into earlier assistant calls; return what is left as an assistant dict."""
    content = data.get("content")
    if isinstance(content, Mapping) and isinstance(content.get("parts"), list):
        raw_parts: list[Any] = list(content["parts"])
    elif isinstance(content, list):
        raw_parts = list(content)
    else:
        raise ValidationError(f"message [{position}]: role 'tool' messages must carry tool-result parts")
    unmatched: list[dict[str, Any]] = []
    for raw in raw_parts:
        if not isinstance(raw, Mapping):
            raise ValidationError(f"message [{position}]: content parts must be objects")
        if raw.get("type") == "tool-result":
            call_id, result = tool_call_id(raw), raw.get("result", raw.get("output"))
        elif raw.get("type") == "tool-invocation":
            invocation = raw.get("tool_invocation", raw.get("toolInvocation")) or {}
            call_id, result = tool_call_id(invocation), invocation.get("result")
        else:
            raise ValidationError(
                f"message [{position}]: role 'tool' messages may only hold tool results, "
                f"got a part of type {raw.get('type')!r}"
            )
        if not _attach_result(earlier, call_id, result):
            unmatched.append(
                tool_result_part(raw)
                if raw.get("type") == "tool-result"
                else {**raw, "type": "tool-invocation"}
            )
    if not unmatched:
        return None
    remaining = dict(data)
    remaining["role"] = "assistant"
    remaining["type"] = "v2"
    remaining["content"] = {"format": 2, "parts": unmatched}
    return remaining


def _attach_result(earlier: list[MastraDBMessage], call_id: Any, result: Any) -> bool:
    for index in range(len(earlier) - 1, -1, -1):
        message = earlier[index]
        if message.role != "assistant":
            continue
        for part_index, part in enumerate(message.content.parts):
            if isinstance(part, ToolInvocationPart) and part.tool_invocation.tool_call_id == call_id:
                invocation = part.tool_invocation.model_copy(update={"state": "result", "result": result})
                parts = list(message.content.parts)
                parts[part_index] = part.model_copy(update={"tool_invocation": invocation})
                content = message.content.model_copy(update={"parts": parts})
                earlier[index] = message.model_copy(update={"content": content})
                return True
    return False


def text_and_parts(message: MastraDBMessage) -> list[Part]:
    """The parts a message's text is read from: its parts, or, for content that is a plain string with no
    parts (v1 or a bare string), that string as one text part. Token counting and the Observer walk these."""
    content = message.content
    if isinstance(content.content, str) and content.content and not content.parts:
        return [TextPart(text=content.content)]
    return list(content.parts)


def message_text(message: MastraDBMessage) -> str:
    """The text of a message (docs/spec.md §5.4): ``content.content`` if non-blank, else the non-empty text
    parts joined with ``"\\n"``. Used for embedding; the result may be blank.
    """
    content = message.content
    if isinstance(content.content, str) and content.content.strip():
        return content.content
    return "\n".join(p.text for p in content.parts if isinstance(p, TextPart) and p.text != "")


def render_text(message: MastraDBMessage) -> str:
    """The text shown for a recalled message (docs/spec.md §6.3 step 2): ``content.content`` if non-empty,
    else the text parts joined with a single space.
    """
    content = message.content
    if isinstance(content.content, str) and content.content:
        return content.content
    return " ".join(p.text for p in content.parts if isinstance(p, TextPart))
