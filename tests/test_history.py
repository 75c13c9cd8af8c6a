"""The older registry's labels as data, and code written against that registry running against us."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import warnings
from typing import Literal

import pytest
from helpers import warnings_of
from hypothesis import given
from hypothesis import strategies as st
from test_validation import hostile_str, outcome, raise_

import failure_kinds
from failure_kinds import OTHER_LABEL, is_namespaced, metric_label, validate_failure_kind
from failure_kinds.history import OLDER_LABELS, OlderLabel, older_label

# Written out on purpose, from the older registry as it was: the data must reproduce it, not define it.
STIRRUP, ANYSWE = "responses_api_agents.stirrup_agent", "responses_api_agents.anyswe_agent"
ACTIVE = {
    "judge_failed": "nemo_gym.judge",
    **dict.fromkeys(["kill_shaped", "timeout_exceeded", "skipped", "transient", "legitimate"], STIRRUP),
    "remote_agent_error": "responses_api_agents.remote_agent",
    **dict.fromkeys(["eval_timeout", "sandbox"], ANYSWE),
    "oom_killed": "responses_api_agents.swe_agents",
}
RESERVED = {
    **{"session_lost": "#2611", "agent_request_failed": "#2363", "verify_request_failed": "#2363"},
    **dict.fromkeys(["unreachable", "resource", "peer_drop", "timeout", "fatal"], "#2361"),
    **dict.fromkeys(["cohort_timeout", "no_comparisons", "aggregation_failed"], "#2385"),
}
# The registry's labels the current vocabulary kept as they were, and the five evident renames.
KEPT = {"judge_failed", "kill_shaped", "session_lost", "agent_request_failed"}
RENAMED = {
    "peer_drop": "transport_peer_drop",
    "unreachable": "transport_unreachable",
    "timeout": "transport_timeout",
    "resource": "transport_local_resource",
    "oom_killed": "provider_oom_killed",
}
OLDER = (ACTIVE.keys() | RESERVED.keys()) - KEPT


def test_the_older_labels_are_the_registry_labels_that_are_not_current_kinds() -> None:
    assert KEPT <= failure_kinds.FAILURE_KINDS
    assert not OLDER & failure_kinds.FAILURE_KINDS
    assert {label: (older.status, older.source) for label, older in OLDER_LABELS.items()} == {
        label: ("active", ACTIVE[label]) if label in ACTIVE else ("reserved", RESERVED[label])
        for label in OLDER
    }
    assert {label: older.replacement for label, older in OLDER_LABELS.items() if older.replacement} == RENAMED
    for label, older in OLDER_LABELS.items():
        assert older.label == label
        assert older.note == older.note.strip() != ""
        assert "\n" not in older.note
        assert len(older.note) <= 100
    # A task's own time budget or another deadline: which kind depends on the producer.
    assert "not mapped" in OLDER_LABELS["timeout_exceeded"].note
    assert all("outcome" in OLDER_LABELS[outcome].note for outcome in ("skipped", "legitimate"))
    with pytest.raises(AttributeError):
        OLDER_LABELS["peer_drop"].replacement = "transport_timeout"  # type: ignore[misc]
    with pytest.raises(TypeError):
        OLDER_LABELS["peer_drop"] = OLDER_LABELS["timeout"]  # type: ignore[index]


def test_the_registry_names_reproduce_the_registry() -> None:
    registry = failure_kinds.FAILURE_KIND_REGISTRY  # type: ignore[attr-defined]
    assert {label: (entry.status, entry.source) for label, entry in registry.items()} == {
        **{label: ("active", source) for label, source in ACTIVE.items()},
        **{label: ("reserved", source) for label, source in RESERVED.items()},
    }
    assert all(isinstance(entry, failure_kinds.FailureKindRegistration) for entry in registry.values())  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        registry["peer_drop"] = None
    # What the older registry's own tests check: each label in exactly one tier, each tier's status.
    tiers = failure_kinds.ACTIVE_FAILURE_KINDS, failure_kinds.RESERVED_FAILURE_KINDS  # type: ignore[attr-defined]
    assert tiers == (frozenset(ACTIVE), frozenset(RESERVED))
    assert {type(tier) for tier in tiers} == {frozenset}


Hostile = hostile_str({method: raise_(method) for method in ("__hash__", "__eq__", "__ne__")})


@given(st.text(max_size=300) | st.binary(max_size=50) | st.integers() | st.none() | st.lists(st.text()))
def test_older_label_looks_up_a_label_and_nothing_else(value: object) -> None:
    found = older_label(value)
    assert found is None or (isinstance(value, str) and found.label == value)
    assert older_label("peer_drop") == OlderLabel(
        "peer_drop", "transport_peer_drop", OLDER_LABELS["peer_drop"].note, "reserved", "#2361"
    )
    for other in ("judge_failed", "peer_dorp", "PEER_DROP", "peer_drop\n", None, b"peer_drop", ["peer_drop"]):
        assert older_label(other) is None
    assert older_label(Hostile("oom_killed")) == OLDER_LABELS["oom_killed"]  # read by its text


@pytest.mark.parametrize("label", sorted(OLDER))
def test_an_older_label_is_recognised_everywhere_for_what_it_is(
    label: str, caplog: pytest.LogCaptureFixture
) -> None:
    replacement = RENAMED.get(label)
    note = OLDER_LABELS[label].note
    # Its constant resolves, with a warning at the line that named it, here, not at the package.
    with pytest.warns(DeprecationWarning, match="is the older label") as caught:
        value = getattr(failure_kinds, label.upper())
    assert (value, type(value)) == (label, str)
    (warning,) = caught
    advice = f"use failure_kinds.{replacement.upper()} ({replacement!r})" if replacement else note
    assert f"failure_kinds.{label.upper()} is the older label {label!r}" in str(warning.message)
    assert advice in str(warning.message)
    assert replacement or "no single replacement" in str(warning.message)
    assert warning.filename == __file__
    # At run time: reported once as an older label (never "unregistered" nor a guess), counted as its
    # replacement.
    assert not failure_kinds.is_registered(label)
    assert not failure_kinds.is_namespaced(label)
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            assert validate_failure_kind(label) == label
    said = f" without a single replacement: {note}" if replacement is None else f": use {replacement!r}"
    (warned,) = warnings_of(caplog)
    assert warned.startswith(f"unregistered failure_kind {label!r}; an older label{said}. Otherwise")
    assert warned.endswith(". Reported once per name.")
    assert metric_label(label) == (replacement or OTHER_LABEL)
    assert type(metric_label(label)) is str


# The statements older code names the constants with, each naming the given names once ({names} is filled
# in), with the line every warning must point at: the statement's, never importlib's or the package's.
USES = [
    ("from failure_kinds import {names}", 1),
    ("from failure_kinds import (\n    {names},\n)", 1),
    ("def use():\n    from failure_kinds import {names}\nuse()", 2),
    ("import failure_kinds\nvalues = [failure_kinds.{names_by_attribute}]", 2),
    ("import failure_kinds\nfound = [hasattr(failure_kinds, name) for name in {names_as_strings}]", 2),
]
NAMES = st.sampled_from([*sorted(label.upper() for label in OLDER), "RegistryStatus"])
OLDER_TEXTS = st.sampled_from(sorted(OLDER))


@given(
    names=st.lists(NAMES, min_size=1, max_size=5, unique=True),
    use=st.sampled_from(USES),
    aliased=st.booleans(),
)
def test_each_use_of_an_older_constant_warns_exactly_once(
    names: list[str], use: tuple[str, int], aliased: bool
) -> None:
    # From-imports look a name up twice (importlib's hasattr probe first): only the statement's use warns.
    template, line = use
    imported = ", ".join(f"{name} as alias_{index}" if aliased else name for index, name in enumerate(names))
    source = template.format(
        names=imported, names_by_attribute=", failure_kinds.".join(names), names_as_strings=repr(names)
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(source, "<older code>", "exec"), {"__name__": "older_code"})
    assert [str(warning.message).split(" ")[0] for warning in caught] == [
        f"failure_kinds.{name}" for name in names
    ]
    assert {(warning.category, warning.filename, warning.lineno) for warning in caught} == {
        (DeprecationWarning, "<older code>", line)
    }


def test_the_registry_status_type_and_warnings_as_errors() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from failure_kinds import RegistryStatus  # type: ignore[attr-defined]
    assert RegistryStatus == Literal["active", "reserved"]
    (warning,) = caught
    assert "status type, Literal['active', 'reserved']" in str(warning.message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DeprecationWarning, match=r"failure_kinds\.PEER_DROP is the older label"):
            from failure_kinds import PEER_DROP  # type: ignore[attr-defined] # noqa: F401
        # The kept labels' constants are current kinds: no warning.
        assert [getattr(failure_kinds, label.upper()) for label in sorted(KEPT)] == sorted(KEPT)


def test_older_names_stay_out_of_all_and_the_stub_and_others_raise() -> None:
    from test_stub import STUB

    stub = STUB.read_text(encoding="utf-8")
    older_names = [label.upper() for label in OLDER]
    older_names += ["FAILURE_KIND_REGISTRY", "ACTIVE_FAILURE_KINDS", "RESERVED_FAILURE_KINDS"]
    for name in [*older_names, "FailureKindRegistration", "RegistryStatus"]:
        assert name not in failure_kinds.__all__
        assert not re.search(rf"\b{name}\b", stub), name
    misspelt = ["TIMEOUT_EXCEDED", "TRANSPORT_TIMOUT", "peer_drop", "Peer_Drop", "OLDER_LABELS"]
    for name in [*misspelt, "_private", "__wrapped__"]:
        with pytest.raises(AttributeError, match=re.escape(repr(name))):
            getattr(failure_kinds, name)


PROBE = """
import json, sys
import failure_kinds
for name in ("__wrapped__", "_private", "__path__", "__test__"):
    getattr(failure_kinds, name, None)
