"""Hostile input (issue 12; docs/spec.md §3.3, §3.5, §3.6, §4.1): a typed error, and nothing damaged.

``HostileInputSuite`` replays, on every target, the classes of bad input an attack on the public API found
(one test per input): metadata nested deeper than the limit (126 levels once corrupted a Qdrant shard for
good, 10,000 levels raised ``RecursionError``), cyclic, with too many keys or too many bytes, or with text
that is not Unicode; ids given as a string (once split into one id per character, so ``delete_vectors(ids=
"v0")`` deleted the records ``"v"`` and ``"0"``) or as a number; vector components beyond float32 (a record
updated with ``1e39`` vanished from every query while still counted), beyond the float range (``10**400``),
ragged or boolean, and vectors too long for float32 scores; a ``dimension`` or ``top_k`` no backend can
hold; timestamps outside the years 1–9999. Each must raise a ``ValidationError`` with the id
``MASTRA_<KIND>_<STORE>_<OPERATION>_<STATUS>`` — never an untyped exception, never a ``BaseException``
that is not an ``Exception`` — before any backend hook runs, and leave what was stored exactly as it was:
the count, a query with vectors and metadata, and (where the target lists without a vector) the listing.

The storage tests do the same against the target's ``MemoryStorage`` (thread, resource and message writes
with bad metadata, text or timestamps, checked against a snapshot of everything the test stored), and the
``Memory`` test checks that a thread created with deeply nested metadata by one resource is refused and
leaves another resource's messages and recall working.

Ids one tenant can choose must never reach another's records (issue 23; docs/spec.md §3.5, §5.4): an id
and the form an adapter maps ids to (its uuid5, ``mastra-<uuid5>``) are two records; ids holding U+0000
are stored, beside the ids an escape of it could produce; and a message named ``"<bob's id>#1"`` (once the
vector id of chunk 1 of bob's message) or after the uuid5 of bob's id, saved and deleted by another
resource, leaves bob's vectors and his recall as they were.

``HostileInputSuite`` is one class made of one part per job, each in its own module: :mod:`.vector_inputs`,
:mod:`.storage_inputs` and :mod:`.memory_inputs` (the bad input of issue 12), :mod:`.refused_keys`
(metadata keys a store refuses) and :mod:`.tenant_ids` (ids one tenant chooses); :mod:`.base` holds what
they share.
"""

from __future__ import annotations

import pytest

from .memory_inputs import HostileMemoryInputSuite
from .refused_keys import RefusedKeysSuite
from .storage_inputs import STORAGE_CASES, HostileStorageInputSuite
from .tenant_ids import TenantIdsSuite
from .vector_inputs import VECTOR_CASES, HostileVectorInputSuite

__all__ = [
    "STORAGE_CASES",
    "VECTOR_CASES",
    "HostileInputSuite",
    "HostileMemoryInputSuite",
    "HostileStorageInputSuite",
    "HostileVectorInputSuite",
    "RefusedKeysSuite",
    "TenantIdsSuite",
]


# pytest collects the tests of base classes in reverse MRO order: the parts are listed last to first so
# that the tests run, and the report lists them, in the order vector, storage and Memory input, refused
# keys, tenant ids.
@pytest.mark.asyncio
class HostileInputSuite(
    TenantIdsSuite,
    RefusedKeysSuite,
    HostileMemoryInputSuite,
    HostileStorageInputSuite,
    HostileVectorInputSuite,
):
    """Bad input over the public API: a typed error before any I/O, and what was stored stays intact."""
