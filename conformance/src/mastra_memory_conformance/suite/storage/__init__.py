"""Memory storage (docs/spec.md §4): threads, messages, include windows, resource isolation, writes and bumps.

``MemoryStorageSuite`` runs against the target's ``MemoryStorage`` (targets without one are skipped with
"<adapter> provides no MemoryStorage"). It checks the exact algorithm of ``list_messages`` (§4.3) —
default order, the ``(created_at, id)`` tie-break in both directions, pages and ``has_more``, the
``per_page=0`` and ``per_page=False`` paths, include windows and the resource isolation scenario S1–S8 of
§8.3 — then ``list_threads`` (§4.4), the write rules of §4.5 (atomic saves, moves, merges, strictly
increasing ``updated_at``), the thread operations (moving a thread to another resource, archiving),
the §4.6 metadata filter, resources and observational memory (§4.8). The optional features
``clone_thread`` and ``list_messages_by_resource_id`` are checked when the storage declares them, and
must raise ``CapabilityError`` when it does not.

A target's backend lives for the whole session, so every test writes under its own random prefix
(thread, resource and message ids), and listings that span resources are narrowed by a metadata marker.

``MemoryStorageSuite`` is one class made of one part per job, each in its own module: :mod:`.isolation`
(S1–S8), :mod:`.threads`, :mod:`.messages` (``list_messages``), :mod:`.thread_listing`,
:mod:`.message_writes`, :mod:`.ownership`, :mod:`.thread_ops`, :mod:`.resources` (with the optional
features) and :mod:`.observational`; :mod:`.base` holds what they share.
"""

from __future__ import annotations

import pytest

from .isolation import ResourceIsolationSuite
from .message_writes import MessageWritesSuite
from .messages import MessageListingSuite
from .observational import ObservationalMemorySuite
from .ownership import WriteOwnershipSuite
from .resources import ResourcesSuite
from .thread_listing import ThreadListingSuite
from .thread_ops import ThreadOperationsSuite
from .threads import ThreadsSuite

__all__ = [
    "MemoryStorageSuite",
    "MessageListingSuite",
    "MessageWritesSuite",
    "ObservationalMemorySuite",
    "ResourceIsolationSuite",
    "ResourcesSuite",
    "ThreadListingSuite",
    "ThreadOperationsSuite",
    "ThreadsSuite",
    "WriteOwnershipSuite",
]


# pytest collects the tests of base classes in reverse MRO order: the parts are listed last to first so
# that the tests run, and the report lists them, in the order of docs/spec.md §4 kept by the modules.
@pytest.mark.asyncio
class MemoryStorageSuite(
    ObservationalMemorySuite,
    ResourcesSuite,
    ThreadOperationsSuite,
    WriteOwnershipSuite,
    MessageWritesSuite,
    ThreadListingSuite,
    MessageListingSuite,
    ThreadsSuite,
    ResourceIsolationSuite,
):
    """docs/spec.md §4 against the target's ``MemoryStorage``."""
