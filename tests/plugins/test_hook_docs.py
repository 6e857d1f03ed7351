"""Every hook -- the core's three and the conformance kit's one -- has a section in docs/plugins/hooks.md
and at least one test (as datasette checks)."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import pytest

from mastra_memory import hookspecs
from mastra_memory_conformance import hookspecs as kit_hookspecs

ROOT = Path(__file__).resolve().parents[2]
HOOKS_DOC = ROOT / "docs" / "plugins" / "hooks.md"


def hooks_of(module: ModuleType) -> list[str]:
    """The hook specifications of ``module`` (pluggy marks them ``<project>_spec``)."""
    marker = f"{module.PROJECT_NAME}_spec"
    return [name for name, fn in vars(module).items() if getattr(fn, marker, None)]


CORE_HOOKS = sorted(hooks_of(hookspecs))
KIT_HOOKS = sorted(hooks_of(kit_hookspecs))
HOOKS = sorted(CORE_HOOKS + KIT_HOOKS)


def sections() -> dict[str, str]:
    """The ``## name`` sections of hooks.md, by heading."""
    parts = re.split(r"^## ", HOOKS_DOC.read_text(encoding="utf-8"), flags=re.MULTILINE)[1:]
    return {part.split("\n", 1)[0].strip(): part for part in parts}


def test_the_hooks_are_found() -> None:
    assert CORE_HOOKS == ["register_embedders", "register_storages", "register_vector_stores"]
    assert KIT_HOOKS == ["register_conformance_targets"]


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_is_documented(hook: str) -> None:
    section = sections().get(hook)
    assert section is not None, f"docs/plugins/hooks.md has no '## {hook}' section"
    assert "register(" in section, f"the {hook} section does not give the register signature"
    assert f"def {hook}(register" in section, f"the {hook} section has no example hook implementation"


def test_docs_describe_no_hook_that_does_not_exist() -> None:
    assert sorted(sections()) == HOOKS


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_has_a_test(hook: str) -> None:
    this = Path(__file__).resolve()
    tests = [p for p in (ROOT / "tests").rglob("test_*.py") if p.resolve() != this]
    assert any(hook in p.read_text(encoding="utf-8") for p in tests), f"no test mentions {hook}"
