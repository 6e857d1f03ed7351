"""Conformance targets: how the kit obtains a live backend for an adapter.

A target is an adapter name, a *kind* and a *provisioner*. The provisioner is a context manager factory:
it receives an empty temporary directory, starts (or connects to) the backend, yields the
:class:`TargetSettings` the fixtures pass to ``create_vector``/``create_storage``, and tears the backend
down on exit. A provisioner that cannot start its backend raises :class:`TargetUnavailable` with a reason;
the kit then skips every test of that target and prints the reason. It never passes them. Under ``CI`` a
target of a kind in :data:`SELF_CONTAINED_KINDS` fails them instead: it needs only this machine.

Kinds, most real first: ``url`` (an existing service named by an environment variable), ``docker``
(started with testcontainers when a Docker engine is reachable), ``native`` (a real server started from
locally installed software), ``embedded`` (the real engine in-process) and ``emulated`` (a local stand-in,
labelled as such in every report).

Plugins register targets through the kit's own hook, ``register_conformance_targets``
(:mod:`mastra_memory_conformance.hookspecs`), found through the entry-point group
``mastra_memory_conformance`` (:mod:`mastra_memory_conformance.registry`). This module imports nothing
but the standard library, so an adapter's ``testing/targets.py`` can import it cheaply.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias, TypedDict, Unpack, get_args

__all__ = [
    "DEFAULT_DIMENSION",
    "SELF_CONTAINED_KINDS",
    "TARGET_KINDS",
    "URL_ENV_VARS",
    "AddressSettings",
    "ConformanceTarget",
    "ProvisionFunction",
    "Provisioner",
    "RegisterConformanceTarget",
    "TargetKind",
    "TargetSettings",
    "TargetUnavailable",
    "address_target",
    "embedded_target",
    "provisioned_target",
    "required_env",
    "temporary_path",
    "url_target",
]

TargetKind = Literal["url", "docker", "native", "embedded", "emulated"]
TARGET_KINDS: Final[tuple[TargetKind, ...]] = get_args(TargetKind)

#: The kinds that need nothing but this machine (its software and toolchains), no outside service and no
#: Docker engine. One that cannot start fails its tests under CI rather than skipping them
#: (:mod:`mastra_memory_conformance.missing`), and a published matrix must have run every one of them.
SELF_CONTAINED_KINDS: Final[tuple[TargetKind, ...]] = ("native", "embedded", "emulated")

#: Vector dimension the suite uses unless a target's ``options["dimension"]`` says otherwise (docs/spec.md
#: §8.1).
DEFAULT_DIMENSION: Final = 8

#: The documented environment variables of the ``url`` targets of the adapters in this repository.
URL_ENV_VARS: Final[Mapping[str, str]] = {
    "qdrant": "MASTRA_MEMORY_TEST_QDRANT_URL",
    "pgvector": "MASTRA_MEMORY_TEST_PG_DSN",
    "opensearch": "MASTRA_MEMORY_TEST_OPENSEARCH_URL",
    "mongodb": "MASTRA_MEMORY_TEST_MONGODB_URI",
}


class TargetUnavailable(Exception):
    """Raised by a provisioner whose backend cannot be started or reached; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class TargetSettings:
    """What a provisioned target yields.

    ``vector`` are the keyword arguments of ``create_vector(adapter, **vector)``; ``storage`` those of
    ``create_storage(adapter, **storage)`` (``None`` when the target has no storage); ``options`` are hints
    for the suite, such as ``{"dimension": 4}``.
    """

    vector: dict[str, Any] = field(default_factory=dict)
    storage: dict[str, Any] | None = None
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def dimension(self) -> int:
        """The vector dimension the suite uses on this target (``options["dimension"]``, default 8)."""
        value = self.options.get("dimension", DEFAULT_DIMENSION)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"target option 'dimension' must be a positive integer, got {value!r}")
        return value


Provisioner = Callable[[Path], AbstractContextManager[TargetSettings]]


@dataclass(frozen=True)
class ConformanceTarget:
    """One way to obtain a live backend for ``adapter``.

    ``name`` is ``<adapter>-<kind>`` (``pgvector-docker``) or the bare adapter name for the adapter's
    default target (``sqlite``). ``adapter`` is the name the vector store (and the storage, if
    ``has_storage``) is registered under.
    """

    name: str
    adapter: str
    kind: TargetKind
    provision: Provisioner
    description: str = ""
    has_vector: bool = True
    has_storage: bool = False

    def __post_init__(self) -> None:
        if self.kind not in TARGET_KINDS:
            raise ValueError(
                f"target {self.name!r}: kind {self.kind!r} is not one of {', '.join(TARGET_KINDS)}"
            )
        if not self.name or any(c.isspace() or c == "," for c in self.name):
            raise ValueError(f"target name {self.name!r} must be non-empty without spaces or commas")
        if not (self.has_vector or self.has_storage):
            raise ValueError(f"target {self.name!r} provides neither a vector store nor a storage")

    @property
    def label(self) -> str:
        """``adapter (kind)``, the column heading of the report."""
        return f"{self.adapter} ({self.kind})"


