"""A store keeps working when it is used from one event loop after another (scripts, sync wrappers).

Each pool belongs to the event loop that opened it and is closed on that loop before the loop ends, so an
``asyncio.run`` never waits forever for the pool's tasks and never leaves connections open behind it
(see ``connection._LoopPool``). Every ``asyncio.run`` here runs in a thread with a time bound, so a hang
fails the test with the stacks of the tasks the loop is still waiting for.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import threading
import time
import uuid
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import psycopg
import pytest
from mastra_memory import sync

from mastra_memory_pgvector import PgVectorSettings
from mastra_memory_pgvector.storage import PgStorage
from mastra_memory_pgvector.store import PgVector

T = TypeVar("T")

BOUND = 30.0  # seconds for one asyncio.run, which takes milliseconds here
ROUNDS = 12  # before the fix, most rounds of a store with pool_min_size=4 hung, and every one leaked


def run_bounded(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``asyncio.run(make())``, failing with the pending tasks' stacks when it takes over BOUND seconds."""
    box: dict[str, Any] = {}
    loops: list[asyncio.AbstractEventLoop] = []

    def factory() -> asyncio.AbstractEventLoop:
        loops.append(asyncio.new_event_loop())
        return loops[-1]

    def target() -> None:
        try:
            with asyncio.Runner(loop_factory=factory) as runner:
                box["result"] = runner.run(make())
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, name="bounded-asyncio-run", daemon=True)
    thread.start()
    thread.join(BOUND)
    if thread.is_alive():
        pending = []
        for task in asyncio.all_tasks(loops[0]):
            frames = "; ".join(
                f"{f.f_code.co_filename.rsplit('site-packages/', 1)[-1]}:{f.f_lineno} {f.f_code.co_name}"
                for f in task.get_stack(limit=4)
            )
            pending.append(f"{task.get_name()} (cancelling={task.cancelling()}) at {frames}")
        pytest.fail(f"asyncio.run did not return within {BOUND} s; still waiting for: {pending}")
    if "error" in box:
        raise box["error"]
    return box["result"]  # type: ignore[no-any-return]


def backends(pg_url: str, application_name: str, *, settle: bool = True) -> int:
    """The server's sessions named ``application_name``; with ``settle``, once those just closed have
    gone (their backends exit a moment after the client closes; up to 5 s)."""
    deadline = time.monotonic() + (5.0 if settle else 0.0)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        while True:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (application_name,)
            ).fetchone()
            count = int(row[0]) if row else 0
            if count == 0 or time.monotonic() > deadline:
                return count
            time.sleep(0.02)


def shut_down(loop: asyncio.AbstractEventLoop) -> None:
    """What asyncio.run does at the end: cancel the loop's tasks and wait for them (up to BOUND), close it."""
    tasks = asyncio.all_tasks(loop)
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.wait(tasks, timeout=BOUND))
    assert all(task.done() for task in tasks), [t.get_name() for t in tasks if not t.done()]
    loop.close()


def tagged(settings: PgVectorSettings, **update: Any) -> PgVectorSettings:
    """``settings`` with an application_name of its own, to count its sessions on the server."""
    return settings.model_copy(update={"application_name": f"loops-{uuid.uuid4().hex[:12]}", **update})


def test_a_store_survives_a_new_event_loop(settings: PgVectorSettings) -> None:
    store = PgVector(settings)
    asyncio.run(store.create_index("loops", 2))
    asyncio.run(store.upsert("loops", [[1.0, 0.0]], [{"a": 1}], ["x"]))
    hits = asyncio.run(store.query("loops", [1.0, 0.0], top_k=1))
    assert [(h.id, h.score, h.metadata) for h in hits] == [("x", 1.0, {"a": 1})]
    asyncio.run(store.close())


