"""The vocabulary itself: every name and value of the API document, and how they are derived."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import typing

import pytest

import failure_kinds
from failure_kinds import FailureKind

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


def test_failure_kinds_is_frozenset_of_plain_values() -> None:
    assert isinstance(failure_kinds.FAILURE_KINDS, frozenset)
    assert set(SPEC.values()) == failure_kinds.FAILURE_KINDS
    assert all(type(value) is str for value in failure_kinds.FAILURE_KINDS)


def test_private_patterns_keep_spec_meaning() -> None:
    assert failure_kinds._NAME_PATTERN.pattern == "[a-z][a-z0-9_]*"
    assert failure_kinds._NAMESPACED_PATTERN.pattern == "[a-z][a-z0-9_]*:[a-z][a-z0-9_]*"
    assert failure_kinds.logger.name == "failure_kinds"
    assert isinstance(failure_kinds._WARNED_UNKNOWN, set)


def test_member_is_str_and_equal_to_value() -> None:
    member = FailureKind.TRANSPORT_TIMEOUT
    assert isinstance(member, str)
    assert member == "transport_timeout"
    assert str(member) == "transport_timeout"
    assert f"{member}" == "transport_timeout"
    assert FailureKind("transport_timeout") is member


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
