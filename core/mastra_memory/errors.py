"""Typed errors. Every error says what happened and what to do about it.

All errors derive from `MastraMemoryError`. Errors caused by the caller's input subclass
`ValidationError` (and therefore ``ValueError``); they are raised before any I/O.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pydantic import ValidationError as PydanticValidationError

Category = Literal["USER", "SYSTEM", "THIRD_PARTY"]

_NON_ID_CHARS = re.compile(r"[^A-Z0-9]+")


def error_id(kind: str, store: str, operation: str, status: str) -> str:
    """Build an error id such as ``MASTRA_VECTOR_SQLITE_UPSERT_EMPTY_VECTORS``.

    ``kind`` is ``VECTOR`` or ``STORAGE``; every part is upper-cased and reduced to ``[A-Z0-9_]``.
    """
    parts = [kind, store, operation, status]
    return "MASTRA_" + "_".join(_NON_ID_CHARS.sub("_", p.upper()).strip("_") for p in parts if p)


def pydantic_problems(
    exc: PydanticValidationError, *, root: str | None = None, strip_value_error: bool = False
) -> list[str]:
    """Each problem of a pydantic ``ValidationError`` as ``location: message``, for our own error text.

    ``root`` names an empty location (``None``: the message alone); ``strip_value_error`` drops the
    ``Value error, `` that pydantic puts before a validator's own message.
    """
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or root
        text = error["msg"].removeprefix("Value error, ") if strip_value_error else error["msg"]
        problems.append(f"{where}: {text}" if where else text)
    return problems


class MastraMemoryError(Exception):
    """Base of every error raised by mastra-memory.

    Attributes:
        id: a stable upper-snake-case identifier, e.g. ``MASTRA_VECTOR_PGVECTOR_QUERY_INVALID_TOP_K``.
        domain: the area that raised it (``VECTOR``, ``STORAGE``, ``MEMORY``, ``FILTER``, ``EMBEDDER``, ...).
        category: ``USER`` (fix the input), ``SYSTEM`` (our side) or ``THIRD_PARTY`` (the backend).
        details: structured context (index names, ids, dimensions); never message text.
    """

    default_category: Category = "SYSTEM"
    default_domain: str = "CORE"

    def __init__(
        self,
        message: str,
        *,
        id: str | None = None,
        domain: str | None = None,
        category: Category | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.domain = domain or self.default_domain
        self.category: Category = category or self.default_category
        self.id = id or f"MASTRA_{self.domain}_{type(self).__name__.upper()}"
        self.details: dict[str, Any] = dict(details or {})

    def __str__(self) -> str:
        return self.message


class ValidationError(MastraMemoryError, ValueError):
    """The caller's input is invalid. Raised before any I/O; nothing stored changed."""

    default_category: Category = "USER"


class ConfigError(ValidationError):
    """A configuration value is invalid or a required component is missing."""

    default_domain = "CONFIG"


class FilterError(ValidationError):
    """A vector filter is invalid. ``problems`` lists every problem found (the message joins them)."""

    default_domain = "FILTER"

    def __init__(self, problems: list[str] | str, **kwargs: Any) -> None:
        self.problems: list[str] = [problems] if isinstance(problems, str) else list(problems)
        super().__init__(", ".join(self.problems), **kwargs)


class UnsupportedFilterError(FilterError):
    """A valid filter uses an operator the adapter cannot express exactly. Raised before any I/O."""

    def __init__(self, operator: str, path: str | None, adapter: str, reason: str, **kwargs: Any) -> None:
        self.operator = operator
        self.path = path
        self.adapter = adapter
        self.reason = reason
        where = f" at {path}" if path else ""
        message = f"Operator {operator} is not supported by {adapter}{where}: {reason}"
        details = {"operator": operator, "path": path, "adapter": adapter, **kwargs.pop("details", {})}
        super().__init__([message], details=details, **kwargs)


class FilterValidationError(ValidationError, TypeError):
    """The storage-level message metadata filter (``recall(filter=...)``) is invalid."""

    default_domain = "STORAGE"


class CapabilityError(MastraMemoryError):
    """The adapter cannot do what was asked (e.g. a metadata-only query, an index type)."""

    default_category: Category = "USER"
    default_domain = "VECTOR"


class VectorStoreError(MastraMemoryError):
    """A vector store operation failed."""

    default_category: Category = "THIRD_PARTY"
    default_domain = "VECTOR"


class IndexNotFoundError(VectorStoreError, LookupError):
    """The named vector index does not exist. Create it with ``create_index`` first."""

    default_category: Category = "USER"


class IndexDimensionMismatchError(ValidationError):
    """A vector's dimension does not match the index it is written to or queried against."""

    default_domain = "VECTOR"


class StorageError(MastraMemoryError):
    """A memory storage operation failed."""

    default_category: Category = "THIRD_PARTY"
    default_domain = "STORAGE"


class ThreadNotFoundError(ValidationError, LookupError):
    """The thread does not exist. Create it first (``Memory.create_thread``)."""

    default_domain = "STORAGE"


class ThreadOwnershipError(ValidationError, PermissionError):
    """The thread belongs to another resource than the one requested."""

    default_domain = "MEMORY"


class ResourceScopeError(ValidationError):
    """Resource-scoped work was requested without a resource id."""

    default_domain = "MEMORY"


class EmbeddingError(MastraMemoryError):
    """The embedder failed or returned something unusable (wrong count, wrong dimension, non-finite)."""

    default_category: Category = "THIRD_PARTY"
    default_domain = "EMBEDDER"


class IndexingError(MastraMemoryError):
    """Messages were stored but writing their vectors failed. Run ``reindex_thread`` to retry."""

    default_domain = "MEMORY"


class VectorCleanupError(MastraMemoryError):
    """Storage changed but deleting the matching vectors failed. Safe to retry the same call."""

    default_domain = "MEMORY"


class SettleTimeoutError(MastraMemoryError, TimeoutError):
    """``Memory.settled(timeout=...)`` ran out of time with background work still pending; the work keeps
    running, so calling ``settled()`` again waits for the rest."""

    default_domain = "MEMORY"


class PluginError(MastraMemoryError):
    """A plugin could not be found, loaded or configured."""

    default_category: Category = "USER"
    default_domain = "PLUGINS"


class TokenLimitError(MastraMemoryError):
    """The context (or one message, or the response) is over a ``TokenLimiter`` limit with
    ``strategy="abort"``. ``details`` holds ``limit`` and ``tokens``; raise the limit, trim the input, or use
    ``strategy="truncate"``."""

    default_category: Category = "USER"
    default_domain = "MEMORY"


class ModelError(MastraMemoryError):
    """A chat model (docs/spec.md §5.13) failed: rejected the request, failed after retries, timed out, or
    answered with a body that is not a chat completion."""

    default_category: Category = "THIRD_PARTY"
    default_domain = "MODEL"


class ModelOutputError(ModelError):
    """The model answered, but not with valid output for the requested JSON schema (docs/spec.md §5.13);
    ``reply`` holds the reply as received so the caller can log it or retry with another prompt."""

    def __init__(self, message: str, *, reply: Any, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.reply = reply


class SemanticRecallOffWarning(UserWarning):
    """``Memory.recall`` got a ``vector_search_string`` while semantic recall is off (``Memory()``'s
    default, as in Mastra): no search runs and the result holds history only. Turn it on with
    ``options={"semanticRecall": True}`` (or per call with ``thread_config=``), or drop the string; silence
    it with ``warnings.filterwarnings("ignore", category=SemanticRecallOffWarning)`` (docs/spec.md §5.3)."""
