"""The vocabulary itself: every name and value of the API document, how they are derived, the lifecycle
of a kind (its first release, deprecation) and the stages."""

from __future__ import annotations

import importlib
import json
import logging
import pickle
import pkgutil
import subprocess
import sys
import typing

import pytest
from helpers import deprecated, warnings_of

import failure_kinds
from failure_kinds import FailureKind, FailureKindsError

# Written out from the API document on purpose: the enum must reproduce it, not define it. Every constant
# is its value upper-cased.
SEED_VALUES = (
    *("agent_command_not_allowed", "agent_request_failed", "agent_run_error", "agent_timeout", "cancelled"),
    *("cohort_incomplete", "judge_failed", "judge_unparseable", "kill_shaped", "persistence_failed"),
    *("provider_oom_killed", "provider_quota_exhausted", "provider_unavailable", "session_expired"),
    *("session_lost", "session_release_failed", "shutdown", "transport_local_resource"),
    *("transport_peer_drop", "transport_timeout", "transport_unreachable", "verifier_error"),
)
SEED = {value.upper(): value for value in SEED_VALUES}
# The names later versions of the vocabulary added, each first released in 0.3.0.
LATER = {
    value.upper(): value
    for value in ("agent_no_generation", "environment_server_failed", "protocol_violation")
}
SPEC = SEED | LATER
STAGES = ("admission", "seed", "agent", "verification", "cleanup")


def test_the_enum_the_constants_and_the_set_are_exactly_the_spec() -> None:
    assert len(SEED) == 22
    assert {kind.name: kind.value for kind in FailureKind} == SPEC
    for name, value in SPEC.items():
        constant = getattr(failure_kinds, name)
        assert (constant, type(constant)) == (value, str)
        assert FailureKind[name] == constant
        assert str(FailureKind[name]) == f"{FailureKind[name]}" == value  # a member prints as its value
    assert type(failure_kinds.FAILURE_KINDS) is frozenset
    assert set(SPEC.values()) == failure_kinds.FAILURE_KINDS
    assert all(type(value) is str for value in failure_kinds.FAILURE_KINDS)
    exported = set(failure_kinds.__all__)
    assert set(SPEC) | {"FAILURE_KINDS", "declare_namespace", "Stage", "FailureStage"} <= exported
    assert all(hasattr(failure_kinds, name) for name in failure_kinds.__all__)


@pytest.mark.parametrize("described", [*FailureKind, *STAGES], ids=str)
def test_every_kind_and_stage_has_one_distinct_line_saying_what_it_means(described: str) -> None:
    owner = FailureKind if isinstance(described, FailureKind) else failure_kinds.Stage
    description = owner(described).description
    assert description.strip() == description
    assert "\n" not in description
    assert description.endswith(".")
    assert 20 <= len(description) <= 200
    assert [member.description for member in owner].count(description) == 1


def test_the_names_follow_the_upstream_conventions() -> None:
    names = failure_kinds.FAILURE_KINDS
    assert all(failure_kinds._NAME_PATTERN.fullmatch(name) for name in names)
    # No two names differ only by case or separators.
    assert len({name.lower().replace("_", "") for name in names}) == len(names)
    # Few names, each short and without spaces: a safe metric label; free text belongs in failure_reason.
    assert len(names) < 64
    assert all(len(name) < 40 and " " not in name for name in names)
    assert failure_kinds.is_namespaced("lexmount_browser:quota_exhausted")
    assert not failure_kinds.is_namespaced("my_server:odd_case\n")


def test_the_typing_names_are_built_from_the_enums() -> None:
    # Covers what stubtest cannot check (see stubs/stubtest-allowlist.txt).
    alias = failure_kinds.FailureKindName
    assert typing.get_origin(alias) is typing.Literal
    assert typing.get_args(alias) == tuple(kind.value for kind in FailureKind)
    new_type = failure_kinds.NamespacedFailureKind
    assert isinstance(new_type, typing.NewType)
    assert (new_type.__name__, new_type.__supertype__) == ("NamespacedFailureKind", str)
    assert set(typing.get_args(failure_kinds.AnyFailureKind)) == {alias, new_type}
    stage = failure_kinds.FailureStage
    assert typing.get_origin(stage) is typing.Literal
    assert typing.get_args(stage) == STAGES == tuple(failure_kinds.Stage)
    assert stage is failure_kinds.FailureStage  # built once
    assert [member.name for member in failure_kinds.Stage] == [value.upper() for value in STAGES]
    from failure_kinds import FailureStage, Stage

    assert (FailureStage, Stage) == (stage, failure_kinds.Stage)


def test_every_exception_the_package_raises_on_purpose_derives_from_its_base() -> None:
    ours: dict[str, type] = {}
    for module in pkgutil.walk_packages(failure_kinds.__path__, "failure_kinds."):
        try:
            namespace = vars(importlib.import_module(module.name))
        except ImportError as error:  # an optional extra that is missing: its module defines none
            missing, namespace = error.name or "", {}
        else:
            missing = ""
        assert not missing.startswith("failure_kinds"), module.name
        errors = [
            value for value in namespace.values() if isinstance(value, type) and issubclass(value, Exception)
        ]
        ours |= {f"{error.__module__}.{error.__qualname__}": error for error in errors}
    ours = {name: error for name, error in ours.items() if name.startswith("failure_kinds.")}
    assert {"failure_kinds.FailureKindsError", "failure_kinds.config.ConfigError"} <= ours.keys()  # walked
    strays = {name for name, error in ours.items() if not issubclass(error, FailureKindsError)}
    assert strays == set()  # those raised and caught inside the package too
    from failure_kinds.config import ConfigError

    assert issubclass(ConfigError, ValueError)  # as it was before the base was added


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
        *("transport", "agent", "environment", "judge", "verifier", "provider", "session", "lifecycle"),
        *("persistence", "cohort"),
    ]
    assert domains["lifecycle"] == ["cancelled", "kill_shaped", "shutdown"]
    # protocol_violation is the one name without its domain's prefix, as upstream groups it.
    assert domains["environment"] == ["environment_server_failed", "protocol_violation"]
    prefixed = {domain: values for domain, values in domains.items() if domain != "lifecycle"}
    prefixed["environment"] = ["environment_server_failed"]
    assert all(value.startswith(f"{domain}_") for domain, values in prefixed.items() for value in values)


def test_each_kind_records_its_first_release_and_none_is_deprecated_today() -> None:
    releases = {**dict.fromkeys(SEED, "0.1.0"), **dict.fromkeys(LATER, "0.3.0")}
    assert {kind.name: kind.since for kind in FailureKind} == releases
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
                assert failure_kinds.validate_failure_kind(kind) is kind
            failure_kinds.validate_failure_kind("session_expired")
        assert warnings_of(caplog) == ["deprecated failure kind 'session_lost'; use 'session_expired'"]
    caplog.clear()
    # Registered as before afterwards: silent again, and not deprecated.
    assert FailureKind.SESSION_LOST.replaced_by is None
    with caplog.at_level(logging.WARNING):
        failure_kinds.validate_failure_kind("session_lost")
    assert warnings_of(caplog) == []
