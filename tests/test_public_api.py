"""The public API is importable from the package top, lazily (docs: README "Use it")."""

from __future__ import annotations

import subprocess
import sys

import pytest

import mastra_memory


@pytest.mark.parametrize("name", mastra_memory.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(mastra_memory, name) is not None


def test_top_level_names_are_the_defining_modules_objects() -> None:
    from mastra_memory.memory import Memory, SemanticRecall
    from mastra_memory.plugins import create_storage, create_vector

    assert mastra_memory.Memory is Memory
    assert mastra_memory.SemanticRecall is SemanticRecall
    assert (mastra_memory.create_vector, mastra_memory.create_storage) == (create_vector, create_storage)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Memroy'"):
        _ = mastra_memory.Memroy  # type: ignore[attr-defined]


def test_from_import_works_in_a_fresh_interpreter_and_stays_lazy() -> None:
    code = (
        "import sys, mastra_memory\n"
        "assert 'mastra_memory.memory' not in sys.modules\n"
        "from mastra_memory import Memory\n"
        "assert Memory.__module__.startswith('mastra_memory.memory')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
