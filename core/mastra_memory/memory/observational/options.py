"""Observational memory's options (docs/spec.md §5.14): Mastra's ``ObservationalMemoryOptions`` names and
defaults (``@mastra/memory`` 1.31), camelCase accepted, checked before any I/O.

What is built: synchronous observation and reflection at Mastra's thresholds, ``scope``,
``shareTokenBudget``, a model per observer/reflector, ``retrieval`` and the lifecycle ``hooks``. What is
not built is refused with :class:`UnsupportedOptionError` saying what to drop, never silently ignored:
asynchronous buffering (``bufferTokens`` as a number, ``bufferActivation``, ``blockAfter``,
``bufferOnIdle``), idle/provider-change activation, temporal markers, extractors, the observer's thread
titles and working-memory management [Δ].
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from ...errors import ConfigError

#: Mastra's defaults (``OBSERVATIONAL_MEMORY_DEFAULTS`` in @mastra/memory 1.31); tests/interop compares them.
DEFAULT_MESSAGE_TOKENS = 30_000
DEFAULT_OBSERVATION_TOKENS = 40_000
DEFAULT_MAX_TOKENS_PER_BATCH = 10_000
DEFAULT_OBSERVER_TEMPERATURE = 0.3
DEFAULT_REFLECTOR_TEMPERATURE = 0.0
#: Mastra's fallback model; there is no Google provider here, so naming it (or "default") is refused [Δ].
MASTRA_DEFAULT_MODEL = "google/gemini-2.5-flash"

OMScope = Literal["thread", "resource"]


class UnsupportedOMOptionError(ConfigError):
    """An observational-memory option of Mastra's that this project does not implement (docs/spec.md §5.14
    [Δ]): refused with what to do instead. ``details['option']`` names it."""

    def __init__(self, option: str, why: str) -> None:
        super().__init__(
            f"observational_memory.{option} is not supported: {why}",
            id="MASTRA_MEMORY_CONFIG_UNSUPPORTED_OPTION",
            details={"option": f"observational_memory.{option}"},
        )


class _Options(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", arbitrary_types_allowed=True
    )


class ModelSettings(_Options):
    """Mastra's ``modelSettings``: sent to the model as ``temperature`` and ``max_tokens``."""

    temperature: float | None = None
    max_output_tokens: int | None = Field(default=None, ge=1, strict=True)


def _refuse_buffering(data: Mapping[str, Any], where: str) -> None:
    # docs/spec.md §5.14 [Δ]: buffering runs the observer beside the agent's turn and activates its output
    # later; it is not built, so a config asking for it is refused rather than run synchronously unasked.
    prefix = f"{where}." if where else ""
    for key, snake in (("bufferActivation", "buffer_activation"), ("blockAfter", "block_after")):
        if data.get(key, data.get(snake)) is not None:
            raise UnsupportedOMOptionError(
                f"{prefix}{snake}",
                "asynchronous buffering is not built here; observation and reflection run synchronously "
                f"when their threshold is reached. Drop {prefix}{key}",
            )
    for key, snake in (
        ("activateAfterIdle", "activate_after_idle"),
        ("activateOnProviderChange", "activate_on_provider_change"),
    ):
        value = data.get(key, data.get(snake))
        if value is not None and value is not False:
            raise UnsupportedOMOptionError(
                f"{prefix}{snake}",
                f"it activates buffered observations, and asynchronous buffering is not built; drop {key}",
            )


#: The activation switches ``_refuse_buffering`` refuses when on; off, they are accepted and dropped.
_ACTIVATION_KEYS = (
    "activateAfterIdle",
    "activate_after_idle",
    "activateOnProviderChange",
    "activate_on_provider_change",
)


