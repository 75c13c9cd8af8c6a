"""The older registry's labels as data, and code written against that registry running against us."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import warnings
from types import MappingProxyType
from typing import Literal

import pytest
from helpers import warnings_of
from hypothesis import given
from hypothesis import strategies as st

import failure_kinds
from failure_kinds import FailureKind, _runtime
from failure_kinds.history import OLDER_LABELS, OlderLabel, older_label

# Written out on purpose, from the older registry as it was: the data must reproduce it, not define it.
ACTIVE = {
    "judge_failed": "nemo_gym.judge",
    "kill_shaped": "responses_api_agents.stirrup_agent",
    "timeout_exceeded": "responses_api_agents.stirrup_agent",
    "skipped": "responses_api_agents.stirrup_agent",
    "transient": "responses_api_agents.stirrup_agent",
    "legitimate": "responses_api_agents.stirrup_agent",
    "remote_agent_error": "responses_api_agents.remote_agent",
    "eval_timeout": "responses_api_agents.anyswe_agent",
    "sandbox": "responses_api_agents.anyswe_agent",
    "oom_killed": "responses_api_agents.swe_agents",
}
RESERVED = {
    "session_lost": "#2611",
    "agent_request_failed": "#2363",
    "verify_request_failed": "#2363",
    "unreachable": "#2361",
    "resource": "#2361",
    "peer_drop": "#2361",
    "timeout": "#2361",
    "fatal": "#2361",
    "cohort_timeout": "#2385",
    "no_comparisons": "#2385",
    "aggregation_failed": "#2385",
}
# The registry's labels the current vocabulary kept as they were.
KEPT = {"judge_failed", "kill_shaped", "session_lost", "agent_request_failed"}
RENAMED = {
    "peer_drop": "transport_peer_drop",
    "unreachable": "transport_unreachable",
    "timeout": "transport_timeout",
    "resource": "transport_local_resource",
    "oom_killed": "provider_oom_killed",
}
OLDER = (ACTIVE.keys() | RESERVED.keys()) - KEPT


# The labels as data


def test_older_labels_are_the_registry_labels_that_are_not_current_kinds() -> None:
    assert set(OLDER_LABELS) == OLDER
    assert len(OLDER_LABELS) == 17
    assert KEPT <= failure_kinds.FAILURE_KINDS
    assert not OLDER & failure_kinds.FAILURE_KINDS
    assert isinstance(OLDER_LABELS, MappingProxyType)


def test_each_label_keeps_the_registry_status_and_source() -> None:
    for label, older in OLDER_LABELS.items():
        assert older.label == label
        assert (older.status, older.source) == (
            ("active", ACTIVE[label]) if label in ACTIVE else ("reserved", RESERVED[label])
        )


def test_only_the_five_evident_renames_have_a_replacement() -> None:
    replaced = {label: older.replacement for label, older in OLDER_LABELS.items() if older.replacement}
    assert replaced == RENAMED
    assert all(failure_kinds.is_registered(replacement) for replacement in replaced.values())
    # A task's own time budget or another deadline: which kind depends on the producer.
    assert OLDER_LABELS["timeout_exceeded"].replacement is None
    assert "not mapped" in OLDER_LABELS["timeout_exceeded"].note
    for outcome in ("skipped", "legitimate"):
        assert OLDER_LABELS[outcome].replacement is None
        assert "outcome" in OLDER_LABELS[outcome].note


def test_every_label_has_a_one_line_note() -> None:
    for older in OLDER_LABELS.values():
        assert older.note.strip() == older.note
        assert older.note
        assert "\n" not in older.note
        assert len(older.note) <= 100


def test_an_older_label_is_frozen() -> None:
    with pytest.raises(AttributeError):
        OLDER_LABELS["peer_drop"].replacement = "transport_timeout"  # type: ignore[misc]


def test_older_label_looks_up_a_label_and_nothing_else() -> None:
    assert older_label("peer_drop") == OlderLabel(
        "peer_drop", "transport_peer_drop", OLDER_LABELS["peer_drop"].note, "reserved", "#2361"
    )
    assert older_label("judge_failed") is None  # a current kind
    assert older_label("peer_dorp") is None
    assert older_label("PEER_DROP") is None
    assert older_label("peer_drop\n") is None
    assert older_label(None) is None
    assert older_label(b"peer_drop") is None
    assert older_label(["peer_drop"]) is None


def test_older_label_reads_a_str_subclass_by_its_text() -> None:
    class Hostile(str):
        def __hash__(self) -> int:
            raise RuntimeError("hash")

        def __eq__(self, other: object) -> bool:
            raise RuntimeError("eq")

        __ne__ = __eq__  # type: ignore[assignment]

    found = older_label(Hostile("oom_killed"))
    assert found is not None
    assert found.replacement == "provider_oom_killed"


@given(
    st.one_of(st.text(max_size=300), st.binary(max_size=50), st.integers(), st.none(), st.lists(st.text()))
)
def test_older_label_never_raises(value: object) -> None:
    found = older_label(value)
    assert found is None or (isinstance(value, str) and found.label == value)


# The older registry's names, for code written against it


def test_the_registry_covers_every_label_it_held() -> None:
    registry = failure_kinds.FAILURE_KIND_REGISTRY  # type: ignore[attr-defined]
    assert set(registry) == ACTIVE.keys() | RESERVED.keys()
    assert len(registry) == 21
    for label, entry in registry.items():
        assert isinstance(entry, failure_kinds.FailureKindRegistration)  # type: ignore[attr-defined]
        assert (entry.status, entry.source) == (
            ("active", ACTIVE[label]) if label in ACTIVE else ("reserved", RESERVED[label])
        )
    with pytest.raises(TypeError):
        registry["peer_drop"] = None


def test_the_registry_tiers_split_it_as_before() -> None:
    # What the older registry's own tests check: each label in exactly one tier, each tier's status.
    active = failure_kinds.ACTIVE_FAILURE_KINDS  # type: ignore[attr-defined]
    reserved = failure_kinds.RESERVED_FAILURE_KINDS  # type: ignore[attr-defined]
    registry = failure_kinds.FAILURE_KIND_REGISTRY  # type: ignore[attr-defined]
    assert isinstance(active, frozenset)
    assert isinstance(reserved, frozenset)
    assert active.isdisjoint(reserved)
    assert active | reserved == registry.keys()
    assert active == ACTIVE.keys()
    assert all(registry[label].status == "active" for label in active)
    assert all(registry[label].status == "reserved" for label in reserved)
    # A reserved label names the change that planned it; an active one the module that produced it.
    assert all(registry[label].source.startswith("#") for label in reserved)
    assert all(re.fullmatch(r"[a-z_]+(\.[a-z_]+)+", registry[label].source) for label in active)


@pytest.mark.parametrize("label", sorted(OLDER))
def test_an_older_constant_resolves_with_a_deprecation_warning(label: str) -> None:
    with pytest.warns(DeprecationWarning, match="is the older label") as caught:
        value = getattr(failure_kinds, label.upper())
    assert value == label
    assert type(value) is str
    (warning,) = caught
    message = str(warning.message)
    assert f"failure_kinds.{label.upper()} is the older label {label!r}" in message
    replacement = RENAMED.get(label)
    if replacement is None:
        assert "no single replacement" in message
        assert OLDER_LABELS[label].note in message
    else:
        assert f"use failure_kinds.{replacement.upper()} ({replacement!r})" in message
    # The warning points at the line that named the constant, here, not at the package.
    assert warning.filename == __file__


def test_an_older_constant_can_be_imported_by_name() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1  # pyright: ignore[reportPrivateUsage]
        from failure_kinds import PEER_DROP  # type: ignore[attr-defined]
    assert PEER_DROP == "peer_drop"
    # Once, at the statement: importlib's own hasattr probe of the name before the import is not a use.
    assert [(warning.category, warning.filename, warning.lineno) for warning in caught] == [
        (DeprecationWarning, __file__, line)
    ]
    assert "TRANSPORT_PEER_DROP" in str(caught[0].message)


def test_the_registry_status_type_imports_with_a_deprecation_warning() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1  # pyright: ignore[reportPrivateUsage]
        from failure_kinds import RegistryStatus  # type: ignore[attr-defined]
    assert RegistryStatus == Literal["active", "reserved"]
    assert [(warning.category, warning.filename, warning.lineno) for warning in caught] == [
        (DeprecationWarning, __file__, line)
    ]
    assert "status type, Literal['active', 'reserved']" in str(caught[0].message)


# The statements older code names the constants with, each naming the given names once ({names} is filled
# in), with the line every warning must point at: the statement's, never importlib's or the package's.
USES = [
    ("from failure_kinds import {names}", 1),
    ("from failure_kinds import (\n    {names},\n)", 1),
    ("def use():\n    from failure_kinds import {names}\nuse()", 2),
    ("import failure_kinds\nvalues = [failure_kinds.{names_by_attribute}]", 2),
    ("import failure_kinds\nfound = [hasattr(failure_kinds, name) for name in {names_as_strings}]", 2),
]


@given(
    names=st.lists(
        st.sampled_from([*sorted(label.upper() for label in OLDER), "RegistryStatus"]),
        min_size=1,
        max_size=5,
        unique=True,
    ),
    use=st.sampled_from(USES),
    aliased=st.booleans(),
)
def test_each_use_of_an_older_constant_warns_exactly_once(
    names: list[str], use: tuple[str, int], aliased: bool
) -> None:
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


def test_an_older_constant_imported_under_warnings_as_errors_raises_at_the_import() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DeprecationWarning, match=r"failure_kinds\.PEER_DROP is the older label"):
            from failure_kinds import PEER_DROP  # type: ignore[attr-defined] # noqa: F401


def test_the_kept_labels_constants_are_current_and_do_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [getattr(failure_kinds, label.upper()) for label in sorted(KEPT)] == sorted(KEPT)


def test_older_names_stay_out_of_all_and_the_stub() -> None:
    from test_stub import STUB

    stub = STUB.read_text(encoding="utf-8")
    older_names = [label.upper() for label in OLDER]
    older_names += ["FAILURE_KIND_REGISTRY", "ACTIVE_FAILURE_KINDS", "RESERVED_FAILURE_KINDS"]
    older_names += ["FailureKindRegistration", "RegistryStatus"]
    for name in older_names:
        assert name not in failure_kinds.__all__
        assert not re.search(rf"\b{name}\b", stub), name


def test_other_names_still_raise_attribute_error() -> None:
    for name in ("TIMEOUT_EXCEDED", "peer_drop", "Peer_Drop", "OLDER_LABELS", "_private", "__wrapped__"):
        with pytest.raises(AttributeError, match=re.escape(repr(name))):
            getattr(failure_kinds, name)
    assert not hasattr(failure_kinds, "NO_SUCH_NAME")


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


# Older labels met at run time


@pytest.mark.parametrize("label", sorted(OLDER))
def test_an_older_label_has_its_own_category(label: str) -> None:
    assert _runtime.category(label) == "legacy"
    assert _runtime.category(label, {"srv": ("x",)}) == "legacy"
    assert not failure_kinds.is_registered(label)
    assert not failure_kinds.is_namespaced(label)


def test_categories_around_the_older_labels_keep_theirs() -> None:
    assert _runtime.category("judge_failed") == "registered"
    assert _runtime.category("transport_peer_drop") == "registered"
    assert _runtime.category("peer_dorp") == "unregistered"
    assert _runtime.category("Peer_Drop") == "unregistered"
    assert _runtime.category("peer_drop:x") == "namespaced"
    assert _runtime.category(b"peer_drop") == "unregistered"


def test_an_older_label_with_a_replacement_warns_once_naming_it(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        for _ in range(100):
            assert failure_kinds.validate_failure_kind("peer_drop") == "peer_drop"
    assert warnings_of(caplog) == ["older failure kind label 'peer_drop'; use 'transport_peer_drop'"]


def test_an_older_label_without_one_warns_with_its_note(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert failure_kinds.validate_failure_kind("timeout_exceeded") == "timeout_exceeded"
        failure_kinds.validate_failure_kind("timeout_exceeded")
    note = OLDER_LABELS["timeout_exceeded"].note
    assert warnings_of(caplog) == [
        f"older failure kind label 'timeout_exceeded' without a single replacement: {note}"
    ]


@pytest.mark.parametrize("label", sorted(OLDER))
def test_no_older_label_is_called_unregistered(label: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        failure_kinds.validate_failure_kind(label)
    (message,) = warnings_of(caplog)
    assert message.startswith(f"older failure kind label {label!r}")
    assert "unregistered" not in message
    assert "did you mean" not in message


def test_a_misspelled_older_label_is_still_a_misspelling(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        failure_kinds.validate_failure_kind("peer_dorp")
    assert warnings_of(caplog) == [
        "unregistered failure_kind 'peer_dorp'; register it or namespace it as '<server>:<kind>'. "
        "Reported once per name."
    ]


def test_an_older_label_is_counted_as_its_replacement() -> None:
    for label, replacement in RENAMED.items():
        assert failure_kinds.metric_label(label) == replacement
        assert type(failure_kinds.metric_label(label)) is str
    for label in OLDER - RENAMED.keys():
        assert failure_kinds.metric_label(label) == failure_kinds.OTHER_LABEL


def test_an_older_label_by_its_enum_name_is_not_a_label() -> None:
    # An enum or constant name is not a value: "PEER_DROP" is a misspelling, not the older label.
    assert failure_kinds.metric_label("PEER_DROP") == failure_kinds.OTHER_LABEL
    assert FailureKind.TRANSPORT_PEER_DROP.value == failure_kinds.metric_label("peer_drop")


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
    st.one_of(
        st.sampled_from(sorted(OLDER)),
        st.text(max_size=40).map(lambda text: "peer_drop" + text),
        st.builds(lambda label: type("Label", (str,), {})(label), st.sampled_from(sorted(OLDER))),
    )
)
def test_categories_and_labels_of_older_shapes_never_raise(value: str) -> None:
    found = _runtime.category(value)
    assert found in {"legacy", "unregistered", "namespaced"}
    assert (found == "legacy") == (str.__str__(value) in OLDER_LABELS)
    label = failure_kinds.metric_label(value)
    assert type(label) is str
    assert label == (RENAMED.get(str.__str__(value)) or failure_kinds.OTHER_LABEL) or found == "namespaced"
    assert failure_kinds.validate_failure_kind(value) is value


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
            failure_kinds.validate_failure_kind(value)
    messages = warnings_of(caplog)
    older = [message for message in messages if message.startswith("older failure kind label")]
    assert len(older) == len(OLDER)
    assert sum(message.startswith("unregistered failure_kind") for message in messages) == 300
    assert len(messages) == len(OLDER) + 300
    labels = {failure_kinds.metric_label(value) for value in sorted(OLDER)}
    assert labels == {*RENAMED.values(), failure_kinds.OTHER_LABEL}
