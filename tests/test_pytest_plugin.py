"""The pytest plugin, run on small test suites through pytester."""

from __future__ import annotations

import pytest
from helpers import deprecated

from failure_kinds import FailureKind

pytest_plugins = ["pytester"]

EMITTING_SUITE = """
import failure_kinds

def test_first():
    failure_kinds.validate_failure_kind("judge_faild")

def test_same_misspelling_later():
    failure_kinds.validate_failure_kind("judge_faild")

def test_clean():
    failure_kinds.validate_failure_kind("judge_failed")
    failure_kinds.validate_failure_kind("my_env:quota")
    failure_kinds.validate_failure_kind(None)
"""
MESSAGE = "'judge_faild' (did you mean 'judge_failed'?) reached validate_failure_kind"


@pytest.mark.parametrize(("arguments", "ini"), [((), ""), (("--failure-kinds-strict",), ""), ((), "true")])
def test_strict_mode_fails_every_emitting_test_and_is_inert_unless_asked(
    pytester: pytest.Pytester, arguments: tuple[str, ...], ini: str
) -> None:
    if ini:
        pytester.makeini(f"[pytest]\nfailure_kinds_strict = {ini}\n")
    pytester.makepyfile(EMITTING_SUITE)
    # -rN: no short summary, whose line length depends on the terminal (and on CI=true).
    result = pytester.runpytest_subprocess(*arguments, "-rN")
    if not (arguments or ini):
        result.assert_outcomes(passed=3)
        return
    result.assert_outcomes(passed=1, failed=2)
    assert result.stdout.str().count(MESSAGE) == 2  # every time, not only the first time it is warned about
    result.stdout.fnmatch_lines(["*_ test_first _*", MESSAGE, "*_ test_same_misspelling_later _*", MESSAGE])


def test_strict_short_summary_names_the_value_and_the_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Off CI, pytest cuts each summary line to the terminal's width: 80 columns here.
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    pytester.makepyfile(test_t=EMITTING_SUITE)
    result = pytester.runpytest_subprocess("--failure-kinds-strict", "-ra")
    result.stdout.fnmatch_lines(["FAILED test_t.py::test_first - Failed: 'judge_faild' (did you mean*"])


PHASE_PRELUDE = """
import pytest
from failure_kinds import validate_failure_kind as validate

@pytest.fixture
def in_setup():
    validate("judge_faild")

@pytest.fixture
def skips_after_setup(in_setup):
    pytest.skip()

@pytest.fixture
def in_teardown():
    yield
    validate("judge_faild")
"""
IN_BODY = 'def test_it():\n    validate("judge_faild")\n'


@pytest.mark.parametrize(
    ("suite", "outcomes", "reported"),
    [
        (IN_BODY + "    assert False", {"failed": 1}, ""),
        (IN_BODY + "    raise RuntimeError", {"failed": 1}, ""),
        (IN_BODY + "    pytest.skip()", {"skipped": 1}, None),
        ("@pytest.mark.xfail\n" + IN_BODY + "    assert False", {"xfailed": 1}, None),
        ("def test_it(in_setup):\n    pass", {"failed": 1}, ""),
        ("def test_it(skips_after_setup):\n    pass", {"skipped": 1}, None),
        ("def test_it(in_teardown):\n    pass", {"passed": 1, "errors": 1}, " in teardown"),
        ("def test_it(in_teardown):\n    assert False", {"failed": 1, "errors": 1}, " in teardown"),
    ],
    ids=["assert", "raise", "skip", "xfail", "setup", "setup-skip", "teardown", "teardown-after-failure"],
)
def test_strict_reports_a_value_once_on_the_phase_that_validated_it(
    pytester: pytest.Pytester, suite: str, outcomes: dict[str, int], reported: str | None
) -> None:
    """The call phase reports what the fixtures' setup and the test validated, beside a failure the test
    had of its own; a skip or xfail stays one; teardown reports only what was validated in teardown."""
    pytester.makepyfile(PHASE_PRELUDE + suite)
    result = pytester.runpytest_subprocess("--failure-kinds-strict", "-rN")
    result.assert_outcomes(**outcomes)
    assert result.stdout.str().count(MESSAGE) == (reported is not None)
    if reported is not None:
        header = "*_ ERROR at teardown of test_it _*" if reported else "*_ test_it _*"
        result.stdout.fnmatch_lines([header, MESSAGE + reported])