class _Refusing(_Options):
    """Options with keys of features not built: ``_refuse`` raises for a key asking for one, and the keys
    accepted only when off (``_dropped``) are dropped before the fields are read."""

    _dropped: ClassVar[tuple[str, ...]]

    @classmethod
    def _refuse(cls, data: Mapping[str, Any]) -> None:
        raise NotImplementedError

    @model_validator(mode="before")
    @classmethod
    def _unsupported(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        cls._refuse(data)
        return {k: v for k, v in data.items() if k not in cls._dropped}


class ObservationConfig(_Refusing):
    """``observation``: when the Observer runs (``message_tokens`` of unobserved messages, 30,000) and how."""

    model: Any = None
    instruction: str | None = None
    message_tokens: int = Field(default=DEFAULT_MESSAGE_TOKENS, ge=1, strict=True)
    max_tokens_per_batch: int = Field(default=DEFAULT_MAX_TOKENS_PER_BATCH, ge=1, strict=True)
    model_settings: ModelSettings = Field(default_factory=ModelSettings)
    provider_options: dict[str, Any] | None = None
    #: Mastra's default is 0.2 (buffering on); here only ``False`` (or unset) loads [Δ].
    buffer_tokens: Literal[False] | None = None
    continuation_hints: bool | dict[str, bool] | None = None
    observe_attachments: Any = None

    _dropped = (
        "bufferOnIdle",
        "buffer_on_idle",
        "threadTitle",
        "thread_title",
        "manageWorkingMemory",
        "manage_working_memory",
        "extract",
        *_ACTIVATION_KEYS,
    )

    @classmethod
    def _refuse(cls, data: Mapping[str, Any]) -> None:
        buffer = data.get("bufferTokens", data.get("buffer_tokens"))
        if buffer is not None and buffer is not False:
            raise UnsupportedOMOptionError(
                "observation.buffer_tokens",
                "asynchronous buffering is not built here (observation runs synchronously at "
                "observation.messageTokens); set bufferTokens to false or drop it",
            )
        _refuse_buffering(data, "observation")
        for key, snake, why in (
            ("bufferOnIdle", "buffer_on_idle", "background buffering is not built"),
            ("threadTitle", "thread_title", "use the top-level generate_title for thread titles"),
            ("manageWorkingMemory", "manage_working_memory", "working memory is managed by its tool"),
        ):
            value = data.get(key, data.get(snake))
            if value is not None and value is not False:
                raise UnsupportedOMOptionError(f"observation.{snake}", f"{why}; drop {key}")
        if data.get("extract") not in (None, []):
            raise UnsupportedOMOptionError("observation.extract", "extractors are not built; drop extract")


class ReflectionConfig(_Refusing):
    """``reflection``: when the Reflector runs (``observation_tokens`` of observations, 40,000) and how."""

    model: Any = None
    instruction: str | None = None
    observation_tokens: int = Field(default=DEFAULT_OBSERVATION_TOKENS, ge=1, strict=True)
    model_settings: ModelSettings = Field(default_factory=ModelSettings)
    provider_options: dict[str, Any] | None = None
    continuation_hints: bool | dict[str, bool] | None = None

    _dropped = ("extract", *_ACTIVATION_KEYS)

    @classmethod
    def _refuse(cls, data: Mapping[str, Any]) -> None:
        _refuse_buffering(data, "reflection")
        if data.get("extract") not in (None, []):
            raise UnsupportedOMOptionError("reflection.extract", "extractors are not built; drop extract")


class RetrievalConfig(_Options):
    """``retrieval``: the ``recall`` tool over the messages behind observation groups; ``vector`` adds the
    semantic search over the ``memory_observations_<dim>`` index; ``scope`` (default ``resource``) what the
    tool may browse."""

    vector: bool = Field(default=False, strict=True)
    scope: OMScope = "resource"
    instructions: str | None = None


#: A lifecycle hook: called with one dict (Mastra's hook argument, snake_case keys); may be async.
Hook = Callable[[dict[str, Any]], Any]


class ObserveHooks(_Options):
    """Mastra's lifecycle ``hooks``: ``on_observation_start/end``, ``on_reflection_start/end``. The end hooks
    receive ``usage`` (the model call's tokens) and ``error`` when the cycle failed. A hook's own failure is
    logged, never fails the cycle (Mastra's default ``hookExecution``)."""

    on_observation_start: Hook | None = None
    on_observation_end: Hook | None = None
    on_reflection_start: Hook | None = None
    on_reflection_end: Hook | None = None

    @model_validator(mode="before")
    @classmethod
    def _transforms(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            for key in ("beforeObservation", "afterObservation", "beforeReflection", "afterReflection"):
                if data.get(key) is not None:
                    raise UnsupportedOMOptionError(
                        f"hooks.{key}", "transform hooks are not built; only the lifecycle hooks are"
                    )
        return data


class ObservationalMemoryOptions(_Refusing):
    """Mastra's ``observationalMemory`` object (docs/spec.md §5.14). ``True`` in ``MemoryConfig`` means all
    these defaults; ``False``, ``None`` or ``enabled=False`` turn it off."""

    enabled: bool = Field(default=True, strict=True)
    model: Any = None
    scope: OMScope = "thread"
    share_token_budget: bool = Field(default=False, strict=True)
    retrieval: bool | RetrievalConfig = False
    hooks: ObserveHooks | None = None
    observation: ObservationConfig = Field(default_factory=ObservationConfig)
    reflection: ReflectionConfig = Field(default_factory=ReflectionConfig)
    temporal_markers: Literal[False] = False

    _dropped = (*_ACTIVATION_KEYS, "hookExecution", "hook_execution")

    @classmethod
    def _refuse(cls, data: Mapping[str, Any]) -> None:
        _refuse_buffering(data, "")
        if data.get("temporalMarkers", data.get("temporal_markers")) is True:
            raise UnsupportedOMOptionError(
                "temporal_markers", "temporal-gap markers are not built; drop temporalMarkers"
            )
        if data.get("hookExecution", data.get("hook_execution")) not in (None, "non-blocking"):
            raise UnsupportedOMOptionError(
                "hook_execution", "hooks never block a cycle here; drop hookExecution"
            )

    @model_validator(mode="after")
    def _models(self) -> ObservationalMemoryOptions:
        # Mastra refuses a shared budget unless buffering is turned off explicitly (its default buffering
        # is off in resource scope); the same configurations load here.
        if self.share_token_budget and self.scope == "thread" and self.observation.buffer_tokens is not False:
            raise ValueError(
                "share_token_budget needs asynchronous buffering off, as in Mastra: add "
                "observation={'buffer_tokens': False} (observation: {bufferTokens: false})"
            )
        # Mastra: a top-level model and a per-agent model are exclusive (it throws when both are set).
        if self.model is not None and (
            self.observation.model is not None or self.reflection.model is not None
        ):
            raise ValueError(
                "observational_memory.model cannot be combined with observation.model or reflection.model; "
                "set either the shared model or the per-agent models"
            )
        return self

    @property
    def retrieval_config(self) -> RetrievalConfig | None:
        """The retrieval options (``True``: the defaults), or None when retrieval is off."""
        if self.retrieval is True:
            return RetrievalConfig()
        if isinstance(self.retrieval, RetrievalConfig):
            return self.retrieval
        return None

    @property
    def observer_model(self) -> Any:
        """The Observer's model: ``model``, else ``observation.model``, else ``reflection.model``."""
        if self.model is not None:
            return self.model
        return self.observation.model if self.observation.model is not None else self.reflection.model

    @property
    def reflector_model(self) -> Any:
        """The Reflector's model: ``model``, else ``reflection.model``, else ``observation.model``."""
        if self.model is not None:
            return self.model
        return self.reflection.model if self.reflection.model is not None else self.observation.model

    @property
    def is_default_model(self) -> bool:
        """Whether no model is set (or Mastra's ``"default"``): Mastra would use google/gemini-2.5-flash."""
        return self.observer_model in (None, "default") or self.reflector_model in (None, "default")


def normalize_observational_memory(value: Any) -> ObservationalMemoryOptions | None:
    """``observationalMemory`` as the options in force: ``True`` → defaults; ``False``/None/``enabled:
    False`` → None (off). Raises pydantic's ``ValidationError`` or :class:`UnsupportedOMOptionError`."""
    if value is None or value is False:
        return None
    if value is True:
        return ObservationalMemoryOptions()
    if isinstance(value, ObservationalMemoryOptions):
        options = value
    elif isinstance(value, Mapping):
        options = ObservationalMemoryOptions.model_validate(dict(value))
    else:
        raise ValueError("observational_memory must be True, False, None or an options object")
    return options if options.enabled else None
