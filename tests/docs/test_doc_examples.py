"""Every Python example in the README and the user docs runs, so none of them can rot.

The blocks of one page run in order in one namespace (a page is read top to bottom), in a fresh temporary
working directory, with top-level ``await`` allowed (the docs show async code the way a notebook or
``python -m asyncio`` runs it). Pages whose examples need something this suite does not start are listed
in ``NOT_RUN`` with the reason.
"""

from __future__ import annotations

import ast
import asyncio
import re
from pathlib import Path
from types import CodeType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)

#: Pages with Python blocks this suite does not run, and why (each reason is checked to still apply).
NOT_RUN = {
    "docs/plugins/writing-a-plugin.md": "an outline of a hypothetical `mystore` package; its runnable twin "
    "is examples/mastra-memory-dictstore, installed from its wheel and run through the kit by tests/examples",
}


def _pages() -> list[Path]:
    pages = [
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "docs").glob("plugins/*.md")),
    ]
    return [p for p in pages if BLOCK.search(p.read_text()) and str(p.relative_to(ROOT)) not in NOT_RUN]


def _compile(source: str, name: str) -> CodeType:
    return compile(source, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_pages_python_examples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # examples that write ./memory.db write it here
    namespace: dict[str, Any] = {"__name__": "__doc_example__"}
    for number, match in enumerate(BLOCK.finditer(page.read_text()), start=1):
        code = _compile(match.group(1), f"{page.relative_to(ROOT)} block {number}")
        result = eval(code, namespace)
        if asyncio.iscoroutine(result):  # the block used top-level await
            asyncio.run(result)


def test_every_page_left_out_still_has_python_blocks() -> None:
    for page in NOT_RUN:
        assert BLOCK.search((ROOT / page).read_text()), f"{page} has no Python block: drop it from NOT_RUN"
