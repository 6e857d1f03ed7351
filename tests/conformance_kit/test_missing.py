"""The rule for a test that needs a tool or a server this machine may lack (issue 23): outside CI it skips
with the reason, under ``CI`` (or ``MASTRA_MEMORY_REQUIRE_SERVERS=1``) it fails with it.

The pytester runs start the real FerretDB provisioner with no Go on PATH and an empty build cache, the
situation of the README's test command on a fresh Debian: the adapter's ``server`` fixture used to turn
that into 24 errors."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from mastra_memory_conformance.missing import REQUIRE_ENV, missing, need_tool, needs, started
from mastra_memory_conformance.targets import TargetUnavailable

GO_MISSING = "`go` is not on PATH; it is needed to build FerretDB v1.24.2"


@pytest.fixture
def outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv(REQUIRE_ENV, raising=False)


@pytest.fixture
def empty_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A PATH with nothing on it, and no ``UV``; the directory it names."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("UV", raising=False)
    return empty


@pytest.mark.usefixtures("outside_ci")
def test_outside_ci_a_missing_tool_skips_with_the_reason() -> None:
    with pytest.raises(pytest.skip.Exception, match=r"^go is missing$"):
        missing("go is missing")


@pytest.mark.parametrize(("variable", "value"), [("CI", "true"), (REQUIRE_ENV, "1")])
def test_under_ci_a_missing_tool_fails_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv(variable, value)
    with pytest.raises(pytest.fail.Exception, match=r"^go is missing \(required here: CI or"):
        missing("go is missing")


@pytest.mark.usefixtures("outside_ci")
def test_needs_turns_an_unavailable_backend_into_the_rule_and_lets_other_errors_through() -> None:
    with (
        pytest.raises(pytest.skip.Exception, match=f"^FerretDB unavailable: {re.escape(GO_MISSING)}$"),
        needs("FerretDB"),
    ):
        raise TargetUnavailable(GO_MISSING)
    with pytest.raises(ValueError, match="a bug"), needs("FerretDB"):
        raise ValueError("a bug")


@pytest.mark.usefixtures("outside_ci")
def test_started_covers_only_the_start_of_a_server() -> None:
    stopped: list[bool] = []

    class Server:
        def __enter__(self) -> str:
            return "uri"

        def __exit__(self, *exc: object) -> None:
            stopped.append(True)

    def use() -> None:
        with started(Server(), "server") as uri:
            assert uri == "uri"
            raise TargetUnavailable("raised while in use: a test error, not a missing server")

    with pytest.raises(TargetUnavailable):
        use()
    assert stopped == [True]


@pytest.mark.usefixtures("outside_ci", "empty_path")
def test_need_tool_names_the_tool_and_its_purpose(tmp_path: Path) -> None:
    with pytest.raises(
        pytest.skip.Exception, match=r"^`no-such-tool` is not on PATH; it is needed to build it$"
    ):
        need_tool("no-such-tool", "build it")


def _executable(directory: Path, name: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    tool = directory / name
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    return tool


@pytest.mark.usefixtures("outside_ci")
def test_need_tool_finds_uv_where_nox_and_uv_say_it_is(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, empty_path: Path
) -> None:
    """``.venv/bin/nox`` run without activating the venv: its uv is on no PATH, the noxfile exports it."""
    uv = _executable(tmp_path / "venv-bin", "uv")
    monkeypatch.setenv("UV", str(uv))
    assert need_tool("uv", "build a venv", env_var="UV") == str(uv)
    monkeypatch.setenv("UV", str(tmp_path / "gone" / "uv"))  # a stale value falls back to the search
    on_path = _executable(empty_path, "uv")
    assert need_tool("uv", "build a venv", env_var="UV") == str(on_path)


@pytest.mark.usefixtures("outside_ci", "empty_path")
def test_need_tool_finds_a_tool_installed_beside_the_interpreter() -> None:
    # `.venv/bin/pytest` without an activated venv: the venv's own tools are beside sys.executable.
    beside = Path(sys.executable).parent
    name = next(p.name for p in beside.iterdir() if p.is_file() and os.access(p, os.X_OK))
    assert need_tool(name, "run") == str(beside / name)


FIXTURE_CONFTEST = """
import pytest
from mastra_memory_conformance.missing import started
from mastra_memory_mongodb.testing.ferretdb import ferretdb_server


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    with started(ferretdb_server(tmp_path_factory.mktemp("ferretdb")), "a MongoDB server") as uri:
        yield uri
"""


@pytest.mark.parametrize(("ci", "outcome"), [("", "skipped"), ("true", "errors")])
def test_a_server_fixture_without_go_skips_outside_ci_and_errors_under_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, ci: str, outcome: str
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("MASTRA_MEMORY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CI", ci)
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest(FIXTURE_CONFTEST)
    pytester.makepyfile(test_store="def test_one(server):\n    pass\n\ndef test_two(server):\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rsE", timeout=120)
    result.assert_outcomes(**{outcome: 2})
    result.stdout.fnmatch_lines([f"*a MongoDB server unavailable: {GO_MISSING}*"])
