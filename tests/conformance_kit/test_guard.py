"""The override guard: an adapter project cannot silently override, delete or skip a conformance test."""

from __future__ import annotations

import pytest

from mastra_memory_conformance.guard import declared_override, is_kit_suite, suite_violations
from mastra_memory_conformance.suite.filters import FilterOperatorsSuite

# A real test of the kit, named at run time so the tests follow the suite as it grows.
SUITE_TEST = next(name for name, value in vars(FilterOperatorsSuite).items() if name.startswith("test"))

HEADER = """
import pytest
from mastra_memory_conformance.guard import declared_override
from mastra_memory_conformance.suite.filters import FilterOperatorsSuite
"""


def _module(body: str) -> str:
    return HEADER + body.replace("SUITE_TEST", SUITE_TEST)


def _run(pytester: pytest.Pytester, body: str) -> pytest.RunResult:
    pytester.makepyfile(test_adapter=_module(body))
    return pytester.runpytest("-p", "no:socket", "-q", "-rs")


def test_the_kit_suites_are_recognised() -> None:
    assert is_kit_suite(FilterOperatorsSuite)

    class TestMine(FilterOperatorsSuite):
        pass

    assert not is_kit_suite(TestMine)
    assert suite_violations(TestMine) == []


def test_a_plain_subclass_runs_the_suite_without_a_guard_item(kit_pytester: pytest.Pytester) -> None:
    result = _run(
        kit_pytester,
        """
class TestMine(FilterOperatorsSuite):
    def test_extra_check(self):
        assert True
""",
    )
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] == 1
    assert outcomes["skipped"] > 0  # the suite's own tests: no --target given
    assert "failed" not in outcomes
    assert "conformance-guard" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.OK


def test_an_override_without_a_reason_fails_the_run(kit_pytester: pytest.Pytester) -> None:
    result = _run(
        kit_pytester,
        """
class TestMine(FilterOperatorsSuite):
    async def SUITE_TEST(self, *args, **kwargs):
        pass
""",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.parseoutcomes()["failed"] == 1
    result.stdout.fnmatch_lines(
        [
            "*TestMine[[]conformance-guard[]]*",
            f"*TestMine.{SUITE_TEST} (a conformance test of FilterOperatorsSuite) is overridden without a "
            "declared reason*",
        ]
    )


def test_a_deleted_test_fails_the_run(kit_pytester: pytest.Pytester) -> None:
    result = _run(
        kit_pytester,
        """
class TestMine(FilterOperatorsSuite):
    SUITE_TEST = None
""",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"*TestMine.{SUITE_TEST}*is deleted (set to None)*"])


def test_an_xfail_without_a_reason_is_not_a_declaration(kit_pytester: pytest.Pytester) -> None:
    result = _run(
        kit_pytester,
        """
class TestMine(FilterOperatorsSuite):
    @pytest.mark.xfail
    async def SUITE_TEST(self):
        raise AssertionError("the backend cannot")
""",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*overridden without a declared reason*"])


def test_a_class_level_skip_fails_the_run(kit_pytester: pytest.Pytester) -> None:
    result = _run(
        kit_pytester,
        """
@pytest.mark.skip(reason="too slow")
class TestMine(FilterOperatorsSuite):
    pass
""",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*TestMine skips every conformance test with @pytest.mark.skip*"])


def test_a_module_level_skip_fails_the_run(kit_pytester: pytest.Pytester) -> None:
    result = _run(
        kit_pytester,
        """
pytestmark = pytest.mark.skipif(True, reason="not today")

class TestMine(FilterOperatorsSuite):
    pass
""",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*module test_adapter skips every conformance test with @pytest.mark.skipif*"]
    )


def test_an_override_with_an_xfail_reason_is_accepted(kit_pytester: pytest.Pytester) -> None:
    result = _run(
        kit_pytester,
        """
class TestMine(FilterOperatorsSuite):
    @pytest.mark.xfail(reason="the backend cannot express this", strict=True)
    def SUITE_TEST(self):
        raise AssertionError("declared failure")
""",
    )
    assert "conformance-guard" not in result.stdout.str()
    assert result.parseoutcomes().get("failed", 0) == 0
    assert result.parseoutcomes()["xfailed"] == 1


def test_an_override_with_declared_override_is_accepted(kit_pytester: pytest.Pytester) -> None:
    result = _run(
        kit_pytester,
        """
class TestMine(FilterOperatorsSuite):
    @declared_override(reason="replaced by a stricter check of this backend")
    def SUITE_TEST(self):
        assert 1 + 1 == 2
""",
    )
    assert "conformance-guard" not in result.stdout.str()
    assert result.parseoutcomes().get("failed", 0) == 0
    assert result.parseoutcomes()["passed"] == 1


def test_an_intermediate_base_class_is_checked_too() -> None:
    class AdapterBase(FilterOperatorsSuite):
        pass

    setattr(AdapterBase, SUITE_TEST, lambda self: None)

    class TestMine(AdapterBase):
        pass

    problems = suite_violations(TestMine)
    assert len(problems) == 1
    assert f"AdapterBase.{SUITE_TEST}" in problems[0]
    assert "overridden without a declared reason" in problems[0]


def test_declared_override_needs_a_reason() -> None:
    with pytest.raises(ValueError, match="non-empty reason"):
        declared_override(reason="  ")


def test_the_kits_own_runner_modules_pass_the_guard(kit_pytester: pytest.Pytester) -> None:
    result = kit_pytester.runpytest("-p", "no:socket", "-q", "--pyargs", "mastra_memory_conformance.tests")
    assert "conformance-guard" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.OK
    assert result.parseoutcomes()["skipped"] > 0
