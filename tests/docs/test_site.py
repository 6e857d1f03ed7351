"""The documentation site as a reader sees it (issue 29): built as ``nox -s docs`` builds it, then checked in
its HTML and in a headless browser.

* The home page starts with a quickstart of at most 10 lines, and it runs and prints the recalled message.
* The API reference renders: no raw Sphinx role (``:class:`X```) left in any page, Google-style ``Args:`` /
  ``Returns:`` / ``Raises:`` parsed into sections, one "Memory" heading, signatures formatted by ruff.
* Every page at 1280 px and at 390 px (a phone): the page and its main column do not scroll sideways; a code
  block or table wider than the column scrolls inside its own box, within the column; at 1280 px a Python
  example (110 columns, ruff's line length here) fits without scrolling. A screenshot of the top of each
  page at each width goes to ``reports/site/`` (ignored by git) for a person to look at.

Needs the ``docs`` dependency group (mkdocs, ruff, selenium): ``nox -s docs`` installs it and runs this file;
without mkdocs the module skips. The browser is Debian's ``chromium`` with ``chromium-driver`` (.ci/run
installs them; ``MASTRA_MEMORY_CHROMIUM`` and ``MASTRA_MEMORY_CHROMEDRIVER`` name other executables); when
either is missing the browser test skips with the reason, and fails under CI.
"""

from __future__ import annotations

import functools
import html
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mastra_memory_conformance.doc_examples import python_blocks
from mastra_memory_conformance.missing import missing

from .site_check import build

pytest.importorskip("mkdocs", reason="the docs dependency group is not installed: `nox -s docs` runs this")

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "reports" / "site"
#: Width x height of the two viewports: a laptop and a phone (mobile emulation: touch, viewport meta).
VIEWPORTS = {"1280": (1280, 900, False), "390": (390, 844, True)}
#: A role left raw in the HTML: ``:class:`` (etc.) followed by the code span it became, or a backtick.
RAW_ROLE = re.compile(r":(?:py:)?(?:mod|meth|class|func|attr|exc|data|obj|const|ref|term|doc):(?:<code>|`)")
#: A Google section the parser missed shows as a paragraph starting with its title.
UNPARSED_SECTION = re.compile(r"<p>(?:Args|Arguments|Parameters|Returns|Raises|Yields|Attributes):")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    result = build(ROOT / "mkdocs.yml", out)
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def _pages(site: Path) -> list[str]:
    """Every page's URL path relative to the site root ("" for the home page), 404 page left out."""
    pages = [str(p.parent.relative_to(site)) for p in sorted(site.rglob("index.html"))]
    return ["" if p == "." else f"{p}/" for p in pages if not p.startswith(("assets", "search"))]


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


# --- the home page ---------------------------------------------------------------------------------


