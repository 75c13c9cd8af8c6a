"""Code a producer writes every day, at a boundary, with enum members, stages and pydantic models: all of
it must type-check cleanly in every checker."""

from dataclasses import dataclass
from typing import Literal, TypedDict, assert_type

from pydantic import BaseModel

import failure_kinds as fk
from failure_kinds import AnyFailureKind, FailureKind, FailureKindName, FailureStage, NamespacedFailureKind
from failure_kinds.pydantic import FailureKindField


def record_failure(kind: FailureKindName, reason: str) -> dict[str, str]:
    return {"failure_kind": kind, "failure_reason": reason}


def record_any_failure(kind: AnyFailureKind) -> str:
    return kind


record_failure(fk.TRANSPORT_TIMEOUT, "no response in 30 s")
record_failure("judge_unparseable", "verdict was not JSON")
record_failure(fk.COHORT_INCOMPLETE, "sibling rollout 3 failed")
record_any_failure(fk.SESSION_LOST)
record_any_failure("provider_oom_killed")
record_any_failure(fk.namespaced("my_env", "quota"))


@dataclass(frozen=True)
class Failure:
    kind: FailureKindName
    reason: str = ""
    extension: AnyFailureKind | None = None


Failure(kind="verifier_error", reason="checker crashed")
Failure(kind=fk.AGENT_TIMEOUT, reason="600 s", extension=fk.namespaced("browser", "tab_crashed"))


class FailureRow(TypedDict):
    failure_kind: FailureKindName
    failure_reason: str


row: FailureRow = {"failure_kind": "shutdown", "failure_reason": "SIGTERM"}
other_row: FailureRow = {"failure_kind": fk.KILL_SHAPED, "failure_reason": "exit 137"}
extension: NamespacedFailureKind = fk.namespaced("sandbox", "disk_full")
kinds: frozenset[str] = fk.FAILURE_KINDS
checked: str | None = fk.validate_failure_kind(None)
same_kind: FailureKindName = fk.validate_failure_kind("cancelled")
label: str = fk.metric_label("my_env:quota")
hint: FailureKindName | None = fk.suggest("judge_fail")
description: str = fk.FailureKind.CANCELLED.description


# At a boundary: validation and the predicates take any object and keep the type they were given.
def from_row(row: dict[str, object]) -> object:
    # Whatever arrived, checked once and passed on unchanged.
    return fk.validate_failure_kind(row.get("failure_kind"))


def from_decoded(value: object) -> object:
    assert_type(fk.validate_failure_kind(value), object)
    return fk.validate_failure_kind(value)


def passed_on(kind: FailureKindName) -> FailureKindName:
    return fk.validate_failure_kind(kind)


def passed_on_any(kind: AnyFailureKind | None) -> AnyFailureKind | None:
    return fk.validate_failure_kind(kind)


def from_text(text: str) -> str:
    assert_type(fk.validate_failure_kind(text), str)
    return fk.validate_failure_kind(text)


def narrowed(row: dict[str, object]) -> AnyFailureKind | None:
    value = row.get("failure_kind")
    if fk.is_registered(value):
        assert_type(value, FailureKindName)
        return value
    if fk.is_namespaced(value):
        return value
    return None


def labelled(row: dict[str, object]) -> str:
    return fk.metric_label(row.get("failure_kind"))


# Narrowing an incoming string with the predicates.
def to_registered(raw: str) -> FailureKindName | None:
    if fk.is_registered(raw):
        assert_type(raw, FailureKindName)
        return raw
    return None


def to_any(raw: str) -> AnyFailureKind | None:
    if fk.is_registered(raw):
        return raw
    if fk.is_namespaced(raw):
        assert_type(raw, NamespacedFailureKind)
        return raw
    return None


def from_untyped(raw: object) -> FailureKindName | None:
    return raw if fk.is_registered(raw) else None


nothing: None = fk.validate_failure_kind(None)
record: dict[str, str] = {"failure_kind": fk.validate_failure_kind(fk.CANCELLED)}
labels = [fk.metric_label(value) for value in (None, 3, b"cancelled", "my_env:quota")]
fk.declare_namespace("my_env", ["quota_hit", "sandbox_lost"])
fk.declare_namespace("web_env", ("page_load_failed",))


# Code holding a FailureKind member passes `member.value` wherever a kind is expected.
def from_member(kind: FailureKind) -> Failure:
    # An unknown member's value is one of the names.
    assert_type(kind.value, FailureKindName)
    return Failure(kind=kind.value, extension=kind.value)


def member_row(kind: FailureKind) -> FailureRow:
    return {"failure_kind": kind.value, "failure_reason": ""}


def member_name(kind: FailureKind) -> FailureKindName:
    return kind.value


def member_any(kind: FailureKind) -> AnyFailureKind:
    return kind.value


# A known member's value is its own literal.
assert_type(FailureKind.CANCELLED.value, Literal["cancelled"])
assert_type(fk.FailureKind.JUDGE_FAILED.value, Literal["judge_failed"])
cancelled = Failure(kind=FailureKind.CANCELLED.value, extension=FailureKind.SHUTDOWN.value)
member_value_row: FailureRow = {"failure_kind": FailureKind.SESSION_LOST.value, "failure_reason": ""}
every_name: list[FailureKindName] = [kind.value for kind in FailureKind]
by_name: dict[FailureKindName, str] = {kind.value: kind.description for kind in FailureKind}


def is_cancelled(kind: FailureKind) -> bool:
    return kind == FailureKind.CANCELLED


def is_cancelled_value(kind: FailureKind) -> bool:
    return kind.value == "cancelled"


# The stage as upstream producers write it: a plain string in a field typed FailureStage.
@dataclass(frozen=True)
class EpisodeFailure:
    failure_kind: str | None = None
    stage: FailureStage | None = None


EpisodeFailure(failure_kind="agent_no_generation", stage="agent")
EpisodeFailure(failure_kind=fk.PROTOCOL_VIOLATION, stage="verification")
EpisodeFailure(failure_kind=fk.TRANSPORT_TIMEOUT)  # only the collector saw it: no stage
EpisodeFailure(stage="admission")
EpisodeFailure(stage=fk.Stage.CLEANUP.value)  # a member where a name is annotated: its value


def record_stage(stage: FailureStage) -> str:
    return stage


record_stage("seed")
record_stage(fk.Stage.SEED.value)


def where(stage: fk.Stage) -> str:
    return stage.description


where(fk.Stage.AGENT)
newer: FailureKindName = "environment_server_failed"
first_seen: str = fk.FailureKind.AGENT_NO_GENERATION.since
replacement: fk.FailureKind | None = fk.FailureKind.CANCELLED.replaced_by


# FailureKindField in a pydantic model: registered literals, constants and namespaced() are accepted.
class RolloutFailure(BaseModel):
    failure_kind: FailureKindField
    failure_reason: str = ""
    previous_kind: FailureKindField | None = None


RolloutFailure(failure_kind="transport_timeout")
RolloutFailure(failure_kind=fk.SESSION_LOST, failure_reason="host went away")
RolloutFailure(failure_kind=fk.namespaced("my_env", "quota"), previous_kind=fk.CANCELLED)
RolloutFailure(failure_kind="cancelled", previous_kind=None)
