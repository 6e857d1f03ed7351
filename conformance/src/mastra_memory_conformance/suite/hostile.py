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

Why one module of this size: a module under ``suite`` is one conformance domain, and the report names a
test's domain after its module, so splitting it would split the domain's row in the conformance matrix.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any, Final

import pytest

from mastra_memory.capabilities import AdapterCapabilities
from mastra_memory.errors import MastraMemoryError, ValidationError, error_id
from mastra_memory.memory import Memory
from mastra_memory.metadata_limits import (
    MAX_METADATA_BYTES,
    MAX_METADATA_DEPTH,
    MAX_METADATA_KEYS,
    MAX_VECTOR_METADATA_BYTES,
    MAX_VECTOR_METADATA_KEYS,
)
from mastra_memory.plugins import create_storage
from mastra_memory.storage import MemoryStorage
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.vector import MastraVector
from mastra_memory.vector.records import MAX_DIMENSION, MAX_TOP_K

from ..datasets import make_vector, query_vector
from ..plugin import set_item
from ..targets import ConformanceTarget, TargetSettings
from . import Item, load, query_limit, settle
from .errors import HookCounter

__all__ = ["STORAGE_CASES", "VECTOR_CASES", "HostileInputSuite"]

#: A datetime that leaves the years 1-9999 once converted to UTC.
_BEYOND_UTC: Final = datetime(9999, 12, 31, 23, 0, tzinfo=timezone(timedelta(hours=-5)))


def _bad(value: object) -> Any:
    """A deliberately ill-typed argument (the validation under test is what rejects it)."""
    return value


def nested(levels: int, leaf: Any = 1) -> dict[str, Any]:
    """A dict nested ``levels`` deep: ``{"k": {"k": ... leaf}}``."""
    value: Any = leaf
    for _ in range(levels - 1):
        value = {"k": value}
    return {"k": value}


def deep_list(levels: int) -> list[Any]:
    """A list nested ``levels`` deep: ``[[... [1] ...]]``."""
    value: list[Any] = [1]
    for _ in range(levels - 1):
        value = [value]
    return value


def cyclic() -> dict[str, Any]:
    """A dict that contains itself."""
    value: dict[str, Any] = {"a": 1}
    value["self"] = value
    return value


def many_keys(total: int) -> dict[str, Any]:
    """``total`` keys spread over nested objects of 50 keys each."""
    return {f"g{g}": {f"k{i}": i for i in range(50)} for g in range(math.ceil(total / 50))}


# --- vector inputs ------------------------------------------------------------------------------------

VectorCall = Callable[[MastraVector, str, int], Awaitable[Any]]


@dataclass(frozen=True)
class VectorCase:
    """One bad vector-store input: the call (store, index, dimension), ``OPERATION`` and ``STATUS``."""

    label: str
    operation: str
    status: str
    call: VectorCall


def _vec(dim: int, first: Any = None, seed: int = 1) -> list[Any]:
    vector: list[Any] = make_vector(seed, dim)
    if first is not None:
        vector[0] = first
    return vector


def _upsert_meta(metadata: Any) -> VectorCall:
    return lambda s, i, d: s.upsert(i, [_vec(d)], [metadata], ids=["v0"])


def _update_meta(metadata: Any) -> VectorCall:
    return lambda s, i, d: s.update_vector(i, id="v0", update={"metadata": metadata})


def _v(label: str, operation: str, status: str, call: VectorCall) -> VectorCase:
    return VectorCase(label, operation, status, call)


