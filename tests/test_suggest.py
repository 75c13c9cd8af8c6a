"""Suggestions: the registered kind a misspelling meant (failure_kinds.suggest), the declared kind of a
server, and the matcher behind both, at a bounded cost against thousands of declared kinds."""

from __future__ import annotations

import difflib
import random

import pytest
from helpers import warnings_of
from hypothesis import given
from hypothesis import strategies as st

from failure_kinds import (
    FAILURE_KINDS,
    FailureKind,
    _suggest,
    declare_namespace,
    suggest,
    validate_failure_kind,
)
from failure_kinds.commands.check import check_name


@pytest.mark.parametrize(("typed", "meant"), [
    *[(text, "transport_timeout") for text in ("Transport-Timeout", "TRANSPORT_TIMEOUT")],
    *[(text, "transport_timeout") for text in ("transport timeout", "TransportTimeout", "transport_timout")],
    ("verifer_error", "verifier_error"), ("sesion_lost", "session_lost"), ("judge_fail", "judge_failed"),
    ("session_release", "session_release_failed"), ("provider_oom", "provider_oom_killed"),
    ("Kill-Shaped", "kill_shaped"), ("cancelled", "cancelled"),
    # A value that begins with a domain gets a kind of that domain over a look-alike of another.
    ("verifier_unavailable", "verifier_error"), ("Verifier-Quota-Exhausted", "verifier_error"),
    ("persistence_error", "persistence_failed"), ("provider_unavailble", "provider_unavailable"),
    *[(typed, None) for typed in ("something_invented", "judge", "agent", "timeout_exceeded", "transient")],
    *[(typed, None) for typed in ("", "x", "my_env:quota", None, 1, b"judge_fail", ["judge_fail"])],
    ("judge_fail" * 1000, None),
    ("canc", None),  # a cut-off name is a guess only once five characters are written
])  # fmt: skip
def test_suggests_what_was_meant_or_nothing(typed: object, meant: str | None) -> None:
    assert suggest(typed) == meant


@given(
    st.sampled_from(list(FailureKind)),
    st.sampled_from(["upper", "title", "dash", "space"]),
    st.text(max_size=80),
)
def test_every_kind_survives_case_and_separator_changes(kind: FailureKind, style: str, text: str) -> None:
    styled = {
        "upper": kind.value.upper(),
        "title": kind.value.title(),
        "dash": kind.value.replace("_", "-"),
        "space": kind.value.replace("_", " "),
    }[style]
    assert suggest(styled) == kind.value
    assert suggest(text) is None or suggest(text) in FAILURE_KINDS


# The matcher, against any candidates: difflib's own answer for a small set -------------------------------

kind_names = st.from_regex(r"[a-z][a-z0-9_]{0,24}", fullmatch=True)
styled_names = st.from_regex(r"[A-Za-z][A-Za-z0-9 ._-]{0,24}", fullmatch=True)


def plain_closest(name: str, candidates: list[str]) -> str | None:
    """The matcher written out with difflib against every candidate, as it was before any pre-filter."""
    if not candidates or len(name) > max(_suggest.LIMIT, 2 * max(map(len, candidates))):
        return None
    wanted = _suggest.normal(name)
    if wanted in candidates:
        return wanted
    continuing = sorted({candidate for candidate in candidates if candidate.startswith(wanted)})
    if len(continuing) == 1 and len(wanted) >= 5:
        return continuing[0]
    close = difflib.get_close_matches(wanted, candidates, n=1, cutoff=0.8)
    return close[0] if close else None


@given(
    kind_names | st.text(max_size=30) | styled_names,
    st.lists(kind_names, max_size=_suggest.SMALL, unique=True),
    st.lists(st.text(max_size=40), max_size=8),
)
def test_a_small_candidate_set_gets_plain_difflibs_answer(
    name: str, candidates: list[str], any_texts: list[str]
) -> None:
    assert _suggest.closest(name, tuple(candidates)) == plain_closest(name, candidates)
    assert _suggest.closest(name, candidates) == plain_closest(name, candidates)
    assert _suggest.closest(name, any_texts) in (None, *any_texts)


@given(st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,20}(:[a-z][a-z0-9_]{0,20})?", fullmatch=True), min_size=1))
def test_each_candidate_finds_itself(candidates: list[str]) -> None:
    for candidate in candidates:
        assert _suggest.closest(candidate, candidates) == candidate
        if not any(character.isdigit() for character in candidate):
            # (A digit before a capital reads as a word boundary: "A0A" is "a0_a".)
            assert _suggest.closest(candidate.upper(), candidates) == candidate


