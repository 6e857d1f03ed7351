"""The README's "Use it" example prints what it recalled, says where it stores, and can be rerun."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def use_it_block() -> str:
    section = README.read_text(encoding="utf-8").split("## Use it\n", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_example_prints_the_recalled_text_and_where_it_stores_and_reruns_cleanly(
    tmp_path: Path, db_state: Callable[[Path], dict[str, Any]]
) -> None:
    pytest.importorskip("wordllama")
    script = tmp_path / "use_it.py"
    script.write_text(use_it_block(), encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    outputs = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    db = tmp_path / "quickstart.db"
    assert outputs[0] == outputs[1]  # the second run sees exactly what the first stored
    lines = outputs[0].splitlines()
    assert lines[0] == f"using {db}"
    assert lines[1] == "0.58 [trip] Book the Hoshinoya in Kyoto, check-in April 3."  # the text, not a UUID
    assert lines[2] == "0.04 [trip] We named the puppy Miso."
    assert not (tmp_path / "memory.db").exists()  # no silent ./memory.db
    state = db_state(db)
    assert sorted(state["messages"]) == ["trip-1", "trip-2"]  # rerun: no duplicates
    prose = README.read_text(encoding="utf-8").split("## Use it\n", 1)[1].split("## ", 1)[0]
    assert "`0.58 [trip] Book the Hoshinoya in Kyoto,\ncheck-in April 3.`" in prose  # the README says so


def command_line_block() -> str:
    """The README's command-line example: the first ``bash`` block of "Use it"."""
    section = README.read_text(encoding="utf-8").split("## Use it\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```bash\n", 1)[1].split("```", 1)[0]


def test_the_command_line_example_answers_its_question(tmp_path: Path) -> None:
    """Issue 23 item 7: the README's ``recall`` asked a question the default embedder could not answer
    (every hit weak, the best one wrong). The block runs exactly as written; its best hit is the answer."""
    pytest.importorskip("wordllama")
    block = command_line_block()
    assert block.index("mastra-memory ingest") < block.index("mastra-memory recall")  # data first
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",  # the venv's script
        "HF_HUB_OFFLINE": "1",
        "COLUMNS": "120",
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    done = subprocess.run(
        ["bash", "-e", "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    best = next(i for i, line in enumerate(lines) if line.strip().startswith("hit #1 "))
    assert "weak" not in lines[best], lines[best]  # a score the default embedder reaches for an answer
    assert " 0.583 " in lines[best]
    assert lines[best + 1].strip() == "Book the Hoshinoya in Kyoto, check-in April 3."
    prose = README.read_text(encoding="utf-8").split(block + "```\n\n", 1)[1].split("\n\n", 1)[0]
    assert "Its best hit is the check-in message, at 0.583." in prose  # the README says what it prints
