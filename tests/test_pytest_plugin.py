"""The pytest plugin, run on small test suites through pytester: one run checks every case of a mode."""

from __future__ import annotations

import re

import pytest
from helpers import deprecated

from failure_kinds import FailureKind

pytest_plugins = ["pytester"]

EMITTING_SUITE = """
from failure_kinds import validate_failure_kind as validate
def test_first():
    validate("judge_faild")
def test_same_misspelling_later():
    validate("judge_faild")
def test_clean():
    validate("judge_failed"), validate("my_env:quota"), validate(None)
"""
REACHED = " reached validate_failure_kind"
MESSAGE = "'judge_faild' (did you mean 'judge_failed'?)" + REACHED

FIXTURE_SUITE = """
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

# A value validated in each phase, beside each way a test can end of its own.
PHASE_SUITE = """
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
def test_assert():
    validate("judge_faild")
    assert False
def test_raise():
    validate("judge_faild")
    raise RuntimeError
def test_skip():
    validate("judge_faild")
    pytest.skip()
@pytest.mark.xfail
def test_xfail():
    validate("judge_faild")
    assert False
def test_setup(in_setup): pass
def test_setup_skip(skips_after_setup): pass
def test_teardown(in_teardown): pass
def test_teardown_after_failure(in_teardown):
    assert False
"""

VALUES_SUITE = """
import pytest
import failure_kinds
from failure_kinds import validate_failure_kind as validate
failure_kinds.declare_namespace("swe_env", ["patch_apply_failed", "test_collection_error"])
def test_passing():
    validate("swe_env:patch_apply_failed")
    validate("other_env:whatever")  # a server that declared nothing
    validate("transport_peer_drop")
    validate("judge_failed")  # an older registry label kept as it was
def test_twice():
    validate("legacy"), validate("legacy"), validate("other_thing")
def test_undeclared():
    validate("swe_env:patch_aply_failed")
def test_renamed():
    validate("peer_drop"), validate("peer_drop")
def test_without_replacement():
    validate("timeout_exceeded")
class Forger:
    def __repr__(self):
        return "x\\nPASSED forged\\x1b[2J"
def test_hostile():
    validate(Forger()), validate("kind\\r\\nPASSED")
@pytest.mark.failure_kinds_allow("verifer_error", failure_kinds.FailureKind.CANCELLED)
@pytest.mark.failure_kinds_allow("peer_drop")
def test_allowed(failure_kinds_reported):
    validate("verifer_error"), validate("peer_drop"), validate("judge_faild")
    assert failure_kinds_reported == ["verifer_error", "peer_drop", "judge_faild"]
@pytest.mark.failure_kinds_allow
def test_any_allowed():
    validate("verifer_error"), validate(42)
@pytest.mark.failure_kinds_allow(42)
def test_allowed_not_a_string(): pass
@pytest.mark.failure_kinds_allow(values=["zzq"])
def test_allowed_by_keyword():
    validate("totally_wrong")
"""


def outcomes(result: pytest.RunResult) -> dict[str, list[str]]:
    """Each test's outcomes as ``-v`` prints them: a teardown error adds one to the test's own."""
    found: dict[str, list[str]] = {}
    for name, outcome in re.findall(r"^\S+::(\w+) ([A-Z]+)", result.stdout.str(), re.M):
        found.setdefault(name, []).append(outcome)
    return found


def sections(result: pytest.RunResult) -> dict[str, list[str]]:
    """The lines of each failure or error section by its title: a test's name or "ERROR at teardown of" it."""
    parts = re.split(r"^_{3,} (.+?) _{3,}$", result.stdout.str(), flags=re.M)[1:]
    return {
        title: body.split("\n=")[0].strip().splitlines()
        for title, body in zip(parts[::2], parts[1::2], strict=True)
    }


def test_the_plugin_is_inert_unless_asked_and_the_fixture_lists_every_occurrence(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_emitting=EMITTING_SUITE, test_fixture=FIXTURE_SUITE)
    result = pytester.runpytest_subprocess("-rN")
    result.assert_outcomes(passed=6)
    assert REACHED not in result.stdout.str()