#: Every bad vector-store input the suite replays.
VECTOR_CASES: Final[list[VectorCase]] = [
    # ids: a string is not a list of ids (it was split into one id per character)
    _v(
        "delete ids as a string",
        "DELETE_VECTORS",
        "INVALID_ID",
        lambda s, i, d: s.delete_vectors(i, ids="v0"),
    ),
    _v(
        "delete ids as bytes",
        "DELETE_VECTORS",
        "INVALID_ID",
        lambda s, i, d: s.delete_vectors(i, ids=_bad(b"v0")),
    ),
    _v(
        "delete ids as an int",
        "DELETE_VECTORS",
        "INVALID_ID",
        lambda s, i, d: s.delete_vectors(i, ids=_bad(5)),
    ),
    _v(
        "delete ids as a dict",
        "DELETE_VECTORS",
        "INVALID_ID",
        lambda s, i, d: s.delete_vectors(i, ids=_bad({"v": 1})),
    ),
    _v(
        "upsert ids as a string",
        "UPSERT",
        "INVALID_ID",
        lambda s, i, d: s.upsert(i, [_vec(d, seed=7), _vec(d, seed=8)], ids="v0"),
    ),
    _v(
        "upsert ids as a set",
        "UPSERT",
        "INVALID_ID",
        lambda s, i, d: s.upsert(i, [_vec(d)], ids=_bad({"v0"})),
    ),
    _v(
        "upsert a lone surrogate id",
        "UPSERT",
        "INVALID_ID",
        lambda s, i, d: s.upsert(i, [_vec(d)], ids=["v\ud800"]),
    ),
    _v(
        "delete a lone surrogate id",
        "DELETE_VECTOR",
        "INVALID_ID",
        lambda s, i, d: s.delete_vector(i, "v\udc00"),
    ),
    _v(
        "update a lone surrogate id",
        "UPDATE_VECTOR",
        "INVALID_ID",
        lambda s, i, d: s.update_vector(i, id="\ud800", update={"metadata": {"a": 1}}),
    ),
    # vectors: numbers only, finite in float32, short enough for float32 scores
    _v("upsert 1e39", "UPSERT", "INVALID_VECTOR", lambda s, i, d: s.upsert(i, [_vec(d, 1e39)], ids=["v0"])),
    _v("query 1e39", "QUERY", "INVALID_VECTOR", lambda s, i, d: s.query(i, _vec(d, 1e39))),
    _v(
        "update 1e39",
        "UPDATE_VECTOR",
        "INVALID_VECTOR",
        lambda s, i, d: s.update_vector(i, id="v0", update={"vector": _vec(d, 1e39)}),
    ),
    _v(
        "upsert 10**400",
        "UPSERT",
        "INVALID_VECTOR",
        lambda s, i, d: s.upsert(i, [_vec(d, 10**400)], ids=["v0"]),
    ),
    _v("query -(10**400)", "QUERY", "INVALID_VECTOR", lambda s, i, d: s.query(i, _vec(d, -(10**400)))),
    _v(
        "upsert a ragged vector",
        "UPSERT",
        "INVALID_VECTOR",
        lambda s, i, d: s.upsert(i, [_vec(d, [1])], ids=["v0"]),
    ),
    _v(
        "upsert a bool component",
        "UPSERT",
        "INVALID_VECTOR",
        lambda s, i, d: s.upsert(i, [_vec(d, True)], ids=["v0"]),
    ),
    _v("query a bool component", "QUERY", "INVALID_VECTOR", lambda s, i, d: s.query(i, _vec(d, False))),
    _v(
        "upsert length 1e20",
        "UPSERT",
        "INVALID_VECTOR",
        lambda s, i, d: s.upsert(i, [_vec(d, 1e20)], ids=["v0"]),
    ),
    _v("query length 2e19", "QUERY", "INVALID_VECTOR", lambda s, i, d: s.query(i, _vec(d, 2e19))),
    _v(
        "update length 1e20",
        "UPDATE_VECTOR",
        "INVALID_VECTOR",
        lambda s, i, d: s.update_vector(i, id="v0", update={"vector": _vec(d, 1e20)}),
    ),
    # metadata: bounded depth, keys and size; Unicode text; one dict per vector
    _v("metadata 33 levels deep", "UPSERT", "INVALID_METADATA", _upsert_meta(nested(MAX_METADATA_DEPTH + 1))),
    _v("metadata 126 levels deep", "UPSERT", "INVALID_METADATA", _upsert_meta(nested(126))),
    _v("metadata 10,000 levels deep", "UPSERT", "INVALID_METADATA", _upsert_meta(nested(10_000))),
    _v("metadata lists 40 deep", "UPSERT", "INVALID_METADATA", _upsert_meta({"a": deep_list(40)})),
    _v("cyclic metadata", "UPSERT", "INVALID_METADATA", _upsert_meta(cyclic())),
    _v(
        "metadata with too many keys",
        "UPSERT",
        "INVALID_METADATA",
        _upsert_meta(many_keys(MAX_VECTOR_METADATA_KEYS + 1)),
    ),
    _v(
        "metadata too large",
        "UPSERT",
        "INVALID_METADATA",
        _upsert_meta({"text": "x" * MAX_VECTOR_METADATA_BYTES}),
    ),
    _v("a lone surrogate value", "UPSERT", "INVALID_METADATA", _upsert_meta({"a": "x\ud800"})),
    _v("a lone surrogate key", "UPSERT", "INVALID_METADATA", _upsert_meta({"a\udfff": 1})),
    _v("a nested lone surrogate", "UPSERT", "INVALID_METADATA", _upsert_meta({"a": [{"b": ["\ud83d"]}]})),
    _v("a datetime beyond UTC", "UPSERT", "INVALID_METADATA", _upsert_meta({"when": _BEYOND_UTC})),
    _v("metadata not a dict", "UPSERT", "INVALID_METADATA", _upsert_meta(_bad("x"))),
    _v(
        "metadata a dict, not a list",
        "UPSERT",
        "INVALID_METADATA",
        lambda s, i, d: s.upsert(i, [_vec(d)], _bad({"a": 1}), ids=["v0"]),
    ),
    _v("update metadata 10,000 deep", "UPDATE_VECTOR", "INVALID_METADATA", _update_meta(nested(10_000))),
    _v("update cyclic metadata", "UPDATE_VECTOR", "INVALID_METADATA", _update_meta(cyclic())),
    _v("update a lone surrogate", "UPDATE_VECTOR", "INVALID_METADATA", _update_meta({"a": "\udc00"})),
    # sizes no backend holds
    _v(
        "dimension 10**9",
        "CREATE_INDEX",
        "INVALID_ARGS",
        lambda s, i, d: s.create_index(f"{i}_big", 10**9),
    ),
    _v(
        "dimension above the maximum",
        "CREATE_INDEX",
        "INVALID_ARGS",
        lambda s, i, d: s.create_index(f"{i}_big", MAX_DIMENSION + 1),
    ),
    _v("top_k 2**63", "QUERY", "TOP_K_TOO_LARGE", lambda s, i, d: s.query(i, _vec(d), top_k=2**63)),
    _v("top_k 10**400", "QUERY", "TOP_K_TOO_LARGE", lambda s, i, d: s.query(i, _vec(d), top_k=10**400)),
    _v(
        "top_k above the maximum",
        "QUERY",
        "TOP_K_TOO_LARGE",
        lambda s, i, d: s.query(i, _vec(d), top_k=MAX_TOP_K + 1),
    ),
]

