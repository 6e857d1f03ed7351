"""The fixtures every conformance test takes. They are parametrised over the targets chosen with
``--target`` (see :mod:`mastra_memory_conformance.plugin`); a test that uses none of them is untouched.

* ``conformance_target`` -- the :class:`ConformanceTarget` (session scope, one per selected target). The
  target is provisioned once per session when its first test starts and torn down when the session moves
  on to the next target; a target that cannot start skips each of its tests with
  ``target <name> unavailable: <reason>`` -- or, for a kind that needs only this machine (native, embedded,
  emulated), fails them under ``CI`` (:mod:`mastra_memory_conformance.missing`).
* ``target_settings`` -- the :class:`TargetSettings` the provisioner yielded.
* ``capabilities`` -- the adapter's ``AdapterCapabilities``, read from a created store (session scope).
* ``vector_store`` -- a fresh ``MastraVector`` per test, closed afterwards.
* ``index_name`` -- a unique portable index name (``conf_<8 hex>``); the index is deleted afterwards.
* ``storage`` -- a fresh, initialised ``MemoryStorage`` per test, or a skip when the target has none.
* ``conformance_dimension`` -- the vector dimension to use on this target (default 8).
* ``outcome`` -- annotates the test for the report: ``outcome.deviation(code)``,
  ``outcome.unsupported(operator)``.

The backend behind a target lives for the whole session: records written by one test are still there in
the next, so tests use their own index names, thread ids and resource ids.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

import pytest
import pytest_asyncio

from mastra_memory.capabilities import AdapterCapabilities
from mastra_memory.plugins import create_storage, create_vector

from .missing import missing
from .report import ConformanceReport, Outcome
from .targets import SELF_CONTAINED_KINDS, ConformanceTarget, TargetSettings, TargetUnavailable

if TYPE_CHECKING:
    from mastra_memory.storage import MemoryStorage
    from mastra_memory.vector import MastraVector

__all__ = [
    "KIT_KEY",
    "NO_TARGET_REASON",
    "OUTCOME_KEY",
    "KitSession",
    "capabilities",
    "conformance_dimension",
    "conformance_target",
    "index_name",
    "outcome",
    "storage",
    "target_settings",
    "vector_store",
]

NO_TARGET_REASON = "no --target given"


@dataclass
class KitSession:
    """The kit's state for one pytest session: the selected targets and the report being built."""

    targets: list[ConformanceTarget]
    report: ConformanceReport
    unavailable: dict[str, str] = field(default_factory=dict)
    settings: dict[str, TargetSettings] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        """Whether any target was selected (the plugin is otherwise inert apart from the guard)."""
        return bool(self.targets)


KIT_KEY = pytest.StashKey[KitSession]()
OUTCOME_KEY = pytest.StashKey[Outcome]()


def kit_session(config: pytest.Config) -> KitSession:
    """The kit state of this pytest run (created by the plugin's ``pytest_configure``)."""
    return config.stash[KIT_KEY]


def _unavailable(target: ConformanceTarget, reason: str) -> NoReturn:
    message = f"target {target.name} unavailable: {reason}"
    if target.kind in SELF_CONTAINED_KINDS:
        missing(message)  # a missing toolchain of this machine: skips here, fails under CI
    pytest.skip(message)  # an outside service (a URL, a Docker engine) that is not here, CI included


@pytest.fixture(scope="session")
def conformance_target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ConformanceTarget]:
    """The target this test runs against (parametrised by the plugin from ``--target``).

    The target is provisioned here, so every test that runs against it needs it up: a target that
    cannot start skips each of its tests with ``target <name> unavailable: <reason>`` (under ``CI`` a
    native, embedded or emulated one fails them).
    """
    target: ConformanceTarget | None = getattr(request, "param", None)
    if target is None:
        pytest.skip(NO_TARGET_REASON)
    kit = kit_session(request.config)
    name = target.name
    if name in kit.unavailable:
        _unavailable(target, kit.unavailable[name])
    manager = target.provision(tmp_path_factory.mktemp(f"target-{name}", numbered=True))
    try:
        settings = manager.__enter__()
    except TargetUnavailable as exc:
        kit.unavailable[name] = exc.reason
        kit.report.target_status(target, "unavailable", exc.reason)
        _unavailable(target, exc.reason)
    if not isinstance(settings, TargetSettings):
        manager.__exit__(None, None, None)
        raise TypeError(f"the provisioner of target {name!r} yielded {settings!r}, not TargetSettings")
    kit.settings[name] = settings
    kit.report.target_status(target, "provisioned")
    try:
        yield target
    finally:
        del kit.settings[name]
        manager.__exit__(None, None, None)


