"""How a storage backend's own exceptions become :class:`~mastra_memory.errors.StorageError`, written once.

Every storage reports a failed call the same way (docs/spec.md §4.2: ids
``MASTRA_STORAGE_<STORE>_<OPERATION>_<STATUS>``; §6.6: backend errors are wrapped as ``StorageError``): a
lost connection is ``CONNECTION_FAILED`` and says where the server is and what to check, any other failure
of the backend is ``FAILED``. A backend declares only what is its own, as a :class:`BackendErrors` from
:meth:`~mastra_memory.storage.StorageHooks._backend_errors`; the template reports it around every unit of
work.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import StorageError, error_id

__all__ = ["BackendErrors"]


def _never(exc: BaseException) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class BackendErrors:
    """What a storage backend says about its own exceptions; `storage_error` does the rest.

    Attributes:
        database: how messages name the backend, e.g. ``"PostgreSQL"``.
        types: the backend's exception types; any other exception passes through unchanged.
        where: the server or file the storage uses, named in the message of a connection failure.
        details: the ``details`` of every error; ``None`` means ``{"where": where}``.
        is_connection_lost: which of those exceptions mean the server could not be reached, closed the
            connection or ran out of time (status ``CONNECTION_FAILED``); by default none do.
        lost: what happened to the connection, as the message says it after "<database> at <where>".
        connection_hint: what to check after a connection failure.
        hint: what to check after any other failure (``""``: the backend's own message says enough).
    """

    database: str
    types: tuple[type[Exception], ...]
    where: str
    details: Mapping[str, Any] | None = None
    is_connection_lost: Callable[[BaseException], bool] = _never
    lost: str = "is unreachable or closed the connection"
    connection_hint: str = "check that the server is running"
    hint: str = ""

    def storage_error(self, store: str, operation: str, exc: Exception) -> StorageError:
        """The StorageError reporting ``exc`` (one of `types`) raised during ``operation``."""
        what = operation.lower().replace("_", " ")
        if self.is_connection_lost(exc):
            message = (
                f"{self.database} at {self.where} {self.lost} during {what}: {exc}; {self.connection_hint}"
            )
            status = "CONNECTION_FAILED"
        else:
            message, status = f"{self.database} {what} failed: {exc}", "FAILED"
            if self.hint:
                message += f"; {self.hint}"
        details = {"where": self.where} if self.details is None else dict(self.details)
        return StorageError(message, id=error_id("STORAGE", store, operation, status), details=details)