#: The seeded records: single-character ids beside "v0", so splitting "v0" into characters shows.
_SEED_IDS: Final = ("v0", "v", "0", "r1")


# --- storage inputs -----------------------------------------------------------------------------------


@dataclass
class Seeded:
    """What a storage test stored: one thread with three messages, and one resource (ids under a prefix)."""

    prefix: str

    @property
    def thread(self) -> str:
        return f"{self.prefix}t"

    @property
    def resource(self) -> str:
        return f"{self.prefix}r"

    def message(self, n: int) -> str:
        return f"{self.prefix}m{n}"


StorageCall = Callable[[MemoryStorage, Seeded], Awaitable[Any]]


@dataclass(frozen=True)
class StorageCase:
    """One bad storage input: the call (storage, seeded ids), ``OPERATION`` and ``STATUS``."""

    label: str
    operation: str
    status: str
    call: StorageCall


def _message(seeded: Seeded, **fields: Any) -> dict[str, Any]:
    """A replacement of message 1 (``fields`` override its content, role, timestamps or id)."""
    return {"id": seeded.message(1), "thread_id": seeded.thread, "role": "user", "content": "x", **fields}


def _content(metadata: Any = None, **extra: Any) -> dict[str, Any]:
    return {"format": 2, "parts": [{"type": "text", "text": "replaced", **extra}], "metadata": metadata}


