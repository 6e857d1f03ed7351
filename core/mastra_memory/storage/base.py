"""``MemoryStorage``: threads, messages and resources (docs/spec.md §4), written once as a template.

Every public method validates its arguments before any I/O (:mod:`.arguments`), then runs one unit of
work through :meth:`~.hooks.StorageHooks._run_unit` that calls the backend's hooks (:mod:`.hooks`). The
class composes sibling parts, each built on the hooks class alone: :mod:`.threads` and :mod:`.resources`
(records by id), :mod:`.clone` (``clone_thread``), :mod:`.pages` (``list_*``: pages and include windows,
§4.3/§4.4), :mod:`.writes` (message writes and ``updated_at`` bumps, §4.5) and :mod:`.thread_ops`
(moving and archiving threads) and :mod:`.observational` (observational memory, §4.8). This module
adds the lifecycle and the capability declaration. Nothing of the contract is left for a backend to
repeat.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..capabilities import StorageCapabilities
from .clone import ThreadClone
from .observational import ObservationalMemoryStorage
from .pages import StoragePages
from .resources import ResourceRecords
from .thread_ops import ThreadOperations
from .threads import ThreadRecords
from .writes import MessageWrites

__all__ = ["MemoryStorage", "storage_capabilities"]


async def _nothing(tx: Any) -> None:
    return None


class MemoryStorage(
    ThreadRecords,
    ResourceRecords,
    ThreadClone,
    MessageWrites,
    ThreadOperations,
    StoragePages,
    ObservationalMemoryStorage,
):
    """Base class of every memory storage: the public contract of docs/spec.md §4.2 over backend hooks.

    Subclasses set ``store_name`` and implement the ``_``-prefixed hooks of `StorageHooks`; every
    method is async and every model argument also accepts a (camelCase) dict. ``capabilities`` is what
    `storage_capabilities` reports; a backend that cannot isolate include windows by resource sets
    ``resource_scope=False`` (docs/spec.md §4).
    """

    capabilities: ClassVar[StorageCapabilities] = StorageCapabilities()

    async def init(self) -> None:
        """Create the schema idempotently (every other method also does this on first use)."""
        await self._run_unit("INIT", _nothing, write=True)

    async def close(self) -> None:
        """Release connections; a closed storage reopens on next use. The default has nothing to release."""
        return None


def storage_capabilities(storage: object) -> StorageCapabilities:
    """What a storage declares in its ``capabilities`` attribute; undeclared storages get the defaults."""
    declared = getattr(storage, "capabilities", None)
    if isinstance(declared, StorageCapabilities):
        return declared
    nested = getattr(declared, "storage", None)
    return nested if isinstance(nested, StorageCapabilities) else StorageCapabilities()