def test_strict_names_what_to_write_for_each_kind_of_value(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import failure_kinds

        failure_kinds.declare_namespace("swe_env", ["patch_apply_failed", "test_collection_error"])

        def test_passing():
            failure_kinds.validate_failure_kind("swe_env:patch_apply_failed")
            failure_kinds.validate_failure_kind("other_env:whatever")  # a server that declared nothing
            failure_kinds.validate_failure_kind("transport_peer_drop")
            failure_kinds.validate_failure_kind("judge_failed")  # an older registry label kept as it was

        def test_twice():
            failure_kinds.validate_failure_kind("legacy")
            failure_kinds.validate_failure_kind("legacy")
            failure_kinds.validate_failure_kind("other_thing")

        def test_undeclared():
            failure_kinds.validate_failure_kind("swe_env:patch_aply_failed")

        def test_renamed():
            failure_kinds.validate_failure_kind("peer_drop")
            failure_kinds.validate_failure_kind("peer_drop")

        def test_without_replacement():
            failure_kinds.validate_failure_kind("timeout_exceeded")

        class Forger:
            def __repr__(self):
                return "x\\nPASSED forged\\x1b[2J"

        def test_hostile():
            failure_kinds.validate_failure_kind(Forger())
            failure_kinds.validate_failure_kind("kind\\r\\nPASSED")
        """
    )
    result = pytester.runpytest_subprocess("--failure-kinds-strict", "-rN")
    result.assert_outcomes(passed=1, failed=5)
    result.stdout.fnmatch_lines(
        [
            "*_ test_twice _*",
            "'legacy' x2, 'other_thing' reached validate_failure_kind",
            "*_ test_undeclared _*",
            "'swe_env:patch_aply_failed' (undeclared in namespace 'swe_env'; did you mean"
            " 'swe_env:patch_apply_failed'?) reached validate_failure_kind",
            "*_ test_renamed _*",
            "'peer_drop' (an older label; use 'transport_peer_drop') x2 reached validate_failure_kind",
            "*_ test_without_replacement _*",
            "'timeout_exceeded' (an older label without a single replacement) reached validate_failure_kind",
            "*_ test_hostile _*",
            r"*x\x0aPASSED forged\x1b[[]2J*'kind\r\nPASSED'*",
        ]
    )
    output = result.stdout.str()
    assert "\x1b" not in output
    assert "\nPASSED forged" not in output


def test_a_deprecated_kind_fails_the_strict_mode_naming_its_replacement(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import failure_kinds

        def test_deprecated():
            failure_kinds.validate_failure_kind("agent_run_error")
            failure_kinds.validate_failure_kind(failure_kinds.FailureKind.AGENT_RUN_ERROR)
        """
    )
    # In this process: the kind is deprecated here, as a later release would declare it in the enum.
    with deprecated(FailureKind.AGENT_RUN_ERROR, FailureKind.AGENT_REQUEST_FAILED):
        result = pytester.runpytest_inprocess("--failure-kinds-strict", "-rN", "-p", "no:randomly")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["'agent_run_error' (deprecated; use 'agent_request_failed') x2 reached validate_failure_kind"]
    )


def test_the_fixture_lists_every_occurrence_per_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import failure_kinds

        def test_collects(failure_kinds_reported):
            for value in ("a_label", "cancelled", "a_label", 42, "oom_killed", "provider_oom_killed"):
                failure_kinds.validate_failure_kind(value)
            assert failure_kinds_reported == ["a_label", "a_label", 42, "oom_killed"]

        def test_starts_empty(failure_kinds_reported):
            assert failure_kinds_reported == []
            failure_kinds.validate_failure_kind("a_label")
            assert failure_kinds_reported == ["a_label"]

        def test_observer_removed_after_each_test():
            assert failure_kinds._runtime.OBSERVERS == []
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=3)
