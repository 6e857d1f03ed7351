"""Every Python example in the README and the user docs runs, so none of them can rot.

The blocks of one page run in order in one namespace, in a fresh temporary working directory, with
top-level ``await`` allowed (:mod:`mastra_memory_conformance.doc_examples`). Each adapter's README and
its page ``docs/adapters/<name>.md`` are run by that adapter's own tests
(``adapters/<name>/tests/test_readme.py``), where its extra is installed and its backend can be started;
the page of the embedded SQLite store, which ships with the core, runs here.
Pages whose examples need something this suite does not start are listed in ``NOT_RUN`` with the reason.
A page whose examples start a server this machine cannot build (docs/targets.md: Java and Maven, Go) is
skipped with the provisioner's reason, and fails under CI (:mod:`mastra_memory_conformance.missing`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mastra_memory_conformance.doc_examples import python_blocks, run_python_examples
from mastra_memory_conformance.missing import REQUIRE_ENV, needs

ROOT = Path(__file__).resolve().parents[2]

#: Pages with Python blocks this suite does not run, and why.
NOT_RUN = {
    "docs/plugins/writing-a-plugin.md": "an outline of a hypothetical `mystore` package; its runnable twin "
    "is examples/mastra-memory-dictstore, installed from its wheel and run through the kit by tests/examples",
    "docs/integrations.md": "its blocks import openai-agents and pydantic-ai, which this suite does not "
    "install; integrations/<name>/tests/test_readme.py runs each block where its framework is installed",
}


#: Adapter pages of stores that ship with the core, whose examples this suite runs. Every other
#: docs/adapters/<name>.md runs in adapters/<name>/tests/test_readme.py, where its extra is installed.
CORE_ADAPTER_PAGES = ("sqlite",)


def _pages() -> list[Path]:
    docs = ROOT / "docs"
    pages = [ROOT / "README.md", *sorted(docs.glob("*.md")), *sorted(docs.glob("plugins/*.md"))]
    pages += [docs / "adapters" / f"{name}.md" for name in CORE_ADAPTER_PAGES]
    return [p for p in pages if python_blocks(p.read_text()) and str(p.relative_to(ROOT)) not in NOT_RUN]


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_pages_python_examples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # examples that write ./memory.db write it here
    with needs(f"a server the examples of {page.relative_to(ROOT)} start"):
        assert run_python_examples(page) >= 1


@pytest.mark.parametrize(("ci", "outcome"), [("", "1 skipped"), ("true", "1 failed")])
def test_a_page_whose_servers_cannot_be_built_here_skips_outside_ci(
    tmp_path: Path, ci: str, outcome: str
) -> None:
    """docs/targets.md starts OpenSearch (Java, Maven) and FerretDB (Go). On a machine without them -- no
    tool on PATH, nothing built in the cache -- its test skips with the reason, and fails under CI."""
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {**os.environ, "PATH": str(empty), "MASTRA_MEMORY_CACHE_DIR": str(tmp_path / "cache"), "CI": ci}
    for name in ("JAVA_HOME", REQUIRE_ENV):
        env.pop(name, None)
    test = f"{Path(__file__).relative_to(ROOT)}::test_the_pages_python_examples_run[docs/targets.md]"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", test, "-p", "no:cacheprovider", "-q", "-rsf"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert outcome in done.stdout, done.stdout + done.stderr
    assert "`java` is not on PATH; it is needed to run OpenSearch" in done.stdout


def test_every_page_left_out_still_has_python_blocks() -> None:
    for page in NOT_RUN:
        assert python_blocks((ROOT / page).read_text()), f"{page} has no Python block: drop it from NOT_RUN"


def test_every_adapter_runs_its_readme() -> None:
    for adapter in sorted((ROOT / "adapters").glob("*/pyproject.toml")):
        readme_test = adapter.parent / "tests" / "test_readme.py"
        assert readme_test.is_file(), f"{adapter.parent.name}: add tests/test_readme.py"
        assert python_blocks((adapter.parent / "README.md").read_text()), (
            f"{adapter.parent.name}: README has no example"
        )


def test_every_adapter_has_a_docs_page() -> None:
    adapters = [
        *CORE_ADAPTER_PAGES,
        *(p.parent.name for p in sorted((ROOT / "adapters").glob("*/pyproject.toml"))),
    ]
    for name in adapters:
        assert (ROOT / "docs" / "adapters" / f"{name}.md").is_file(), f"{name}: add docs/adapters/{name}.md"


def test_every_adapter_page_is_run_by_some_test() -> None:
    """A page this suite does not run is run by its adapter's tests/test_readme.py, which names it."""
    for page in sorted((ROOT / "docs" / "adapters").glob("*.md")):
        if not python_blocks(page.read_text()) or page.stem in CORE_ADAPTER_PAGES:
            continue
        readme_test = ROOT / "adapters" / page.stem / "tests" / "test_readme.py"
        assert readme_test.is_file(), (
            f"docs/adapters/{page.name}: no adapters/{page.stem}/tests/test_readme.py"
        )
        assert f'"{page.name}"' in readme_test.read_text(), (
            f"adapters/{page.stem}/tests/test_readme.py must run docs/adapters/{page.name}"
        )