class _EqualToEverything(type):
    def __eq__(cls, other: object) -> bool:
        return True

    def __hash__(cls) -> int:
        return hash(str)


class _Odd(metaclass=_EqualToEverything):
    pass


@pytest.mark.parametrize("count", [1, _suggest.SMALL + 1])
def test_a_candidate_whose_type_claims_to_be_str_is_skipped(count: int) -> None:
    # Only type ids are compared: neither a candidate's methods nor its type's decide it is a str.
    candidates: list[object] = [f"transport_timeout_{number}" for number in range(count - 1)]
    candidates += ["transport_timeout", _Odd()]
    assert _suggest.closest("transport_timout", candidates) == "transport_timeout"  # pyright: ignore[reportArgumentType]


def test_equally_close_kinds_tie_the_same_way_whatever_the_set_order() -> None:
    # A set's iteration order follows the hash seed; its answer follows the names alone.
    kinds = ["quota_hia", "quota_hib"]
    assert _suggest.closest("quota_hix", frozenset(kinds)) == _suggest.closest("quota_hix", sorted(kinds))
    assert _suggest.closest("quota_hix", {kinds[1], kinds[0]}) == _suggest.closest("quota_hix", sorted(kinds))


# Declared kinds: any case, any number ---------------------------------------------------------------------

WORDS = [
    *("alpha", "beta", "gamma", "delta", "patch", "apply", "test", "collect", "quota", "region", "shard"),
    *("index", "cache", "disk", "net", "pool", "lease", "token", "queue", "write", "read", "parse"),
    *("build", "fetch", "load", "store", "sync", "lock"),
]


def declared_like_a_real_environment(count: int, seed: int) -> tuple[str, ...]:
    """Kinds named as environments name them: a few words from one small vocabulary and a number."""
    chosen = random.Random(seed)
    kinds: set[str] = set()
    while len(kinds) < count:
        kinds.add("_".join(chosen.sample(WORDS, 3)) + f"_{chosen.randrange(1000)}")
    return tuple(sorted(kinds))


def misspelled(kind: str, chosen: random.Random) -> str:
    """``kind`` with one typo (a wrong, missing, extra or swapped letter) somewhere inside it."""
    at = chosen.randrange(1, len(kind) - 2)
    return {
        "wrong": kind[:at] + chosen.choice("xyz") + kind[at + 1 :],
        "missing": kind[:at] + kind[at + 1 :],
        "extra": kind[:at] + chosen.choice("xyz") + kind[at:],
        "swapped": kind[:at] + kind[at + 1] + kind[at] + kind[at + 2 :],
    }[chosen.choice(["wrong", "missing", "extra", "swapped"])]


def test_a_large_candidate_set_answers_typos_as_plain_difflib_does() -> None:
    # 3,000 kinds keep plain difflib, the reference, quick enough to run once per typo.
    kinds = declared_like_a_real_environment(3000, seed=15)
    chosen = random.Random(16)
    for typo in [misspelled(chosen.choice(kinds), chosen) for _ in range(60)]:
        assert _suggest.closest(typo, kinds) == plain_closest(typo, list(kinds)), typo