def _thread(seeded: Seeded, **fields: Any) -> dict[str, Any]:
    """A replacement of the seeded thread (``fields`` override its metadata, title or timestamps)."""
    return {"id": seeded.thread, "resource_id": seeded.resource, "title": "replaced", **fields}


def _save_thread(**fields: Any) -> StorageCall:
    return lambda s, x: s.save_thread(_thread(x, **fields))


def _save_message(**fields: Any) -> StorageCall:
    return lambda s, x: s.save_messages([_message(x, **fields)])


def _s(label: str, operation: str, status: str, call: StorageCall) -> StorageCase:
    return StorageCase(label, operation, status, call)


#: Every bad storage input the suite replays (each would replace or change a seeded record).
STORAGE_CASES: Final[list[StorageCase]] = [
    _s(
        "thread metadata 33 deep",
        "SAVE_THREAD",
        "INVALID_METADATA",
        _save_thread(metadata=nested(MAX_METADATA_DEPTH + 1)),
    ),
    _s("thread metadata 126 deep", "SAVE_THREAD", "INVALID_METADATA", _save_thread(metadata=nested(126))),
    _s(
        "thread metadata 10,000 deep",
        "SAVE_THREAD",
        "INVALID_METADATA",
        _save_thread(metadata=nested(10_000)),
    ),
    _s("cyclic thread metadata", "SAVE_THREAD", "INVALID_METADATA", _save_thread(metadata=cyclic())),
    _s(
        "thread metadata with too many keys",
        "SAVE_THREAD",
        "INVALID_METADATA",
        _save_thread(metadata=many_keys(MAX_METADATA_KEYS + 1)),
    ),
    _s(
        "thread metadata too large",
        "SAVE_THREAD",
        "INVALID_METADATA",
        _save_thread(metadata={"text": "x" * MAX_METADATA_BYTES}),
    ),
    _s(
        "thread metadata surrogate value",
        "SAVE_THREAD",
        "INVALID_METADATA",
        _save_thread(metadata={"a": "\ud800"}),
    ),
    _s(
        "thread metadata surrogate key",
        "SAVE_THREAD",
        "INVALID_METADATA",
        _save_thread(metadata={"\ud800": 1}),
    ),
    _s("thread metadata a string", "SAVE_THREAD", "INVALID_ARGS", _save_thread(metadata="x")),
    _s("thread title surrogate", "SAVE_THREAD", "INVALID_ARGS", _save_thread(title="t\ud800")),
    _s("thread created_at 10**20", "SAVE_THREAD", "INVALID_ARGS", _save_thread(created_at=10**20)),
    _s("thread created_at beyond UTC", "SAVE_THREAD", "INVALID_ARGS", _save_thread(created_at=_BEYOND_UTC)),
    _s(
        "update thread metadata 10,000 deep",
        "UPDATE_THREAD",
        "INVALID_METADATA",
        lambda s, x: s.update_thread(x.thread, metadata=nested(10_000)),
    ),
    _s(
        "update thread metadata too many keys",
        "UPDATE_THREAD",
        "INVALID_METADATA",
        lambda s, x: s.update_thread(x.thread, metadata=many_keys(MAX_METADATA_KEYS + 1)),
    ),
    _s(
        "update thread title surrogate",
        "UPDATE_THREAD",
        "INVALID_ARGS",
        lambda s, x: s.update_thread(x.thread, title="\udc00"),
    ),
    _s(
        "update thread metadata a string",
        "UPDATE_THREAD",
        "INVALID_ARGS",
        lambda s, x: s.update_thread(x.thread, metadata=_bad("x")),
    ),
    _s(
        "resource metadata 10,000 deep",
        "SAVE_RESOURCE",
        "INVALID_METADATA",
        lambda s, x: s.save_resource({"id": x.resource, "metadata": nested(10_000)}),
    ),
    _s(
        "resource working memory surrogate",
        "SAVE_RESOURCE",
        "INVALID_ARGS",
        lambda s, x: s.save_resource({"id": x.resource, "working_memory": "\ud800"}),
    ),
    _s(
        "update resource metadata cyclic",
        "UPDATE_RESOURCE",
        "INVALID_METADATA",
        lambda s, x: s.update_resource(x.resource, metadata=cyclic()),
    ),
    _s(
        "update resource working memory surrogate",
        "UPDATE_RESOURCE",
        "INVALID_ARGS",
        lambda s, x: s.update_resource(x.resource, working_memory="wm \ud800"),
    ),
    _s("message text surrogate", "SAVE_MESSAGES", "INVALID_MESSAGE", _save_message(content="a \ud800 b")),
    _s(
        "message metadata 10,000 deep",
        "SAVE_MESSAGES",
        "INVALID_MESSAGE",
        _save_message(content=_content(nested(10_000))),
    ),
    _s(
        "message metadata too many keys",
        "SAVE_MESSAGES",
        "INVALID_MESSAGE",
        _save_message(content=_content(many_keys(MAX_METADATA_KEYS + 1))),
    ),
    _s(
        "message metadata surrogate key",
        "SAVE_MESSAGES",
        "INVALID_MESSAGE",
        _save_message(content=_content({"\ud800": 1})),
    ),
    _s(
        "message part 10,000 deep",
        "SAVE_MESSAGES",
        "INVALID_MESSAGE",
        _save_message(content=_content(None, extra=nested(10_000))),
    ),
    _s("message created_at 10**20", "SAVE_MESSAGES", "INVALID_MESSAGE", _save_message(created_at=10**20)),
    _s(
        "message created_at -(10**20)",
        "SAVE_MESSAGES",
        "INVALID_MESSAGE",
        _save_message(created_at=-(10**20)),
    ),
    _s(
        "update message metadata 33 deep",
        "UPDATE_MESSAGES",
        "INVALID_METADATA",
        lambda s, x: s.update_messages(
            [{"id": x.message(1), "content": {"metadata": nested(MAX_METADATA_DEPTH + 1)}}]
        ),
    ),
    _s(
        "update message metadata 10,000 deep",
        "UPDATE_MESSAGES",
        "INVALID_ARGS",
        lambda s, x: s.update_messages([{"id": x.message(1), "content": {"metadata": nested(10_000)}}]),
    ),
    _s(
        "update message text surrogate",
        "UPDATE_MESSAGES",
        "INVALID_ARGS",
        lambda s, x: s.update_messages([{"id": x.message(1), "content": {"content": "\ud800"}}]),
    ),
    _s(
        "delete messages as a string",
        "DELETE_MESSAGES",
        "INVALID_IDS",
        lambda s, x: s.delete_messages(_bad(x.message(1))),
    ),
    _s(
        "delete messages as an int", "DELETE_MESSAGES", "INVALID_IDS", lambda s, x: s.delete_messages(_bad(5))
    ),
    _s(
        "list messages surrogate thread",
        "LIST_MESSAGES",
        "INVALID_THREAD_ID",
        lambda s, x: s.list_messages("\ud800"),
    ),
    _s(
        "list messages created_at 10**20",
        "LIST_MESSAGES",
        "INVALID_FILTER",
        lambda s, x: s.list_messages(x.thread, filter={"date_range": {"start": 10**20}}),
    ),
]


