from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from failure_kinds import FAILURE_KINDS, FailureKind, suggest


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("Transport-Timeout", "transport_timeout"),
        ("TRANSPORT_TIMEOUT", "transport_timeout"),
        ("transport timeout", "transport_timeout"),
        ("TransportTimeout", "transport_timeout"),
        ("transport_timout", "transport_timeout"),
        ("verifer_error", "verifier_error"),
        ("sesion_lost", "session_lost"),
        ("judge_fail", "judge_failed"),
        ("session_release", "session_release_failed"),
        ("provider_oom", "provider_oom_killed"),
        ("Kill-Shaped", "kill_shaped"),
        ("cancelled", "cancelled"),
    ],
)
def test_suggests_what_was_meant(typed: str, meant: str) -> None:
    assert suggest(typed) == meant


@pytest.mark.parametrize(
    "typed",
    ["something_invented", "judge", "agent", "timeout_exceeded", "transient", "", "x", "my_env:quota"],
)
def test_nothing_close_suggests_nothing(typed: str) -> None:
    assert suggest(typed) is None


@pytest.mark.parametrize("value", [None, 1, b"judge_fail", ["judge_fail"], "judge_fail" * 1000])
def test_non_strings_and_huge_strings_suggest_nothing(value: object) -> None:
    assert suggest(value) is None


@given(st.sampled_from(list(FailureKind)), st.sampled_from(["upper", "title", "dash", "space"]))
def test_every_kind_survives_case_and_separator_changes(kind: FailureKind, style: str) -> None:
    styled = {
        "upper": kind.value.upper(),
        "title": kind.value.title(),
        "dash": kind.value.replace("_", "-"),
        "space": kind.value.replace("_", " "),
    }[style]
    assert suggest(styled) == kind.value


@given(st.text(max_size=80))
def test_suggestion_is_always_registered_or_none(text: str) -> None:
    result = suggest(text)
    assert result is None or result in FAILURE_KINDS
