"""``Memory`` configuration (docs/spec.md §5.1, §5.2): Mastra's option names and defaults, camelCase accepted.

Build configurations with :meth:`MemoryConfig.from_any` and combine instance options with a per-call
``thread_config`` with :func:`merge_config`; both raise :class:`ConfigError` listing every problem.
A ``semantic_recall.filter`` is parsed once, when its configuration is validated: the
configuration keeps the filter document (for serialisation and merging) and its parsed AST
(:attr:`SemanticRecallConfig.filter_node`), which every search of that configuration reuses.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator
from pydantic import ValidationError as PydanticValidationError
from pydantic.alias_generators import to_camel

from ..errors import ConfigError, FilterError
from ..filters import Node, parse
from ..storage import MemoryStorage, storage_capabilities
from ..vector import PORTABLE_INDEX_NAME, IndexConfig
from .observational.options import (
    ObservationalMemoryOptions,
    UnsupportedOMOptionError,
    normalize_observational_memory,
)

Scope = Literal["thread", "resource"]
#: How recall ranks (docs/memory.md "Which embedder and mode to pick"): vectors alone, vectors fused with
#: the store's lexical index (a store without one refuses "hybrid"), or "auto" (the default): hybrid where
#: the store declares a lexical index and is not on Mastra's layout, vector elsewhere (docs/spec.md §5.2).
RecallMode = Literal["auto", "vector", "hybrid"]

DEFAULT_WORKING_MEMORY_TEMPLATE = """# User Information
- **First Name**:
- **Last Name**:
- **Location**:
- **Occupation**:
- **Interests**:
- **Goals**:
- **Events**:
- **Facts**:
- **Projects**:
"""


class _Config(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", arbitrary_types_allowed=True
    )


class FilterConfigError(ConfigError, FilterError):
    """``semantic_recall.filter`` is not a valid vector filter (docs/spec.md §5.2): both a ``ConfigError``
    and a
    ``FilterError`` (``problems`` lists what ``validate_filter`` found)."""

    def __init__(self, problems: list[str], where: str = "semantic_recall.filter") -> None:
        super().__init__(problems)
        self.message = f"invalid {where}: {', '.join(self.problems)}"
        self.args = (self.message,)


class MessageRange(_Config):
    """How many messages to include before and after each semantic hit."""

    before: int = Field(default=1, ge=0, strict=True)
    after: int = Field(default=1, ge=0, strict=True)


class SemanticRecallConfig(_Config):
    """``semantic_recall`` options. ``True`` in ``MemoryConfig`` means all these defaults."""

    top_k: int = Field(default=4, ge=1, strict=True)
    message_range: MessageRange = Field(default_factory=MessageRange)
    scope: Scope = "resource"
    mode: RecallMode = "auto"
    threshold: float | None = Field(default=None, strict=True)
    index_name: str | None = None
    index_config: IndexConfig | None = None
    filter: dict[str, Any] | None = None
    #: ``filter`` and the AST parsed from it (the document is kept to tell a replaced filter apart).
    _parsed_filter: tuple[dict[str, Any] | None, Node | None] = PrivateAttr(default=(None, None))

    @field_validator("message_range", mode="before")
    @classmethod
    def _range_from_int(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("message_range must be an int >= 0 or {before, after}")
        if isinstance(value, int):
            return {"before": value, "after": value}
        return value

    @field_validator("threshold")
    @classmethod
    def _finite_threshold(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("threshold must be a finite number")
        return value

    @field_validator("index_name")
    @classmethod
    def _portable_index_name(cls, value: str | None) -> str | None:
        if value is not None and not PORTABLE_INDEX_NAME.fullmatch(value):
            raise ValueError(
                f"index_name {value!r} is not in portable form: a lowercase letter followed by up to 62 "
                "lowercase letters, digits or underscores"
            )
        return value

    @field_validator("index_config", mode="before")
    @classmethod
    def _index_config(cls, value: Any) -> Any:
        return None if value is None else IndexConfig.from_any(value)

    @model_validator(mode="after")
    def _parse_filter(self) -> SemanticRecallConfig:
        # docs/spec.md §5.2: a FilterError surfaces at construction, not at the first recall; the AST is
        # kept, so no search of this configuration parses the filter again.
        self._parsed_filter = (self.filter, parse(self.filter))
        return self

    @property
    def filter_node(self) -> Node | None:
        """The parsed ``filter`` (None: no filter), parsed once when this configuration was validated."""
        document, node = self._parsed_filter
        if document is not self.filter:  # replaced without validation (model_copy(update=...))
            self._parsed_filter = (self.filter, parse(self.filter))
            node = self._parsed_filter[1]
        return node


class UnsupportedOptionError(ConfigError):
    """A Mastra option this project accepts in a configuration but does not implement (docs/spec.md §5.1):
    refused with what to use instead, never silently ignored."""

    def __init__(self, message: str, option: str) -> None:
        super().__init__(message, id="MASTRA_MEMORY_CONFIG_UNSUPPORTED_OPTION", details={"option": option})


class WorkingMemoryConfig(_Config):
    """Working memory options (docs/spec.md §5.8). ``agent_managed=False`` (Mastra's ``agentManaged``)
    keeps the data in the prompt read-only and offers no tool, as ``read_only`` does for working memory,
    while messages are still stored: another path owns the updates. ``version='stable'`` and
    ``use_state_signals=False`` are Mastra's defaults; ``'vnext'`` and ``True`` are refused [Δ]."""

    enabled: bool = Field(default=False, strict=True)
    template: str | None = None
    schema_: dict[str, Any] | type[BaseModel] | None = Field(default=None, alias="schema")
    scope: Scope = "resource"
    agent_managed: bool = Field(default=True, strict=True)
    version: Literal["stable", "vnext"] = "stable"
    use_state_signals: bool = Field(default=False, strict=True)

    @field_validator("version")
    @classmethod
    def _stable_only(cls, value: str) -> str:
        if value == "vnext":
            # docs/spec.md §5.8 [Δ]: Mastra's vnext tool is experimental and changes the tool's contract.
            raise UnsupportedOptionError(
                "working_memory.version='vnext' (Mastra's experimental working-memory tool) is not "
                "supported; drop version or set it to 'stable'",
                "working_memory.version",
            )
        return value

    @field_validator("use_state_signals")
    @classmethod
    def _no_state_signals(cls, value: bool) -> bool:
        if value:
            # docs/spec.md §5.8 [Δ]: state signals are a Mastra agent-loop feature with no counterpart here.
            raise UnsupportedOptionError(
                "working_memory.use_state_signals=True (Mastra's experimental state signals, a "
                "setWorkingMemory tool) is not supported; drop it: working memory is delivered in the "
                "system message with the updateWorkingMemory tool",
                "working_memory.use_state_signals",
            )
        return value

    @model_validator(mode="before")
    @classmethod
    def _removed_and_exclusive(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            if "use" in data:
                raise ValueError(
                    "working_memory.use was removed; drop it (tool-call updates are the only mode)"
                )
            schema = data.get("schema", data.get("schema_"))
            if data.get("template") is not None and schema is not None:
                raise ValueError("working_memory.template and working_memory.schema are mutually exclusive")
        return data

    @property
    def effective_template(self) -> str | None:
        """The Markdown template in force (the default outline unless a schema is used)."""
        if self.schema_ is not None:
            return None
        return self.template or DEFAULT_WORKING_MEMORY_TEMPLATE


class MessageHistoryConfig(_Config):
    """Mastra's ``messageHistory`` (``{maxTokens, atMaxRemoveTokens}``), checked by Mastra's rules: a token
    budget on the whole prompt (docs/spec.md §5.1, §5.12). ``max_tokens=0`` turns history off."""

    max_tokens: int | float = Field(ge=0, allow_inf_nan=False)
    at_max_remove_tokens: int | float | None = Field(default=None, ge=0, allow_inf_nan=False)

    @field_validator("max_tokens", "at_max_remove_tokens", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("must be a finite number >= 0")
        return value

    @model_validator(mode="after")
    def _remove_within_budget(self) -> MessageHistoryConfig:
        if self.at_max_remove_tokens is not None and self.at_max_remove_tokens > self.max_tokens:
            raise ValueError("atMaxRemoveTokens must be no greater than maxTokens")
        return self

    @property
    def remove_tokens(self) -> int | float:
        """``at_max_remove_tokens``, or Mastra's default of a quarter of ``max_tokens``."""
        value = self.at_max_remove_tokens
        return js_number(self.max_tokens * 0.25 if value is None else value)


def js_number(value: int | float) -> int | float:
    """``value`` as JavaScript writes it to JSON: a whole float as an int (``75.0`` → ``75``), so the
    boundary stored in thread metadata reads alike on both sides (docs/spec.md §5.12)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


@dataclass(frozen=True)
class HistoryLimits:
    """``last_messages`` and ``message_history`` resolved into one rule (Mastra's
    ``normalizeMessageHistoryConfig``, docs/spec.md §5.1): whether history loads, the count cap (None: no
    cap) and the token budget with what is freed when it is exceeded (None: no budget)."""

    enabled: bool
    max_messages: int | None
    max_tokens: int | float | None = None
    at_max_remove_tokens: int | float = 0


class TitleConfig(_Config):
    """Thread title generation (docs/spec.md §5.9). Inert, with one warning, when no model is available."""

    model: Any = None
    instructions: str | None = None
    min_messages: int = Field(default=1, ge=1, strict=True)
    #: Mastra's ``emitEvent``: ``False`` (its default) loads; ``True`` is refused [Δ] (docs/spec.md §5.9).
    emit_event: bool = Field(default=False, strict=True)

    @field_validator("emit_event")
    @classmethod
    def _no_emit_event(cls, value: bool) -> bool:
        if value:
            # Mastra holds a stream's finish chunk until the title is stored; there is no stream here.
            raise UnsupportedOptionError(
                "generate_title.emit_event=True (Mastra's emitEvent holds a stream's finish chunk until the "
                "title is stored) is not supported: this project has no stream events; drop emit_event",
                "generate_title.emit_event",
            )
        return value


class ThreadsConfig(_Config):
    """Mastra's ``threads`` container. Its ``generate_title`` has moved to the top level: set, it is refused
    as Mastra 1.31 refuses it (docs/spec.md §5.1)."""

    generate_title: Any = None

    @field_validator("generate_title")
    @classmethod
    def _moved(cls, value: Any) -> Any:
        if value is not None:
            raise UnsupportedOptionError(
                "threads.generate_title (threads.generateTitle) has moved: set the top-level "
                "generate_title (generateTitle) instead, as Mastra 1.31 requires",
                "threads.generate_title",
            )
        return value


class MemoryConfig(_Config):
    """Options of a ``Memory`` instance, and the type of a per-call ``thread_config``."""

    last_messages: int | Literal[False] = 10
    #: Deprecated (docs/spec.md §5.1): a token budget on the loaded history only, the newest of the
    #: ``last_messages`` messages that fit (§5.12). Mastra's budget is ``message_history``; not both.
    history_tokens: int | None = Field(default=None, ge=1, strict=True)
    #: Mastra's token budget on the whole prompt, with its per-thread boundary (docs/spec.md §5.1, §5.12).
    message_history: MessageHistoryConfig | None = None
    #: Mastra's ``retainFullInput``: ``MemoryInputFilter`` leaves the request's input as given (§5.12).
    retain_full_input: bool = Field(default=False, strict=True)
    semantic_recall: bool | SemanticRecallConfig = False
    working_memory: WorkingMemoryConfig = Field(default_factory=WorkingMemoryConfig)
    generate_title: bool | TitleConfig = False
    threads: ThreadsConfig | None = None
    read_only: bool = Field(default=False, strict=True)
    #: Mastra's ``observationalMemory`` (docs/spec.md §5.14): ``True``, its options object, or off
    #: (``False``/None/``enabled: False``); read through :attr:`observational`.
    observational_memory: bool | ObservationalMemoryOptions | None = None
    #: Mastra's ``filterIncompleteToolCalls``: tool calls still waiting for a result are left out of a prompt
    #: (True), or kept with a pending result (False); applied by ``incomplete_tool_calls`` (§5.11).
    filter_incomplete_tool_calls: bool = Field(default=True, strict=True)

    @field_validator("last_messages", mode="before")
    @classmethod
    def _last_messages(cls, value: Any) -> Any:
        if value is False:
            return False
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError("last_messages must be an int >= 0 or False")
        return value

    @model_validator(mode="after")
    def _history_budgets(self) -> MemoryConfig:
        if self.history_tokens is not None:
            if self.message_history is not None:
                raise ValueError(
                    "history_tokens and message_history are both set; history_tokens is deprecated: keep "
                    "message_history (messageHistory, Mastra's budget) and drop history_tokens"
                )
            warnings.warn(
                "history_tokens (historyTokens) is deprecated; use message_history={'max_tokens': N} "
                "(Mastra's messageHistory.maxTokens, a budget on the whole prompt)",
                DeprecationWarning,
                stacklevel=2,
            )
        return self

    @field_validator("observational_memory", mode="before")
    @classmethod
    def _observational_memory(cls, value: Any) -> Any:
        # A dict goes to the options model (its own checks and refusals, §5.14); bool/None stay as given.
        if isinstance(value, Mapping):
            return ObservationalMemoryOptions.model_validate(dict(value))
        return value

    @property
    def observational(self) -> ObservationalMemoryOptions | None:
        """The observational-memory options in force, or None when it is off (docs/spec.md §5.14)."""
        return normalize_observational_memory(self.observational_memory)

    @property
    def recall(self) -> SemanticRecallConfig | None:
        """The semantic recall options, or None when semantic recall is off."""
        if self.semantic_recall is True:
            return SemanticRecallConfig()
        if isinstance(self.semantic_recall, SemanticRecallConfig):
            return self.semantic_recall
        return None

    @property
    def history_limits(self) -> HistoryLimits:
        """``last_messages`` and ``message_history`` as one rule (docs/spec.md §5.1): with
        ``message_history``, ``last_messages`` caps the count only when it is set (no default 10)."""
        budget = self.message_history
        count: int | None = 0 if self.last_messages is False else self.last_messages
        if budget is None:
            return HistoryLimits(enabled=count != 0, max_messages=count)
        if "last_messages" not in self.model_fields_set:
            count = None
        return HistoryLimits(
            enabled=count != 0 and budget.max_tokens != 0,
            max_messages=count,
            max_tokens=js_number(budget.max_tokens),
            at_max_remove_tokens=budget.remove_tokens,
        )

    @property
    def history_on(self) -> bool:
        """Whether history is loaded: ``last_messages`` is neither 0 nor False and
        ``message_history.max_tokens`` is not 0 (docs/spec.md §5.1, §5.3)."""
        return self.history_limits.enabled

    @classmethod
    def from_any(cls, value: MemoryConfig | Mapping[str, Any] | None) -> MemoryConfig:
        """Validate ``value``; every problem is reported in one ConfigError."""
        if value is None:
            return cls()
        if isinstance(value, MemoryConfig):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(f"memory options must be a dict or MemoryConfig, got {type(value).__name__}")
        try:
            return cls.model_validate(dict(value))
        except PydanticValidationError as exc:
            raise config_error(exc, "memory options") from exc


def check_resource_scope(
    storage: MemoryStorage, config: SemanticRecallConfig | None, what: str = "SemanticRecall scope"
) -> None:
    """Resource scope needs a storage that isolates include windows by resource (docs/spec.md §5.2)."""
    if config is not None and config.scope == "resource" and not storage_capabilities(storage).resource_scope:
        raise ConfigError(
            f"{what}='resource' needs a storage that isolates include windows by resource; "
            f"{type(storage).__name__} declares resource_scope=False, so set scope='thread'"
        )


def config_error(exc: PydanticValidationError, what: str) -> ConfigError:
    """One ConfigError listing every problem; an invalid vector filter gives a ``FilterConfigError``."""
    for err in exc.errors():
        cause = (err.get("ctx") or {}).get("error")
        if isinstance(cause, FilterError):
            return FilterConfigError(cause.problems)
        if isinstance(cause, UnsupportedOptionError | UnsupportedOMOptionError):
            return cause
    return ConfigError(f"invalid {what}: {_problems(exc)}")


# Union branches pydantic names in error locations; they say nothing to a user.
_BRANCH_NAMES = frozenset(
    {
        "bool",
        "int",
        "SemanticRecallConfig",
        "TitleConfig",
        "ThreadsConfig",
        "MessageHistoryConfig",
        "ObservationalMemoryOptions",
    }
)


def _problems(exc: PydanticValidationError) -> str:
    errors = exc.errors()
    # For `bool | SemanticRecallConfig` given a dict, the bool branch's complaint is noise.
    meaningful = [
        e for e in errors if not (e["type"].startswith("bool_") and isinstance(e.get("input"), Mapping))
    ] or errors
    out = []
    for err in meaningful:
        loc = ".".join(
            str(p)
            for p in err["loc"]
            if not str(p).startswith(("function-", "tagged-union", "literal["))
            and str(p) not in _BRANCH_NAMES
        )
        msg = str(err["msg"]).removeprefix("Value error, ")
        out.append(f"{loc or 'options'}: {msg}")
    return "; ".join(dict.fromkeys(out))


def _set_fields(model: BaseModel) -> dict[str, Any]:
    """The fields a caller actually set, recursively, as plain data (snake_case)."""
    out: dict[str, Any] = {}
    for name in model.model_fields_set:
        value = getattr(model, name)
        out[name] = _set_fields(value) if isinstance(value, BaseModel) and name != "index_config" else value
    return out


def _deep_merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def merge_config(
    options: MemoryConfig, thread_config: MemoryConfig | Mapping[str, Any] | None
) -> MemoryConfig:
    """Deep-merge a per-call ``thread_config`` over the instance options (dicts merge; others replace).

    docs/spec.md §5.2: ``semantic_recall: False`` switches recall off for that call, and ``True`` is a
    scalar that replaces the instance's options: it means all defaults (§5.1), as in Mastra's deep merge.
    A dict over an instance ``True`` merges over the defaults.
    """
    if thread_config is None:
        return options
    override = _set_fields(MemoryConfig.from_any(thread_config))
    base = _set_fields(options)
    for name in ("semantic_recall", "observational_memory"):
        if base.get(name) is True and isinstance(override.get(name), dict):
            base[name] = {}
    return MemoryConfig.from_any(_deep_merge(base, override))