# --- the suite ----------------------------------------------------------------------------------------


def _check_typed(
    error: BaseException, kind: str, store: str, operation: str, status: str, label: str
) -> None:
    """A ``ValidationError`` with the id of the public operation, and a printable message."""
    assert isinstance(error, ValidationError), (
        f"{label}: expected a ValidationError, got {type(error).__module__}.{type(error).__name__}: {error!r}"
    )
    expected = error_id(kind, store, operation, status)
    assert error.id == expected, f"{label}: error id {error.id!r}, expected {expected!r}: {error}"
    str(error).encode("utf-8")  # the message never carries a lone surrogate


async def _raised(call: Callable[[], Awaitable[Any]]) -> BaseException | None:
    """What ``call`` raised (an untyped exception, or a panic that is no ``Exception``, too), or None."""
    try:
        await call()
    except BaseException as exc:  # a Rust panic is a BaseException: the test must see it
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        return exc
    return None


def _verdict(label: str, error: BaseException | None, damaged: bool) -> None:
    """Fail for accepted input and for damaged data, naming both when both happened."""
    if error is None:
        pytest.fail(
            f"{label}: the bad input was accepted{' and the stored records changed' if damaged else ''}"
        )
    assert not damaged, f"{label}: the stored records changed ({type(error).__name__}: {error!r})"