def test_thirty_thousand_declared_kinds_suggest_the_right_one_at_bounded_cost(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    kinds = declared_like_a_real_environment(30_000, seed=30)
    chosen = random.Random(31)
    meant = [chosen.choice(kinds) for _ in range(100)]
    compared: list[int] = []
    real = difflib.get_close_matches

    def counting(word: str, possibilities: list[str], n: int, cutoff: float) -> list[str]:
        compared.append(len(possibilities))
        return real(word, possibilities, n=n, cutoff=cutoff)

    monkeypatch.setattr(_suggest.difflib, "get_close_matches", counting)
    declare_namespace("swe_env", kinds)
    # Typos that only difflib can place: each changes a letter inside the name.
    typos = [kind[:10] + ("x" if kind[10] != "x" else "y") + kind[11:] for kind in meant]
    # A typo in a short last word sorts away from its name among the many that start alike.
    last_words = ["store_apply_fetch_y260", "sync_write_read_z47"]
    for typo in [*typos, *last_words]:
        validate_failure_kind(f"swe_env:{typo}")
    warned = warnings_of(caplog)
    assert warned[0] == (
        f"undeclared failure kind 'swe_env:{typos[0]}' in declared namespace 'swe_env'; "
        f"did you mean 'swe_env:{meant[0]}'?"
    )
    found = [message.rpartition(" did you mean ")[2] for message in warned]
    meant += ["store_apply_fetch_260", "sync_write_read_447"]
    assert found == [f"'swe_env:{kind}'?" for kind in meant]
    # The check command answers from a configuration's declarations (server -> tuple of kinds) alike.
    given_declarations = {"swe_env": kinds}
    verdicts = [check_name(f"swe_env:{typo}", given_declarations)["suggestion"] for typo in typos[:10]]
    assert verdicts == [f"swe_env:{kind}" for kind in meant[:10]]
    assert compared
    assert max(compared) <= _suggest.SHORT_LIST  # never every declared kind


@pytest.mark.parametrize(
    "typed", ["My_Env:quota_hit", "MY_ENV:QUOTA_HIT", "MyEnv:QuotaHit", "my-env:quota-hit"]
)
def test_namespaced_suggestions_ignore_case_and_separators(
    typed: str, caplog: pytest.LogCaptureFixture
) -> None:
    declare_namespace("my_env", ["quota_hit", "patch_failed"])
    # What the check command answers from a configuration's declarations, then the run-time warning.
    assert check_name(typed, {"my_env": ("quota_hit",)})["suggestion"] == "my_env:quota_hit"
    assert check_name(typed, {})["suggestion"] is None  # nothing declared there: no namespaced guess
    validate_failure_kind(typed)
    (warned,) = warnings_of(caplog)
    assert warned.startswith(f"unregistered failure_kind {typed!r}; a malformed namespaced kind: the ")
    assert "; did you mean 'my_env:quota_hit'? Otherwise register it" in warned


@pytest.mark.parametrize(("value", "warning"), [
    *[(name, None) for name in ("cancelled", "swe_env:patch_apply_failed", "free_env:any", "free_env:knwn")],
    ("swe_env:patch_aply_failed", "undeclared failure kind 'swe_env:patch_aply_failed' in declared namespace"
                                  " 'swe_env'; did you mean 'swe_env:patch_apply_failed'?"),
    # A declared server's value means one of its own kinds or nothing.
    ("swe_env:judge_faild", "undeclared failure kind 'swe_env:judge_faild' in declared namespace 'swe_env'"),
    # No server declared there: the vocabulary's guess, and its kinds are not namespaced.
    ("Other_Env:judge_faild", "unregistered failure_kind 'Other_Env:judge_faild'; a malformed namespaced"
                              " kind: the server part 'Other_Env' does not match [a-z][a-z0-9_]*."),
])  # fmt: skip
def test_the_run_times_declarations_decide_the_warning_and_its_suggestion(
    value: str, warning: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    declare_namespace("swe_env", ["patch_apply_failed"])
    assert validate_failure_kind(value) is value
    warned = [message.partition(" Otherwise ")[0] for message in warnings_of(caplog)]
    assert warned == ([] if warning is None else [warning])


@pytest.mark.parametrize(("value", "category", "suggestion"), [
    ("free_env:anything", "undeclared", None), ("free_env:knwn", "undeclared", "free_env:known"),
    ("free_env:known", "namespaced", None), ("swe_env:patch_aply_failed", "namespaced", None),
])  # fmt: skip
def test_a_configurations_declarations_decide_the_checks_verdict(
    value: str, category: str, suggestion: str | None
) -> None:
    declare_namespace("swe_env", ["patch_apply_failed"])  # the run time's declarations play no part
    verdict = check_name(value, {"free_env": ("known",)})
    assert (verdict["category"], verdict["suggestion"]) == (category, suggestion)


def test_a_configurations_large_tuple_of_kinds_is_judged_like_a_set() -> None:
    kinds = declared_like_a_real_environment(5000, seed=40)
    given_declarations = {"swe_env": kinds}
    categories = {check_name(f"swe_env:{kind}", given_declarations)["category"] for kind in kinds}
    assert categories == {"namespaced"}
    assert check_name("swe_env:never_declared", given_declarations)["category"] == "undeclared"
    # Another tuple, even of other kinds, is read for itself, never answered from the first one's set.
    others = tuple(f"{kind}_v2" for kind in kinds)
    assert check_name(f"swe_env:{kinds[0]}", {"swe_env": others})["category"] == "undeclared"
    assert check_name(f"swe_env:{others[0]}", {"swe_env": others})["category"] == "namespaced"