print(json.dumps("failure_kinds.history" in sys.modules))
"""


def test_probing_private_names_does_not_load_history() -> None:
    result = subprocess.run([sys.executable, "-I", "-c", PROBE], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "false"


@given(st.text(max_size=80))
def test_any_attribute_name_resolves_or_raises_attribute_error(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            value = getattr(failure_kinds, name)
        except AttributeError:
            return
    if name.upper() == name and name.lower() in OLDER_LABELS:
        assert value == name.lower()


@given(
    OLDER_TEXTS | st.text(max_size=40).map("peer_drop".__add__) | OLDER_TEXTS.map(type("Label", (str,), {}))
)
def test_older_shapes_are_reported_and_labelled_by_their_text_and_never_raise(value: str) -> None:
    warned, _, label = outcome(value)
    legacy = str.__str__(value) in OLDER_LABELS
    assert ["; an older label" in message for message in warned] == [legacy] * len(warned)
    assert legacy <= (len(warned) == 1)
    assert label == (RENAMED.get(str.__str__(value)) or OTHER_LABEL) or is_namespaced(value)


def test_a_stream_of_mixed_labels_warns_once_per_distinct_older_label(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # What an old log replayed through a producer looks like: mostly current kinds and namespaced
    # values, every older label many times, and a few hundred distinct misspellings.
    current = sorted(failure_kinds.FAILURE_KINDS)
    stream = [current[number % len(current)] for number in range(10_000)]
    stream += [f"env_{number % 50}:kind_{number % 7}" for number in range(5_000)]
    stream += sorted(OLDER) * 200
    stream += [f"judge_faild_{number}" for number in range(300)]
    with caplog.at_level(logging.WARNING):
        for value in stream:
            validate_failure_kind(value)
    messages = warnings_of(caplog)
    assert sum("; an older label" in message for message in messages) == len(OLDER)
    assert sum(message.startswith("unregistered failure_kind") for message in messages) == len(OLDER) + 300