@pytest.mark.parametrize("pool_min_size", [1, 4])
def test_each_asyncio_run_returns_and_closes_its_pool(
    settings: PgVectorSettings, pg_url: str, pool_min_size: int
) -> None:
    """The steps above, round after round; after each asyncio.run no session of the store is left.

    With ``pool_min_size=4`` the pool is still opening connections in the background when each short
    call returns, which is when the loop's shutdown used to strand a psycopg_pool worker (a hang)."""
    left: list[str] = []
    for round_ in range(ROUNDS):
        mine = tagged(settings, pool_min_size=pool_min_size)
        store = PgVector(mine)
        steps: list[tuple[str, Callable[[], Coroutine[Any, Any, Any]]]] = [
            ("create_index", functools.partial(store.create_index, "loops", 2)),
            ("upsert", functools.partial(store.upsert, "loops", [[1.0, 0.0]], [{"a": round_}], ["x"])),
            ("query", functools.partial(store.query, "loops", [1.0, 0.0], top_k=1)),
            ("close", store.close),
        ]
        for label, step in steps:
            result = run_bounded(step)
            if label == "query":
                assert [(h.id, h.metadata) for h in result] == [("x", {"a": round_})]
            if count := backends(pg_url, mine.application_name):
                left.append(f"round {round_}: {count} sessions open after asyncio.run({label})")
    assert not left, left


def test_the_storage_shares_the_connection_layer(settings: PgVectorSettings, pg_url: str) -> None:
    mine = tagged(settings, pool_min_size=4)
    for round_ in range(ROUNDS // 3):
        storage = PgStorage(mine)
        run_bounded(storage.init)
        run_bounded(functools.partial(storage.save_thread, {"id": f"t{round_}", "resource_id": "r"}))
        thread = run_bounded(functools.partial(storage.get_thread_by_id, f"t{round_}"))
        assert thread is not None
        assert thread.resource_id == "r"
        assert backends(pg_url, mine.application_name) == 0
        run_bounded(storage.close)


def test_close_from_another_loop_closes_an_idle_loops_pool(settings: PgVectorSettings, pg_url: str) -> None:
    mine = tagged(settings)
    store = PgVector(mine)
    idle = asyncio.new_event_loop()
    try:
        idle.run_until_complete(asyncio.wait_for(store.create_index("idle", 2), BOUND))
        # That loop is alive, so its pool stays open until closed.
        assert backends(pg_url, mine.application_name, settle=False) > 0
        run_bounded(store.close)
        assert backends(pg_url, mine.application_name) == 0
        idle.run_until_complete(asyncio.wait_for(store.upsert("idle", [[1.0, 0.0]], ids=["x"]), BOUND))
        hits = run_bounded(lambda: store.query("idle", [1.0, 0.0], top_k=1))
        assert [h.id for h in hits] == ["x"]
        idle.run_until_complete(asyncio.wait_for(store.close(), BOUND))
        assert backends(pg_url, mine.application_name) == 0
    finally:
        shut_down(idle)  # the pool closed from the other loop still has its tasks here: they end


def test_close_from_another_thread_closes_that_loops_pool(settings: PgVectorSettings, pg_url: str) -> None:
    mine = tagged(settings)
    store = PgVector(mine)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="other-loop", daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(store.create_index("threaded", 2), loop).result(BOUND)
        assert backends(pg_url, mine.application_name, settle=False) > 0
        run_bounded(store.close)
        assert backends(pg_url, mine.application_name) == 0
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(BOUND)
        shut_down(loop)


# The pool's tasks on the closed loop can only be destroyed: their coroutines complain when collected.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_connections_of_a_loop_closed_without_shutdown_are_closed_on_next_use(
    settings: PgVectorSettings, pg_url: str
) -> None:
    mine = tagged(settings)
    store = PgVector(mine)
    abandoned = asyncio.new_event_loop()
    abandoned.run_until_complete(asyncio.wait_for(store.create_index("abandoned", 2), BOUND))
    abandoned.close()  # without cancelling its tasks, unlike asyncio.run: nothing ran to close the pool
    assert backends(pg_url, mine.application_name, settle=False) > 0
    assert run_bounded(store.list_indexes) == ["abandoned"]
    assert backends(pg_url, mine.application_name) == 0
    run_bounded(store.close)
    gc.collect()  # here, under the filter above


def test_the_sync_facade(settings: PgVectorSettings) -> None:
    store = sync.wrap(PgVector(settings))
    store.create_index("facade", 2, "euclidean")
    store.upsert("facade", [[0.0, 0.0], [3.0, 4.0]], ids=["origin", "far"])
    hits = store.query("facade", [0.0, 0.0], top_k=2)
    assert [(h.id, h.score) for h in hits] == [("origin", 1.0), ("far", 1 / 6)]
    store.close()
