"""``nox -s docs``: build the documentation site strictly, and prove the strict build catches what it must.

1. ``mkdocs build --strict`` of the real site (mkdocs.yml): any warning fails — a link to a missing page or
   heading, a page left out of the navigation, an API reference entry whose object does not exist.
2. The same build on two damaged copies of docs/ — one page with a broken link, one page missing from the
   navigation — must each fail, so a change to mkdocs.yml that silently loosened validation fails here.

Each build is bounded (``BUILD_TIMEOUT``); the script exits non-zero on the first problem.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD_TIMEOUT = 300  # seconds; a build takes a few seconds


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """Run ``mkdocs build --strict`` for ``config`` into ``site``."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir",
         str(site)],
        cwd=config.parent, capture_output=True, text=True, timeout=BUILD_TIMEOUT, env=env, check=False,
    )  # fmt: skip


def damaged_copy(work: Path, damage: str) -> Path:
    """A copy of the project's docs and sources under ``work`` with one kind of damage; its mkdocs.yml."""
    shutil.copy(ROOT / "mkdocs.yml", work / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", work / "docs")
    for sources in ("core", "conformance/src"):
        (work / sources).parent.mkdir(parents=True, exist_ok=True)
        (work / sources).symlink_to(ROOT / sources)
    if damage == "broken link":
        page = work / "docs" / "filters.md"
        page.write_text(page.read_text("utf-8") + "\nSee [nowhere](no-such-page.md).\n", "utf-8")
    elif damage == "page not in nav":
        (work / "docs" / "orphan.md").write_text("# Orphan\n\nNo navigation entry links here.\n", "utf-8")
    return work / "mkdocs.yml"


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="mastra-memory-site-") as tmp:
        real = build(ROOT / "mkdocs.yml", Path(tmp) / "site")
        if real.returncode != 0:
            print(real.stdout, real.stderr, sep="\n")
            print("mkdocs build --strict failed: fix the warnings above", file=sys.stderr)
            return 1
        print(f"site built: {len(list((Path(tmp) / 'site').rglob('*.html')))} pages")
        # Each damage and the file name its warning must name (so the build failed for that reason).
        for damage, named in (("broken link", "no-such-page.md"), ("page not in nav", "orphan.md")):
            work = Path(tmp) / damage.replace(" ", "-")
            work.mkdir()
            result = build(damaged_copy(work, damage), work / "site")
            if result.returncode == 0:
                print(f"the strict build accepted a {damage}: mkdocs.yml's validation is too loose",
                      file=sys.stderr)  # fmt: skip
                return 1
            if named not in result.stdout + result.stderr:
                print(result.stdout, result.stderr, sep="\n")
                print(f"the build with a {damage} failed, but not because of it", file=sys.stderr)
                return 1
            print(f"strict build refuses a {damage}: ok")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
