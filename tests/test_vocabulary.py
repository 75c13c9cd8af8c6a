"""The vocabulary itself: every name and value of the API document, and how they are derived."""

from __future__ import annotations

import importlib
import json
import logging
import pickle
import pkgutil
import re
import subprocess
import sys
import typing

import pytest
from helpers import deprecated, warnings_of

import failure_kinds
from failure_kinds import FailureKind, FailureKindsError

# Written out from the API document on purpose: the enum must reproduce it, not define it.
SEED = {
    "AGENT_COMMAND_NOT_ALLOWED": "agent_command_not_allowed",
    "AGENT_REQUEST_FAILED": "agent_request_failed",
    "AGENT_RUN_ERROR": "agent_run_error",
    "AGENT_TIMEOUT": "agent_timeout",
    "CANCELLED": "cancelled",
    "COHORT_INCOMPLETE": "cohort_incomplete",
    "JUDGE_FAILED": "judge_failed",
    "JUDGE_UNPARSEABLE": "judge_unparseable",
    "KILL_SHAPED": "kill_shaped",
    "PERSISTENCE_FAILED": "persistence_failed",
    "PROVIDER_OOM_KILLED": "provider_oom_killed",
    "PROVIDER_QUOTA_EXHAUSTED": "provider_quota_exhausted",
    "PROVIDER_UNAVAILABLE": "provider_unavailable",
    "SESSION_EXPIRED": "session_expired",
    "SESSION_LOST": "session_lost",
    "SESSION_RELEASE_FAILED": "session_release_failed",
    "SHUTDOWN": "shutdown",
    "TRANSPORT_LOCAL_RESOURCE": "transport_local_resource",
    "TRANSPORT_PEER_DROP": "transport_peer_drop",
    "TRANSPORT_TIMEOUT": "transport_timeout",
    "TRANSPORT_UNREACHABLE": "transport_unreachable",
    "VERIFIER_ERROR": "verifier_error",
}
# The names later versions of the vocabulary added, each first released in 0.3.0.
LATER = {
    "AGENT_NO_GENERATION": "agent_no_generation",
    "ENVIRONMENT_SERVER_FAILED": "environment_server_failed",
    "PROTOCOL_VIOLATION": "protocol_violation",
}
SPEC = SEED | LATER


def test_enum_members_are_exactly_the_spec() -> None:
    assert {kind.name: kind.value for kind in FailureKind} == SPEC


@pytest.mark.parametrize(("name", "value"), sorted(SPEC.items()))
def test_module_constant_is_plain_str_with_spec_value(name: str, value: str) -> None:
    constant = getattr(failure_kinds, name)
    assert constant == value
    assert type(constant) is str
    assert FailureKind[name] == constant
    assert str(FailureKind[name]) == f"{FailureKind[name]}" == value  # a member prints as its value


def test_failure_kinds_is_frozenset_of_plain_values() -> None:
    assert isinstance(failure_kinds.FAILURE_KINDS, frozenset)
    assert set(SPEC.values()) == failure_kinds.FAILURE_KINDS
    assert all(type(value) is str for value in failure_kinds.FAILURE_KINDS)


@pytest.mark.parametrize("kind", list(FailureKind))
def test_every_member_has_one_line_description(kind: FailureKind) -> None:
    description = kind.description
    assert isinstance(description, str)
    assert description.strip() == description
    assert "\n" not in description
    assert description.endswith(".")
    assert 20 <= len(description) <= 200


def test_descriptions_are_distinct() -> None:
    descriptions = [kind.description for kind in FailureKind]
    assert len(set(descriptions)) == len(descriptions)


def test_failure_kind_name_is_literal_of_every_value() -> None:
    # Covers what stubtest cannot check (see stubs/stubtest-allowlist.txt).
    alias = failure_kinds.FailureKindName
    assert typing.get_origin(alias) is typing.Literal
    assert typing.get_args(alias) == tuple(kind.value for kind in FailureKind)


def test_namespaced_failure_kind_is_new_type_of_str() -> None:
    # Covers what stubtest cannot check (see stubs/stubtest-allowlist.txt).
    new_type = failure_kinds.NamespacedFailureKind
    assert isinstance(new_type, typing.NewType)
    assert new_type.__name__ == "NamespacedFailureKind"
    assert new_type.__supertype__ is str