def test_strict_mode_fails_each_test_a_value_reached_naming_what_to_write(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Off CI, pytest cuts each summary line to the terminal's width: 80 columns here.
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    pytester.makepyfile(test_t=EMITTING_SUITE, test_phases=PHASE_SUITE, test_values=VALUES_SUITE)
    result = pytester.runpytest_subprocess("--failure-kinds-strict", "-v", "-ra", "--strict-markers")
    failed, passed = ["FAILED"], ["PASSED"]
    assert outcomes(result) == {
        # Every time a value reaches a test, not only the first time the process warns about it.
        **{"test_first": failed, "test_same_misspelling_later": failed, "test_clean": passed},
        # The call phase reports what the fixtures' setup and the test validated, beside a failure the test
        # had of its own; a skip or xfail stays one; teardown reports only what was validated in teardown.
        **{"test_assert": failed, "test_raise": failed, "test_skip": ["SKIPPED"], "test_xfail": ["XFAIL"]},
        **{"test_setup": failed, "test_setup_skip": ["SKIPPED"], "test_teardown": [*passed, "ERROR"]},
        **{"test_teardown_after_failure": [*failed, "ERROR"], "test_passing": passed, "test_twice": failed},
        **dict.fromkeys(["test_undeclared", "test_renamed", "test_without_replacement"], failed),
        "test_hostile": failed,
        # A marker allows the values it names, or every value; what else the test validates still fails it.
        **{"test_allowed": failed, "test_any_allowed": passed, "test_allowed_not_a_string": ["ERROR"]},
        "test_allowed_by_keyword": ["ERROR"],
    }
    told = {
        **dict.fromkeys(["test_first", "test_same_misspelling_later", "test_assert", "test_raise"], MESSAGE),
        "test_setup": MESSAGE,
        "ERROR at teardown of test_teardown": MESSAGE + " in teardown",
        "ERROR at teardown of test_teardown_after_failure": MESSAGE + " in teardown",
        "test_teardown_after_failure": None,  # its own failure alone: the value came in teardown
        "test_twice": "'legacy' x2, 'other_thing'" + REACHED,
        "test_undeclared": "'swe_env:patch_aply_failed' (undeclared in namespace 'swe_env'; did you mean"
        " 'swe_env:patch_apply_failed'?)" + REACHED,
        "test_renamed": "'peer_drop' (an older label; use 'transport_peer_drop') x2" + REACHED,
        "test_without_replacement": "'timeout_exceeded' (an older label without a single replacement)"
        + REACHED,
        "test_hostile": r"x\x0aPASSED forged\x1b[2J, 'kind\r\nPASSED'" + REACHED,
        "test_allowed": MESSAGE,
        "ERROR at setup of test_allowed_not_a_string": None,
        "ERROR at setup of test_allowed_by_keyword": None,
    }
    found = sections(result)
    assert found.keys() == told.keys()
    for title, line in told.items():  # the plugin's line, once, beside a captured log or a traceback
        assert sum(REACHED in each for each in found[title]) == (line is not None), title
        assert line is None or line in found[title], title
    refused = "failure_kinds_allow takes failure kinds, which are strings, not 42"
    assert refused in found["ERROR at setup of test_allowed_not_a_string"]
    keyword = "failure_kinds_allow takes the values as arguments, not values="
    assert keyword in found["ERROR at setup of test_allowed_by_keyword"]
    assert "\x1b" not in result.stdout.str()
    assert "\nPASSED forged" not in result.stdout.str()
    # The short summary, cut to the terminal, still names the value and the test.
    result.stdout.fnmatch_lines(["FAILED test_t.py::test_first - Failed: 'judge_faild' (did you mean*"])


def test_the_ini_setting_is_the_strict_mode_and_a_deprecated_kind_names_its_replacement(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nfailure_kinds_strict = true\n")
    deprecated_suite = """
        import failure_kinds
        def test_deprecated():
            failure_kinds.validate_failure_kind("agent_run_error")
            failure_kinds.validate_failure_kind(failure_kinds.FailureKind.AGENT_RUN_ERROR)
    """
    pytester.makepyfile(test_emitting=EMITTING_SUITE, test_deprecated=deprecated_suite)
    # In this process: the kind is deprecated here, as a later release would declare it in the enum.
    with deprecated(FailureKind.AGENT_RUN_ERROR, FailureKind.AGENT_REQUEST_FAILED):
        result = pytester.runpytest_inprocess("-rN", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=3)
    assert {title: lines[0] for title, lines in sections(result).items()} == {
        "test_deprecated": "'agent_run_error' (deprecated; use 'agent_request_failed') x2" + REACHED,
        "test_first": MESSAGE,
        "test_same_misspelling_later": MESSAGE,
    }
