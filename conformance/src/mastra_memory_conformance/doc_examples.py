"""Run the Python examples of a Markdown page, so documentation cannot rot (README files, docs pages).

The ```` ```python ```` blocks of one page run in order in one namespace, the way a reader follows the page,
with top-level ``await`` allowed (an awaited block runs in its own event loop). Adapter packages call
`run_python_examples` on their README in their own tests; the project's docs suite does the same for
``docs/``.
"""

from __future__ import annotations

import ast
import asyncio
import re
from pathlib import Path
from typing import Any

__all__ = ["python_blocks", "run_python_examples"]

_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks(markdown: str) -> list[str]:
    """The sources of the ```` ```python ```` blocks of ``markdown``, in order."""
    return _BLOCK.findall(markdown)


def run_python_examples(page: Path) -> int:
    """Run every Python block of ``page`` in one namespace; return how many ran.

    Raises whatever a block raises, so a broken example fails the test that runs it."""
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    namespace: dict[str, Any] = {"__name__": "__doc_example__"}
    for number, source in enumerate(blocks, start=1):
        code = compile(
            source, f"{page} block {number}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True
        )
        result = eval(code, namespace)
        if asyncio.iscoroutine(result):  # the block used top-level await
            asyncio.run(result)
    return len(blocks)