def test_any_failure_kind_is_union_of_both() -> None:
    assert set(typing.get_args(failure_kinds.AnyFailureKind)) == {
        failure_kinds.FailureKindName,
        failure_kinds.NamespacedFailureKind,
    }


# Raised and caught inside the package, never reaching a caller: each stays its own, plain Exception.
INTERNAL_EXCEPTIONS = {
    "failure_kinds.audit.engine._NoThread",  # caught where the pool starts: the audit runs in this process
    "failure_kinds.audit.errors.WideText",  # stored on the input it was found in, shown as its read error
    "failure_kinds.audit.parquet._AmbiguousColumn",  # caught where the column is looked up, shown as an error
    "failure_kinds.lint._Unreadable",  # caught by every caller of lint.read_source, shown as one line
}


def test_every_exception_the_package_raises_on_purpose_derives_from_its_base() -> None:
    found: dict[str, type] = {}
    for module in pkgutil.walk_packages(failure_kinds.__path__, "failure_kinds."):
        missing = None
        try:
            namespace = vars(importlib.import_module(module.name))
        except ImportError as error:  # an optional extra that is missing: its module defines none
            missing, namespace = error.name or "", {}
        assert missing is None or not missing.startswith("failure_kinds"), module.name
        errors = [
            value for value in namespace.values() if isinstance(value, type) and issubclass(value, Exception)
        ]
        found |= {f"{error.__module__}.{error.__qualname__}": error for error in errors}
    ours = {name: error for name, error in found.items() if name.startswith("failure_kinds.")}
    assert len(ours) > len(INTERNAL_EXCEPTIONS) + 5  # the walk found the package's errors
    assert {
        name for name, error in ours.items() if not issubclass(error, FailureKindsError)
    } == INTERNAL_EXCEPTIONS
    from failure_kinds.config import ConfigError

    assert issubclass(ConfigError, ValueError)  # as it was before the base was added


def test_unknown_attribute_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="TRANSPORT_TIMOUT"):
        _ = failure_kinds.TRANSPORT_TIMOUT  # type: ignore[attr-defined]


def test_all_names_exist() -> None:
    for name in failure_kinds.__all__:
        assert hasattr(failure_kinds, name), name
    assert set(SPEC) <= set(failure_kinds.__all__)
    assert "declare_namespace" in failure_kinds.__all__


def test_constants_serialize_as_plain_strings() -> None:
    assert json.dumps({"failure_kind": failure_kinds.SESSION_LOST}) == '{"failure_kind": "session_lost"}'
    assert json.dumps(FailureKind.SESSION_LOST) == '"session_lost"'
    data = pickle.dumps(failure_kinds.SESSION_LOST)
    assert b"failure_kinds" not in data
    # Read back by an interpreter that cannot import this package at all.
    code = "import pickle, sys; print(pickle.loads(sys.stdin.buffer.read()))"
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], input=data, capture_output=True, check=True
    )
    assert result.stdout.decode().strip() == "session_lost"


def test_domains_group_kinds_in_enum_order() -> None:
    domains: dict[str, list[str]] = {}
    for kind in FailureKind:
        domains.setdefault(kind.domain, []).append(kind.value)
    assert list(domains) == [
        "transport",
        "agent",
        "environment",
        "judge",
        "verifier",
        "provider",
        "session",
        "lifecycle",
        "persistence",
        "cohort",
    ]
    assert domains["lifecycle"] == ["cancelled", "kill_shaped", "shutdown"]
    # protocol_violation is the one name without its domain's prefix, as upstream groups it.
    assert domains["environment"] == ["environment_server_failed", "protocol_violation"]
    prefixed = {domain: values for domain, values in domains.items() if domain != "lifecycle"}
    prefixed["environment"] = ["environment_server_failed"]
    assert all(value.startswith(f"{domain}_") for domain, values in prefixed.items() for value in values)


# What the upstream suites for this module check, in our words


def test_every_name_is_one_lower_case_word_or_words_joined_by_underscores() -> None:
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", name) for name in failure_kinds.FAILURE_KINDS)


def test_no_two_names_differ_only_by_case_or_separators() -> None:
    squeezed = [name.lower().replace("_", "") for name in failure_kinds.FAILURE_KINDS]
    assert len(set(squeezed)) == len(squeezed)


