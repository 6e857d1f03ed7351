"""The override guard: an adapter project cannot silently override, delete or skip a conformance test.

An adapter project may subclass a suite class of the kit (any class named ``*Suite`` defined in
``mastra_memory_conformance.suite``) in its own tests, for instance to add tests or fixtures. The guard
inspects every such subclass pytest collects. The run fails (one failing ``conformance-guard`` item per
class) when the subclass, or a class between it and the kit:

* overrides a suite test method without ``@pytest.mark.xfail(reason="...")`` (non-empty reason) or the
  kit's ``@declared_override(reason="...")``;
* deletes one (sets it to ``None`` or to anything that is not a function);
* skips suite tests with a ``skip``/``skipif`` mark on the class or on the module.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final, TypeVar

import pytest

__all__ = [
    "KIT_SUITE_PACKAGE",
    "OVERRIDE_ATTRIBUTE",
    "declared_override",
    "is_kit_suite",
    "suite_violations",
]

KIT_SUITE_PACKAGE: Final = "mastra_memory_conformance.suite"
OVERRIDE_ATTRIBUTE: Final = "__conformance_override_reason__"
_KIT_PREFIX: Final = "mastra_memory_conformance."

F = TypeVar("F", bound=Callable[..., Any])


def declared_override(reason: str) -> Callable[[F], F]:
    """Mark a method that deliberately replaces a conformance test; ``reason`` is shown in the report."""
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("declared_override needs a non-empty reason")

    def mark(function: F) -> F:
        setattr(function, OVERRIDE_ATTRIBUTE, reason.strip())
        return function

    return mark


def _in_kit(cls: type) -> bool:
    module = getattr(cls, "__module__", "") or ""
    return module.startswith(_KIT_PREFIX)


def is_kit_suite(cls: type) -> bool:
    """Whether ``cls`` is one of the kit's suite classes."""
    module = getattr(cls, "__module__", "") or ""
    return (
        module == KIT_SUITE_PACKAGE or module.startswith(KIT_SUITE_PACKAGE + ".")
    ) and cls.__name__.endswith("Suite")


def _marks(obj: object) -> list[pytest.Mark]:
    raw = getattr(obj, "pytestmark", [])
    items: Iterable[Any] = raw if isinstance(raw, list | tuple) else [raw]
    return [getattr(m, "mark", m) for m in items if isinstance(getattr(m, "mark", m), pytest.Mark)]


def _declared_reason(value: object) -> str | None:
    reason = getattr(value, OVERRIDE_ATTRIBUTE, None)
    if isinstance(reason, str) and reason.strip():
        return reason
    for mark in _marks(value):
        if mark.name == "xfail":
            text = mark.kwargs.get("reason")
            if isinstance(text, str) and text.strip():
                return text
    return None


def _suite_tests(cls: type) -> dict[str, type]:
    """Every test method name the kit's suites of ``cls`` define, with the kit class defining it."""
    tests: dict[str, type] = {}
    for base in reversed(cls.__mro__):
        if not is_kit_suite(base):
            continue
        for name, value in vars(base).items():
            if name.startswith("test") and inspect.isfunction(value):
                tests[name] = base
    return tests


def _skip_marks(owner: object) -> list[str]:
    return [f"@pytest.mark.{m.name}" for m in _marks(owner) if m.name in ("skip", "skipif")]


def suite_violations(cls: type, module: object | None = None) -> list[str]:
    """What ``cls`` does to the kit's suite tests without a declared reason (empty when it is fine)."""
    if _in_kit(cls):
        return []
    tests = _suite_tests(cls)
    if not tests:
        return []
    problems: list[str] = []
    for name, kit_class in sorted(tests.items()):
        owner = next(klass for klass in cls.__mro__ if name in vars(klass))
        if _in_kit(owner):
            continue
        value = vars(owner)[name]
        what = f"{owner.__qualname__}.{name} (a conformance test of {kit_class.__name__})"
        if not inspect.isfunction(value):
            problems.append(f"{what} is deleted (set to {value!r}); conformance tests cannot be removed")
        elif _declared_reason(value) is None:
            problems.append(
                f"{what} is overridden without a declared reason; decorate it with "
                f'@pytest.mark.xfail(reason="...") or @declared_override(reason="...")'
            )
    for klass in cls.__mro__:
        if klass is object or _in_kit(klass):
            continue
        for mark in _skip_marks(klass):
            problems.append(f"{klass.__qualname__} skips every conformance test with {mark}")
    if module is not None:
        for mark in _skip_marks(module):
            name = getattr(module, "__name__", "the module")
            problems.append(f"module {name} skips every conformance test with {mark}")
    return problems


class GuardViolation(pytest.Item):
    """A collected item that fails with the guard's findings about one suite subclass.

    It ignores the marks of its module, so a module-level ``skip`` or ``xfail`` cannot silence it.
    """

    def __init__(self, *, problems: list[str], line: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.problems = problems
        self.line = line

    def iter_markers_with_node(self, name: str | None = None) -> Iterator[tuple[Any, pytest.Mark]]:
        for mark in self.own_markers:
            if name is None or mark.name == name:
                yield self, mark

    def runtest(self) -> None:
        raise GuardError(self.problems)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, GuardError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return str(self.path), self.line, f"conformance guard: {self.name}"


class GuardError(AssertionError):
    """The findings of the guard."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(
            "the conformance guard rejects this suite subclass:\n" + "\n".join(f"  - {p}" for p in problems)
        )


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> Any:
    """Collect a suite subclass as usual, plus a failing guard item when it breaks the rules."""
    if not (inspect.isclass(obj) and isinstance(collector, pytest.Module | pytest.Class)):
        return None
    if not _suite_tests(obj) or _in_kit(obj):
        return None
    module = getattr(collector, "obj", None) if isinstance(collector, pytest.Module) else None
    problems = suite_violations(obj, module)
    if not problems:
        return None
    collected: list[Any] = []
    if collector.istestclass(obj, name):
        collected.append(pytest.Class.from_parent(collector, name=name, obj=obj))
    collected.append(
        GuardViolation.from_parent(collector, name=f"{name}[conformance-guard]", problems=problems)
    )
    return collected


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Keep the guard items first, so a rejected subclass is reported before its tests run."""
    items.sort(key=lambda item: not isinstance(item, GuardViolation))