@pytest.fixture(scope="session")
def target_settings(conformance_target: ConformanceTarget, pytestconfig: pytest.Config) -> TargetSettings:
    """What the target's provisioner yielded: settings of the vector store, the storage, and options."""
    return kit_session(pytestconfig).settings[conformance_target.name]


def _close(store: MastraVector) -> None:
    # A private loop: asyncio.run() would reset the thread's current loop, which an adapter project's
    # own session-scoped loop may rely on. When a loop is already running in this thread (the fixture
    # was requested lazily from inside an async test), the private loop runs in a helper thread.
    def run() -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(store.close())
        finally:
            loop.close()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        run()
        return
    worker = threading.Thread(target=run, name="mastra-memory-conformance-close")
    worker.start()
    worker.join()


@pytest.fixture(scope="session")
def capabilities(
    conformance_target: ConformanceTarget, target_settings: TargetSettings, pytestconfig: pytest.Config
) -> AdapterCapabilities:
    """The capability manifest of the target's vector store (read once per target)."""
    if not conformance_target.has_vector:
        pytest.skip(f"{conformance_target.adapter} provides no MastraVector")
    store = create_vector(conformance_target.adapter, **target_settings.vector)
    try:
        manifest = store.capabilities
    finally:
        _close(store)
    if not isinstance(manifest, AdapterCapabilities):
        raise TypeError(f"{type(store).__name__}.capabilities is {manifest!r}, not AdapterCapabilities")
    kit_session(pytestconfig).report.manifest(conformance_target, manifest)
    return manifest


@pytest.fixture
def conformance_dimension(target_settings: TargetSettings) -> int:
    """The vector dimension to use on this target (``options["dimension"]``, default 8)."""
    return target_settings.dimension


@pytest_asyncio.fixture(loop_scope="function")
async def vector_store(
    conformance_target: ConformanceTarget, target_settings: TargetSettings, capabilities: AdapterCapabilities
) -> AsyncIterator[MastraVector]:
    """A fresh vector store of the target's adapter, closed after the test."""
    store = create_vector(conformance_target.adapter, **target_settings.vector)
    try:
        yield store
    finally:
        await store.close()


@pytest_asyncio.fixture(loop_scope="function")
async def index_name(vector_store: MastraVector) -> AsyncIterator[str]:
    """A unique portable index name; the index is deleted after the test if the test created it."""
    name = f"conf_{uuid.uuid4().hex[:8]}"
    yield name
    # list_indexes shows native names (Pinecone and S3 Vectors turn `_` into `-`).
    if vector_store.to_native_index_name(name) in await vector_store.list_indexes():
        await vector_store.delete_index(name)


@pytest_asyncio.fixture(loop_scope="function")
async def storage(
    conformance_target: ConformanceTarget, target_settings: TargetSettings
) -> AsyncIterator[MemoryStorage]:
    """A fresh, initialised memory storage of the target's adapter, or a skip when it has none."""
    if not conformance_target.has_storage or target_settings.storage is None:
        pytest.skip(f"{conformance_target.adapter} provides no MemoryStorage")
    store = create_storage(conformance_target.adapter, **target_settings.storage)
    await store.init()
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
def outcome(request: pytest.FixtureRequest, conformance_target: ConformanceTarget) -> Outcome:
    """Annotations of the current test for the report (a passed test without any is "pass")."""

    def manifest() -> AdapterCapabilities:
        caps: Any = request.getfixturevalue("capabilities")
        return caps  # type: ignore[no-any-return]

    result = Outcome(manifest)
    request.node.stash[OUTCOME_KEY] = result
    return result
