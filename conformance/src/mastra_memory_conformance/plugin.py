"""The pytest plugin of the conformance kit (entry point ``mastra_memory_conformance`` of group ``pytest11``).

Run the whole suite against a target::

    pytest --pyargs mastra_memory_conformance --target sqlite
    pytest --pyargs mastra_memory_conformance --target qdrant-edge,qdrant-url --conformance-profile deep

Options:

``--target NAME``
    Repeatable and comma-separated; ``all`` selects every registered target. Without the option the
    environment variable ``MASTRA_MEMORY_CONFORMANCE_TARGETS`` is read. With no target at all every test
    that uses a kit fixture is skipped with the reason ``no --target given``.
``--conformance-report DIR``
    Where ``conformance.json`` and ``conformance-matrix.md`` are written (default ``reports/conformance``,
    relative to the invocation directory). Written only when a target was selected.
``--conformance-profile ci|dev|deep``
    The hypothesis profile for the run: ``conformance-dev`` (25 examples per property), ``conformance-ci``
    (100 examples) or ``conformance-deep`` (3,000 examples). Default: ``ci`` when the ``CI`` environment
    variable is set, else ``dev``; ``MASTRA_MEMORY_CONFORMANCE_PROFILE`` overrides the default. Every run
    has a hypothesis seed (:mod:`.seeding`: ``MASTRA_MEMORY_HYPOTHESIS_SEED``, else under ``CI`` the
    commit's, else random), printed in the header, the summary and with each failing property test.

The plugin is harmless where it is merely installed: it parametrises only tests that use its fixtures,
loads a hypothesis profile, guards sockets and writes a report only when a target is selected (or a
profile is named explicitly), and the override guard only looks at subclasses of the kit's suite classes.

Writing a domain (for authors of ``mastra_memory_conformance.suite.*``):

* a domain is a class named ``<Something>Suite`` in ``mastra_memory_conformance.suite.<domain>``; the thin
  module ``mastra_memory_conformance/tests/test_<domain>.py`` makes it collectable
  (``class TestSomething(SomethingSuite): pass``);
* async tests are marked ``pytest.mark.asyncio`` (``pytestmark = pytest.mark.asyncio`` in the module) so
  the suite runs whatever ``asyncio_mode`` the adapter project uses; the async fixtures are
  ``pytest_asyncio`` fixtures with a function-scoped loop;
* tests take the fixtures of :mod:`mastra_memory_conformance.fixtures`; the report reads the domain from
  ``@pytest.mark.conformance(domain=..., item=...)`` (default: the module or package under ``suite``) and the
  item from the marker or from :func:`set_item` (parametrised tests, e.g. one item per operator);
* a test records a declared deviation with ``outcome.deviation(code)`` and a correctly rejected operator
  with ``outcome.unsupported(operator)``; anything undeclared fails;
* capabilities decide expectations at run time (``pytest.skip("<why>")`` for a feature the manifest says
  the adapter lacks); never use ``skip``/``skipif`` marks on suite tests.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path
from typing import Final

import pytest
from hypothesis import HealthCheck, Phase, settings

from . import seeding, timeouts
from .fixtures import (
    KIT_KEY,
    OUTCOME_KEY,
    KitSession,
    capabilities,
    conformance_dimension,
    conformance_target,
    index_name,
    kit_session,
    outcome,
    storage,
    target_settings,
    vector_store,
)
from .guard import pytest_collection_modifyitems, pytest_pycollect_makeitem
from .network import LoopbackGuard
from .registry import ENTRYPOINT_GROUP, registered_targets
from .report import ConformanceReport, OutcomeName, TestResult
from .targets import ConformanceTarget

__all__ = [
    "ENV_PROFILE",
    "ENV_TARGETS",
    "ITEM_PROPERTY",
    "PROFILES",
    "capabilities",
    "conformance_dimension",
    "conformance_target",
    "index_name",
    "outcome",
    "pytest_collection_modifyitems",
    "pytest_pycollect_makeitem",
    "set_item",
    "storage",
    "target_settings",
    "vector_store",
]

ENV_TARGETS: Final = "MASTRA_MEMORY_CONFORMANCE_TARGETS"
ENV_PROFILE: Final = "MASTRA_MEMORY_CONFORMANCE_PROFILE"
ITEM_PROPERTY: Final = "conformance_item"
DEFAULT_REPORT_DIR: Final = "reports/conformance"

#: Hypothesis example counts per profile (also stated in docs/conformance.md).
PROFILES: Final = {"dev": 25, "ci": 100, "deep": 3000}
# differing_executors: one suite method runs once per target, each time on a fresh class instance.
_HEALTH = [
    HealthCheck.too_slow,
    HealthCheck.function_scoped_fixture,
    HealthCheck.data_too_large,
    HealthCheck.differing_executors,
]
_PHASES: Final = tuple(phase for phase in Phase if phase is not Phase.explain)
for _name, _examples in PROFILES.items():
    settings.register_profile(
        f"conformance-{_name}",
        max_examples=_examples,
        deadline=None,
        # Never derandomised: the run's seed (.seeding) picks the examples, so CI explores per commit.
        derandomize=False,
        print_blob=True,
        suppress_health_check=_HEALTH,
        # No explain phase: on Python < 3.12 it traces every line while shrinking, which turned one
        # failing example into minutes of shrinking (a CI run hung); the shrunk example is what we need.
        phases=_PHASES,
    )

_RESULT_KEY = pytest.StashKey[TestResult]()
_GUARD_KEY = pytest.StashKey[LoopbackGuard]()
_PROFILE_KEY = pytest.StashKey[str]()
_SEED_OWNER: Final = "mastra_memory_conformance"


def set_item(request: pytest.FixtureRequest, item: str) -> None:
    """Name the row of the report matrix this test belongs to (an operator such as ``"$ne"``)."""
    request.node.user_properties.append((ITEM_PROPERTY, item))


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mastra-memory-conformance", "mastra-memory conformance kit")
    group.addoption(
        "--target",
        action="append",
        default=[],
        metavar="NAME",
        help="run the conformance suite against target NAME (repeatable, comma-separated, 'all'; "
        f"env {ENV_TARGETS})",
    )
    group.addoption(
        "--conformance-report",
        default=DEFAULT_REPORT_DIR,
        metavar="DIR",
        help=f"directory of conformance.json and conformance-matrix.md (default {DEFAULT_REPORT_DIR})",
    )
    group.addoption(
        "--conformance-profile",
        choices=sorted(PROFILES),
        default=None,
        help="hypothesis profile of the differential tests: "
        + ", ".join(f"{k} ({v} examples)" for k, v in PROFILES.items()),
    )


def _requested(config: pytest.Config) -> list[str]:
    raw: list[str] = config.getoption("target") or []
    if not raw:
        raw = [os.environ.get(ENV_TARGETS, "")]
    return [name.strip() for chunk in raw for name in chunk.split(",") if name.strip()]


def _select(names: list[str]) -> list[ConformanceTarget]:
    if not names:
        return []
    registry = registered_targets()
    selected: list[ConformanceTarget] = []
    for name in names:
        if name == "all":
            chosen = list(registry.values())
        elif name in registry:
            chosen = [registry[name]]
        else:
            available = ", ".join(registry) or "none"
            raise pytest.UsageError(
                f"unknown conformance target {name!r}; registered targets: {available}. Targets come from "
                f"the register_conformance_targets hook of the plugins in the entry-point group "
                f"{ENTRYPOINT_GROUP} (install the adapter that provides {name!r})"
            )
        selected += [t for t in chosen if t not in selected]
    return selected


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "conformance(domain, item=None): a mastra-memory conformance test; domain and item name its row in "
        "the conformance matrix",
    )
    try:
        from importlib.metadata import version

        kit_version = version("mastra-memory-conformance")
    except Exception:  # pragma: no cover - the kit runs from an installed distribution
        kit_version = ""
    if not config.pluginmanager.is_registered(timeouts):
        config.pluginmanager.register(timeouts, "mastra_memory_conformance.timeouts")
    kit = KitSession(_select(_requested(config)), ConformanceReport(kit_version))
    config.stash[KIT_KEY] = kit
    for target in kit.targets:
        kit.report.add_target(target)
    profile = config.getoption("conformance_profile") or os.environ.get(ENV_PROFILE)
    if kit.active or profile:
        profile = profile or ("ci" if os.environ.get("CI") else "dev")
        if profile not in PROFILES:
            raise pytest.UsageError(f"{ENV_PROFILE}={profile!r}; choose one of {', '.join(PROFILES)}")
        config.stash[_PROFILE_KEY] = settings.get_current_profile_name()
        settings.load_profile(f"conformance-{profile}")
        seeding.install(config, _SEED_OWNER)
    if kit.active:
        config.stash[_GUARD_KEY] = LoopbackGuard()


def pytest_unconfigure(config: pytest.Config) -> None:
    # Put back the hypothesis profile that was active before (pytester runs share the process).
    previous = config.stash.get(_PROFILE_KEY, None)
    if previous is not None:
        settings.load_profile(previous)
    seeding.uninstall(config, _SEED_OWNER)


def pytest_report_header(config: pytest.Config) -> list[str]:
    return seeding.header(config, _SEED_OWNER)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    # Installed around each test (setup, call, teardown, so also around provisioning) rather than once:
    # other socket plugins such as pytest-socket restore the unpatched functions after every test.
    guard = item.config.stash.get(_GUARD_KEY, None)
    if guard is None:
        return (yield)
    guard.install()
    try:
        return (yield)
    finally:
        guard.uninstall()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "conformance_target" not in metafunc.fixturenames:
        return
    kit = kit_session(metafunc.config)
    if kit.active:
        metafunc.parametrize(
            "conformance_target",
            kit.targets,
            ids=[t.name for t in kit.targets],
            indirect=True,
            scope="session",
        )
    else:
        metafunc.parametrize("conformance_target", [None], ids=["no-target"], indirect=True, scope="session")


def _target_of(item: pytest.Item) -> ConformanceTarget | None:
    callspec = getattr(item, "callspec", None)
    target = callspec.params.get("conformance_target") if callspec is not None else None
    return target if isinstance(target, ConformanceTarget) else None


def _domain_and_item(item: pytest.Item) -> tuple[str, str | None]:
    marker = item.get_closest_marker("conformance")
    domain = marker.kwargs.get("domain") if marker else None
    row: str | None = marker.kwargs.get("item") if marker else None
    for key, value in item.user_properties:
        if key == ITEM_PROPERTY:
            row = str(value)
    if not domain:
        function = getattr(item, "function", None)
        module = getattr(function, "__module__", "") or ""
        prefix = "mastra_memory_conformance.suite."
        # A domain is a module under ``suite`` or a package of modules (``suite.errors.validation``).
        domain = (
            module[len(prefix) :].split(".")[0] if module.startswith(prefix) else module.rsplit(".", 1)[-1]
        )
        domain = domain.removeprefix("test_")
    return str(domain), row


def _reason(report: pytest.TestReport) -> str:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    return str(message if message is not None else report.longreprtext)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    seeding.annotate(item, report, _SEED_OWNER)
    target = _target_of(item)
    if target is None or not kit_session(item.config).active:
        return report
    result = item.stash.get(_RESULT_KEY, None)
    if result is None:
        domain, row = _domain_and_item(item)
        name = getattr(item, "originalname", item.name)
        result = TestResult(item.nodeid, name, target.name, target.adapter, target.kind, domain, row, "pass")
        item.stash[_RESULT_KEY] = result
    wasxfail = getattr(report, "wasxfail", None)
    outcome_name: OutcomeName | None = None
    if report.failed:
        outcome_name = "fail"
    elif report.skipped:
        outcome_name = "xfail" if wasxfail is not None else "skipped"
    if outcome_name is not None and result.outcome != "fail":
        result.outcome = outcome_name
        result.reason = str(wasxfail) if outcome_name == "xfail" else _reason(report)
    if report.when == "call" and report.passed:
        annotations = item.stash.get(OUTCOME_KEY, None)
        if annotations is not None:
            result.annotations = list(annotations.annotations)
            result.outcome = annotations.kind or "pass"
    if report.when == "teardown":
        # The domain and item may have been set while the test ran (set_item).
        result.domain, result.item = _domain_and_item(item)
        kit_session(item.config).report.add(result)
    return report


def _report_dir(config: pytest.Config) -> Path:
    return Path(config.invocation_params.dir) / str(config.getoption("conformance_report"))


def pytest_sessionfinish(session: pytest.Session) -> None:
    kit = session.config.stash.get(KIT_KEY, None)
    if kit is not None and kit.active:
        kit.report.write(_report_dir(session.config))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    kit = config.stash.get(KIT_KEY, None)
    if kit is None or not kit.active:
        return
    terminalreporter.section("mastra-memory conformance")
    for info in kit.report.targets.values():
        extra = f": {info.reason}" if info.reason else ""
        terminalreporter.write_line(f"target {info.name} ({info.kind}): {info.status}{extra}")
    guard = config.stash.get(_GUARD_KEY, None)
    if guard is not None and guard.blocked:
        terminalreporter.write_line(f"blocked outbound connections: {', '.join(guard.blocked)}", red=True)
    terminalreporter.write_line(f"report: {_report_dir(config)}")
    seeding.summary(terminalreporter, config, _SEED_OWNER)