@pytest.mark.asyncio
class HostileInputSuite:
    """Bad input over the public API: a typed error before any I/O, and what was stored stays intact."""

    # --- vector store -------------------------------------------------------------------------------

    async def _vector_state(
        self, store: MastraVector, capabilities: AdapterCapabilities, index: str, dimension: int
    ) -> list[Any]:
        await settle(store, capabilities, index)
        top = query_limit(capabilities, 20)
        hits = await store.query(index, query_vector(dimension), top_k=top, include_vector=True)
        state: list[Any] = [
            (await store.describe_index(index)).count,
            sorted((h.id, sorted(h.metadata.items()), h.vector) for h in hits),
            sorted(
                h.id for h in await store.query(index, query_vector(dimension), top_k=top, filter={"n": 1})
            ),
        ]
        if capabilities.metadata_only_query:
            state.append(sorted(h.id for h in await store.query(index, None, top_k=top)))
        return state

    @pytest.mark.parametrize("case", [pytest.param(c, id=c.label.replace(" ", "-")) for c in VECTOR_CASES])
    async def test_bad_vector_input(
        self,
        request: pytest.FixtureRequest,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
        case: VectorCase,
    ) -> None:
        """docs/spec.md §3.3, §3.5, §3.6: a ValidationError with the operation's id before any backend hook
        runs; the count, a query (vectors and metadata included), a filtered query and the listing are
        unchanged."""
        set_item(request, case.label)
        dim = conformance_dimension
        await load(
            vector_store,
            capabilities,
            index_name,
            [
                Item(rid, make_vector(n + 1, dim), {"n": n, "tag": f"t{n}", "nested": {"x": n}})
                for n, rid in enumerate(_SEED_IDS)
            ],
            dim,
        )
        before = await self._vector_state(vector_store, capabilities, index_name, dim)
        with HookCounter(vector_store) as counter:
            error = await _raised(lambda: case.call(vector_store, index_name, dim))
            calls = dict(counter.calls)
        after = await self._vector_state(vector_store, capabilities, index_name, dim)
        _verdict(case.label, error, after != before)
        assert error is not None
        _check_typed(error, "VECTOR", capabilities.name, case.operation, case.status, case.label)
        assert not calls, f"{case.label}: validation must happen before any I/O, but hooks ran: {calls}"
        assert f"{index_name}_big" not in await vector_store.list_indexes()

    # --- storage ------------------------------------------------------------------------------------

    async def _seed_storage(self, storage: MemoryStorage) -> Seeded:
        seeded = Seeded(f"h{uuid.uuid4().hex[:8]}-")
        await storage.save_thread(
            {
                "id": seeded.thread,
                "resource_id": seeded.resource,
                "title": "kept",
                "metadata": {"a": [1, {"b": 2}]},
            }
        )
        await storage.save_messages(
            [
                {
                    "id": seeded.message(n),
                    "thread_id": seeded.thread,
                    "role": "user" if n % 2 else "assistant",
                    "content": {
                        "format": 2,
                        "parts": [{"type": "text", "text": f"kept {n}"}],
                        "metadata": {"n": n},
                    },
                    "created_at": 1_700_000_000_000 + n,
                }
                for n in range(3)
            ]
        )
        await storage.save_resource({"id": seeded.resource, "working_memory": "kept", "metadata": {"n": 1}})
        return seeded

    async def _storage_state(self, storage: MemoryStorage, seeded: Seeded) -> list[Any]:
        thread = await storage.get_thread_by_id(seeded.thread)
        resource = await storage.get_resource_by_id(seeded.resource)
        page = await storage.list_messages(seeded.thread, per_page=False)
        return [
            None if thread is None else thread.model_dump(mode="json"),
            None if resource is None else resource.model_dump(mode="json"),
            [m.model_dump(mode="json") for m in page.messages],
        ]

    @pytest.mark.parametrize("case", [pytest.param(c, id=c.label.replace(" ", "-")) for c in STORAGE_CASES])
    async def test_bad_storage_input(
        self, request: pytest.FixtureRequest, storage: MemoryStorage, case: StorageCase
    ) -> None:
        """docs/spec.md §4.1, §4.2: a ValidationError with the operation's id; the thread, its messages and
        the resource are exactly as stored."""
        set_item(request, f"storage: {case.label}")
        seeded = await self._seed_storage(storage)
        before = await self._storage_state(storage, seeded)
        error = await _raised(lambda: case.call(storage, seeded))
        _verdict(case.label, error, await self._storage_state(storage, seeded) != before)
        assert error is not None
        _check_typed(error, "STORAGE", storage.store_name, case.operation, case.status, case.label)

    async def test_reads_of_text_no_store_holds_find_nothing(
        self, request: pytest.FixtureRequest, storage: MemoryStorage
    ) -> None:
        """Ids with an unpaired surrogate cannot exist: reads by them return nothing, never an untyped
        exception."""
        set_item(request, "storage: reads of unpaired surrogates")
        seeded = await self._seed_storage(storage)
        assert await storage.get_thread_by_id("\ud800") is None
        assert await storage.get_resource_by_id("\udc00") is None
        assert await storage.list_messages_by_id(["\ud800", seeded.message(1)]) != []
        assert [m.id for m in await storage.list_messages_by_id(["\ud800"])] == []
        await storage.delete_messages(["\ud800"])
        await storage.delete_thread("\ud800")
        assert len((await storage.list_messages(seeded.thread, per_page=False)).messages) == 3

    # --- Memory -------------------------------------------------------------------------------------

    async def test_deep_thread_metadata_does_not_break_other_resources(
        self,
        request: pytest.FixtureRequest,
        conformance_target: ConformanceTarget,
        target_settings: TargetSettings,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        conformance_dimension: int,
        tmp_path: Path,
    ) -> None:
        """A thread created with metadata nested 126 levels deep (which once corrupted a Qdrant shard, so
        the next save_messages of every resource failed) is refused; another resource saves and recalls."""
        set_item(request, "memory: deep thread metadata")
        storage: MemoryStorage = (
            create_storage(conformance_target.adapter, **target_settings.storage)
            if conformance_target.has_storage and target_settings.storage is not None
            else SQLiteStorage(str(tmp_path / "memory.db"))
        )
        before = set(await vector_store.list_indexes())
        prefix = f"h{uuid.uuid4().hex[:8]}-"
        memory = Memory(
            storage=storage,
            vector=vector_store,
            embedder=f"hash/{conformance_dimension}",
            options={"lastMessages": 1, "semanticRecall": {"topK": 2, "messageRange": 0}},
        )
        try:
            for metadata in (nested(126), nested(10_000), cyclic()):
                error = await _raised(partial(memory.create_thread, f"{prefix}a", metadata=metadata))
                assert isinstance(error, ValidationError), f"create_thread with bad metadata: {error!r}"
                assert isinstance(error, MastraMemoryError)
            await memory.create_thread(f"{prefix}b", f"{prefix}tb", metadata={"plan": "pro"})
            await memory.save_messages(
                [
                    {
                        "id": f"{prefix}m1",
                        "thread_id": f"{prefix}tb",
                        "role": "user",
                        "content": "apples and pears",
                    },
                    {"id": f"{prefix}m2", "thread_id": f"{prefix}tb", "role": "user", "content": "rockets"},
                ]
            )
            for name in set(await vector_store.list_indexes()) - before:
                await settle(vector_store, capabilities, name)
            result = await memory.recall(
                f"{prefix}tb", resource_id=f"{prefix}b", vector_search_string="apples and pears"
            )
            assert f"{prefix}m1" in [h.message_id for h in result.hits]
        finally:
            await memory.flush()
            for name in set(await vector_store.list_indexes()) - before:
                await vector_store.delete_index(name)
            await storage.close()