def test_the_vocabulary_stays_a_safe_metric_label() -> None:
    # Few names, each short and without spaces: free text belongs in failure_reason.
    assert len(failure_kinds.FAILURE_KINDS) < 64
    assert all(len(name) < 40 and " " not in name for name in failure_kinds.FAILURE_KINDS)


def test_a_name_with_a_trailing_newline_is_neither_registered_nor_namespaced() -> None:
    assert not failure_kinds.is_registered("judge_failed\n")
    assert not failure_kinds.is_namespaced("my_server:odd_case\n")
    assert failure_kinds.is_namespaced("lexmount_browser:quota_exhausted")
    assert not failure_kinds.is_namespaced("judge_failed")


# The lifecycle: first versions and deprecation


def test_each_kind_records_the_release_it_first_appeared_in() -> None:
    assert {kind.name: kind.since for kind in FailureKind} == {
        **dict.fromkeys(SEED, "0.1.0"),
        **dict.fromkeys(LATER, "0.3.0"),
    }


def test_no_kind_is_deprecated_today() -> None:
    assert [kind for kind in FailureKind if kind.replaced_by is not None] == []


def test_a_deprecated_kind_stays_registered_and_names_its_replacement(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with deprecated(FailureKind.SESSION_LOST, FailureKind.SESSION_EXPIRED) as kind:
        assert kind.replaced_by is FailureKind.SESSION_EXPIRED
        assert failure_kinds.is_registered("session_lost")
        assert "session_lost" in failure_kinds.FAILURE_KINDS
        assert failure_kinds.metric_label("session_lost") == "session_lost"  # its own series goes on
        with caplog.at_level(logging.WARNING):
            for _ in range(10):
                assert failure_kinds.validate_failure_kind("session_lost") == "session_lost"
                assert (
                    failure_kinds.validate_failure_kind(FailureKind.SESSION_LOST) is FailureKind.SESSION_LOST
                )
            failure_kinds.validate_failure_kind("session_expired")
        assert warnings_of(caplog) == ["deprecated failure kind 'session_lost'; use 'session_expired'"]
    caplog.clear()
    # Registered as before afterwards: silent again, and not deprecated.
    assert FailureKind.SESSION_LOST.replaced_by is None
    with caplog.at_level(logging.WARNING):
        failure_kinds.validate_failure_kind("session_lost")
    assert warnings_of(caplog) == []


def test_a_deprecated_kind_fails_the_pytest_strict_mode_naming_its_replacement() -> None:
    from failure_kinds.pytest_plugin import _describe  # pyright: ignore[reportPrivateUsage]

    with deprecated(FailureKind.AGENT_RUN_ERROR, FailureKind.AGENT_REQUEST_FAILED):
        message = _describe(["agent_run_error", "agent_run_error"])
    assert message == (
        "'agent_run_error' (deprecated; use 'agent_request_failed') x2 reached validate_failure_kind"
    )


# The stages


STAGES = ("admission", "seed", "agent", "verification", "cleanup")


def test_failure_stage_is_a_literal_of_the_five_stages_in_order() -> None:
    # Covers what stubtest cannot check (see stubs/stubtest-allowlist.txt).
    alias = failure_kinds.FailureStage
    assert typing.get_origin(alias) is typing.Literal
    assert typing.get_args(alias) == STAGES
    assert alias is failure_kinds.FailureStage  # built once


def test_the_stage_enum_sits_beside_the_alias() -> None:
    stage = failure_kinds.Stage
    assert [member.value for member in stage] == list(STAGES)
    assert [member.name for member in stage] == [value.upper() for value in STAGES]


def test_every_stage_has_a_distinct_one_line_description() -> None:
    descriptions = [member.description for member in failure_kinds.Stage]
    assert len(set(descriptions)) == len(descriptions)
    for description in descriptions:
        assert description.strip() == description
        assert "\n" not in description
        assert description.endswith(".")
        assert 20 <= len(description) <= 200


def test_the_stage_names_are_exported() -> None:
    assert {"Stage", "FailureStage"} <= set(failure_kinds.__all__)
    from failure_kinds import FailureStage, Stage

    assert typing.get_args(FailureStage) == tuple(Stage)
