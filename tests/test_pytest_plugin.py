"""The pytest plugin, run on small test suites through pytester."""

from __future__ import annotations

import pytest

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


def test_inert_unless_asked(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(EMITTING_SUITE)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=3)


def test_strict_option_fails_every_emitting_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(EMITTING_SUITE)
    # -rN: no short summary, whose line length depends on the terminal (and on CI=true).
    result = pytester.runpytest_subprocess("--failure-kinds-strict", "-rN")
    result.assert_outcomes(passed=1, failed=2)
    message = "'judge_faild' (did you mean 'judge_failed'?) reached validate_failure_kind"
    assert result.stdout.str().count(message) == 2
    result.stdout.fnmatch_lines(["*_ test_first _*", message, "*_ test_same_misspelling_later _*", message])


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
    message = "'judge_faild' (did you mean 'judge_failed'?) reached validate_failure_kind"
    assert result.stdout.str().count(message) == (reported is not None)
    if reported is not None:
        header = "*_ ERROR at teardown of test_it _*" if reported else "*_ test_it _*"
        result.stdout.fnmatch_lines([header, message + reported])


def test_strict_from_ini(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nfailure_kinds_strict = true\n")
    pytester.makepyfile(EMITTING_SUITE)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1, failed=2)


def test_strict_counts_repeats_within_a_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import failure_kinds

        def test_twice():
            failure_kinds.validate_failure_kind("legacy")
            failure_kinds.validate_failure_kind("legacy")
            failure_kinds.validate_failure_kind("other_thing")
        """
    )
    result = pytester.runpytest_subprocess("--failure-kinds-strict")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*'legacy' x2, 'other_thing'*"])


def test_fixture_lists_every_occurrence_per_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import failure_kinds

        def test_collects(failure_kinds_reported):
            failure_kinds.validate_failure_kind("a_label")
            failure_kinds.validate_failure_kind("cancelled")
            failure_kinds.validate_failure_kind("a_label")
            failure_kinds.validate_failure_kind(42)
            failure_kinds.validate_failure_kind("b_label")
            assert failure_kinds_reported == ["a_label", "a_label", 42, "b_label"]

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


def test_strict_fails_on_undeclared_kinds_of_declared_servers(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import failure_kinds

        failure_kinds.declare_namespace("swe_env", ["patch_apply_failed", "test_collection_error"])

        def test_declared():
            failure_kinds.validate_failure_kind("swe_env:patch_apply_failed")

        def test_never_declared_server():
            failure_kinds.validate_failure_kind("other_env:whatever")

        def test_undeclared():
            failure_kinds.validate_failure_kind("swe_env:patch_aply_failed")
        """
    )
    result = pytester.runpytest_subprocess("--failure-kinds-strict", "-rN")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_undeclared _*",
            "'swe_env:patch_aply_failed' (undeclared in namespace 'swe_env'; did you mean"
            " 'swe_env:patch_apply_failed'?) reached validate_failure_kind",
        ]
    )


def test_strict_fails_on_older_labels_naming_the_replacement(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import failure_kinds

        def test_renamed():
            failure_kinds.validate_failure_kind("peer_drop")
            failure_kinds.validate_failure_kind("peer_drop")

        def test_without_replacement():
            failure_kinds.validate_failure_kind("timeout_exceeded")

        def test_current():
            failure_kinds.validate_failure_kind("transport_peer_drop")
            failure_kinds.validate_failure_kind("judge_failed")  # an older registry label kept as it was
        """
    )
    result = pytester.runpytest_subprocess("--failure-kinds-strict", "-rN")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*_ test_renamed _*",
            "'peer_drop' (an older label; use 'transport_peer_drop') x2 reached validate_failure_kind",
            "*_ test_without_replacement _*",
            "'timeout_exceeded' (an older label without a single replacement) reached validate_failure_kind",
        ]
    )


def test_the_fixture_lists_older_labels_too(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import failure_kinds

        def test_collects(failure_kinds_reported):
            failure_kinds.validate_failure_kind("oom_killed")
            failure_kinds.validate_failure_kind("provider_oom_killed")
            failure_kinds.validate_failure_kind("oom_killed")
            assert failure_kinds_reported == ["oom_killed", "oom_killed"]
        """
    )
    pytester.runpytest_subprocess().assert_outcomes(passed=1)


def test_failure_message_escapes_hostile_values(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import failure_kinds

        class Forger:
            def __repr__(self):
                return "x\\nPASSED forged\\x1b[2J"

        def test_hostile():
            failure_kinds.validate_failure_kind(Forger())
            failure_kinds.validate_failure_kind("kind\\r\\nPASSED")
        """
    )
    result = pytester.runpytest_subprocess("--failure-kinds-strict", "-rN")
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "\x1b" not in output
    assert "\nPASSED forged" not in output
    result.stdout.fnmatch_lines([r"*x\x0aPASSED forged\x1b[[]2J*'kind\r\nPASSED'*"])