def test_the_home_page_starts_with_a_quickstart_that_runs(tmp_path: Path) -> None:
    page = (ROOT / "docs" / "index.md").read_text("utf-8")
    sections = [m.start() for m in re.finditer(r"^## ", page, re.M)]
    assert page[sections[0] :].startswith("## Quickstart"), "docs/index.md: the first section is a quickstart"
    assert page.find("```") == page.find("```python") < sections[1], "its first block is the quickstart"
    quickstart = python_blocks(page)[0]
    assert len(quickstart.strip().splitlines()) <= 10, quickstart
    done = subprocess.run(
        [sys.executable, "-c", quickstart], cwd=tmp_path, capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Check-in at the Kyoto hotel is on April 3." in done.stdout, done.stdout + done.stderr


# --- the API reference ------------------------------------------------------------------------------


def test_no_page_shows_a_raw_sphinx_role(site: Path) -> None:
    found = [
        f"{page.relative_to(site)}: …{_text(text[max(0, m.start() - 60) : m.end() + 40])}…"
        for page in sorted(site.rglob("*.html"))
        for text in [page.read_text("utf-8")]
        for m in RAW_ROLE.finditer(text)
    ]
    assert not found, "raw Sphinx roles (write `name` or [`name`][full.path]):\n" + "\n".join(found)


def test_google_sections_are_parsed(site: Path) -> None:
    reference = sorted((site / "reference").rglob("*.html"))
    unparsed = [
        f"{page.relative_to(site)}: {_text(m.group(0))}"
        for page in reference
        for m in UNPARSED_SECTION.finditer(page.read_text("utf-8"))
    ]
    assert not unparsed, "docstring sections rendered as text:\n" + "\n".join(unparsed)
    memory = (site / "reference" / "memory" / "index.html").read_text("utf-8")
    assert "doc-section-title" in memory, "no docstring section on the Memory page"
    assert "Parameters:" in memory, "Memory's Args: is no section"


def test_the_memory_reference_has_one_memory_heading(site: Path) -> None:
    page = (site / "reference" / "memory" / "index.html").read_text("utf-8")
    headings = [
        _text(m.group(1)).replace("¶", "").strip()
        for m in re.finditer(r"<h[1-6][^>]*>(.*?)</h[1-6]>", page, re.S)
    ]
    assert headings.count("Memory") == 1, headings[:12]


def test_signatures_are_formatted(site: Path) -> None:
    """``separate_signature`` formats with ruff when ruff is installed (the docs group): one parameter a
    line, not one clipped line."""
    page = (site / "reference" / "memory" / "index.html").read_text("utf-8")
    anchor = page.index('id="mastra_memory.memory.Memory"')
    signature = re.search(r'class="[^"]*\bdoc-signature\b[^"]*"[^>]*>(.*?)</pre>', page[anchor:], re.S)
    assert signature is not None
    assert re.search(r"Memory\(\n\s+storage:", _text(signature.group(1))), _text(signature.group(1))


# --- in a browser -----------------------------------------------------------------------------------


def _executable(env: str, *names: str) -> str | None:
    configured = os.environ.get(env, "").strip()
    if configured:
        return configured if shutil.which(configured) else None
    return next((found for name in names if (found := shutil.which(name))), None)


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The built site over HTTP on loopback (as a reader's browser gets it, scripts and all)."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing("selenium is not installed (the docs dependency group): `nox -s docs` installs it")
    chromium = _executable("MASTRA_MEMORY_CHROMIUM", "chromium", "chromium-browser")
    driver_path = _executable("MASTRA_MEMORY_CHROMEDRIVER", "chromedriver")
    if chromium is None or driver_path is None:
        tool, env = ("chromium", "CHROMIUM") if chromium is None else ("chromedriver", "CHROMEDRIVER")
        env = f"MASTRA_MEMORY_{env}"
        configured = os.environ.get(env)
        where = f"{env}={configured!r} is no executable" if configured else f"{tool} is not on PATH"
        missing(
            f"headless Chromium is needed to check the site's layout: {where} "
            "(Debian: apt-get install chromium chromium-driver)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument("--hide-scrollbars")  # screenshots show the page as on a phone: no scrollbar gutters
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


#: What overflows on the page: the page itself, the main column, a code block or table that is wider
#: than the column with no scroll box of its own, or a scroll box that reaches out of the column; and,
#: when `fitPython` is set, a Python block that needs scrolling at all.
OVERFLOW_SCRIPT = """
const fitPython = arguments[0];
const problems = [];
const page = document.scrollingElement;
if (page.scrollWidth > page.clientWidth)
  problems.push(`the page scrolls sideways: ${page.scrollWidth} > ${page.clientWidth} px`);
const main = document.querySelector('.md-content');
if (main.scrollWidth > main.clientWidth)
  problems.push(`the main column overflows: ${main.scrollWidth} > ${main.clientWidth} px`);
const column = main.getBoundingClientRect();
const inColumn = (r) => r.left >= column.left - 1 && r.right <= column.right + 1;
// The box that shows the element: itself when it fits in the column, else the nearest scroll box around it
// (overflow auto or scroll) that fits in the column; null when the element sticks out of the column.
const shownBy = (element) => {
  if (inColumn(element.getBoundingClientRect())) return element;
  for (let e = element; e && e !== main; e = e.parentElement) {
    const overflow = getComputedStyle(e).overflowX;
    if ((overflow === 'auto' || overflow === 'scroll') && inColumn(e.getBoundingClientRect())) return e;
  }
  return null;
};
const scrolls = (e) => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
const name = (e) => {
  const heading = [...document.querySelectorAll('h1, h2, h3, h4')].filter(
    (h) => h.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING).pop();
  return `${e.tagName.toLowerCase()} under "${heading ? heading.textContent.replace('¶', '').trim() : '?'}"`;
};
for (const element of main.querySelectorAll('pre > code, table, .doc-signature')) {
  if (!element.getClientRects().length) continue;  // hidden (a closed <details>)
  const box = shownBy(element);
  const r = element.getBoundingClientRect();
  if (box === null)
    problems.push(`${name(element)} runs out of the column (${r.left}..${r.right} px, column `
      + `${column.left}..${column.right} px) with no scroll box around it`);
  else if (box === element && !scrolls(element) && element.scrollWidth > element.clientWidth + 1)
    problems.push(`${name(element)} is wider than its box and cannot scroll`);
  if (fitPython && element.closest('.language-python') && element.scrollWidth > element.clientWidth + 1)
    problems.push(`${name(element)}: a Python line is cut `
      + `(${element.scrollWidth} > ${element.clientWidth} px)`);
}
return problems;
"""


@pytest.mark.timeout(900)
@pytest.mark.parametrize("width", list(VIEWPORTS))
def test_no_page_overflows_its_main_column(site: Path, served: str, browser: Any, width: str) -> None:
    wide, high, mobile = VIEWPORTS[width]
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": wide, "height": high, "deviceScaleFactor": 1, "mobile": mobile},
    )
    shots = SCREENSHOTS / width
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    pages = _pages(site)
    assert len(pages) > 30, pages
    problems: list[str] = []
    for page in pages:
        browser.get(served + page)
        browser.execute_script("return document.fonts.ready")
        for problem in browser.execute_script(OVERFLOW_SCRIPT, wide >= 1280):
            problems.append(f"/{page} at {width} px: {problem}")
        browser.save_screenshot(str(shots / f"{page.strip('/').replace('/', '_') or 'index'}.png"))
    assert not problems, "\n".join(problems)