#: ``register(target)``, the callback of the ``register_conformance_targets`` hook.
RegisterConformanceTarget: TypeAlias = Callable[[ConformanceTarget], None]


# --- generic builders -----------------------------------------------------------------------------

#: A generator function that provisions a target: it receives the temporary directory, starts or reaches the
#: backend, yields its settings once and tears the backend down after.
ProvisionFunction: TypeAlias = Callable[[Path], Iterator[TargetSettings]]


def provisioned_target(
    name: str, adapter: str, kind: TargetKind, *, description: str = "", has_storage: bool = False
) -> Callable[[ProvisionFunction], ConformanceTarget]:
    """A decorator: the generator function it decorates becomes the provisioner of a new target.

    ::

        @provisioned_target("mystore-native", "mystore", "native", has_storage=True)
        def mystore_native(tmp: Path) -> Iterator[TargetSettings]:
            with start_my_server(data_dir=tmp) as url:
                yield TargetSettings(vector={"url": url}, storage={"url": url})

    ``mystore_native`` is then the :class:`ConformanceTarget` to register.
    """

    def target(provision: ProvisionFunction) -> ConformanceTarget:
        return ConformanceTarget(
            name=name,
            adapter=adapter,
            kind=kind,
            provision=contextmanager(provision),
            description=description,
            has_storage=has_storage,
        )

    return target


def required_env(name: str, hint: str) -> str:
    """The value of the environment variable ``name``, stripped; when it is unset or blank the target is
    unavailable with the reason ``"<name> is not set; <hint>"``."""
    value = os.environ.get(name, "").strip()
    if not value:
        raise TargetUnavailable(f"{name} is not set; {hint}")
    return value


class AddressSettings(TypedDict, total=False):
    """How the settings of a target known by one address are made (see :func:`address_target`)."""

    #: The vector store's setting that receives the address (default ``"url"``).
    setting: str
    #: More settings of the vector store.
    vector_settings: Mapping[str, Any] | None
    #: The storage's setting that receives the address; without it the target has no storage.
    storage_setting: str | None
    #: Hints for the suite, such as ``{"dimension": 4}``.
    options: Mapping[str, Any] | None


def address_target(
    adapter: str,
    kind: TargetKind,
    address: Callable[[Path], AbstractContextManager[str]],
    *,
    name: str,
    description: str = "",
    **settings: Unpack[AddressSettings],
) -> ConformanceTarget:
    """A target whose backend is known by one address: ``address(tmp)`` gives it for as long as the target
    is provisioned (a variable's value, a path in ``tmp``, a server it starts there and stops after).

    The vector store receives ``{setting: <address>, **vector_settings}``. With ``storage_setting`` the
    adapter's storage is tested too and receives ``{storage_setting: <address>}``.
    """
    setting = settings.get("setting", "url")
    storage_setting = settings.get("storage_setting")

    @provisioned_target(name, adapter, kind, description=description, has_storage=storage_setting is not None)
    def target(tmp: Path) -> Iterator[TargetSettings]:
        with address(tmp) as value:
            yield TargetSettings(
                vector={setting: value, **(settings.get("vector_settings") or {})},
                storage={storage_setting: value} if storage_setting else None,
                options=dict(settings.get("options") or {}),
            )

    return target


def temporary_path(path: str) -> Callable[[Path], AbstractContextManager[str]]:
    """The address of :func:`address_target` for an engine in-process: ``path`` (a file or directory name)
    inside the target's fresh temporary directory."""

    @contextmanager
    def in_temporary_directory(tmp: Path) -> Iterator[str]:
        yield str(tmp / path)

    return in_temporary_directory


def embedded_target(
    adapter: str,
    path: str,
    *,
    name: str,
    description: str = "",
    **settings: Unpack[AddressSettings],
) -> ConformanceTarget:
    """An ``embedded`` target named ``name``: the engine in-process on ``path`` (a file or directory name)
    inside the target's fresh temporary directory (:func:`temporary_path`).

    The vector store receives ``{setting: <path>, **vector_settings}``. With ``storage_setting`` the
    adapter's storage is tested too and receives ``{storage_setting: <path>}`` (:class:`AddressSettings`).
    """
    return address_target(
        adapter, "embedded", temporary_path(path), name=name, description=description, **settings
    )


def url_target(
    adapter: str,
    env_var: str,
    *,
    name: str | None = None,
    description: str = "",
    **settings: Unpack[AddressSettings],
) -> ConformanceTarget:
    """A ``url`` target: an existing service whose address is in the environment variable ``env_var``.

    The vector store receives ``{setting: <value>, **vector_settings}``. With ``storage_setting`` the
    adapter's storage is tested too and receives ``{storage_setting: <value>}`` (:class:`AddressSettings`).
    When ``env_var`` is unset or empty the target is unavailable and its tests are skipped with that reason.
    """

    @contextmanager
    def from_environment(tmp: Path) -> Iterator[str]:
        yield required_env(env_var, f"set it to the address of a running {adapter}")

    return address_target(
        adapter,
        "url",
        from_environment,
        name=name or f"{adapter}-url",
        description=description or f"an existing {adapter} service named by {env_var}",
        **settings,
    )
