"""A constant through an unannotated local, a conditional, an `or` default, a `TypedDict` value, a loop
over a tuple and a return: each keeps its literal in every checker. With a bare `Final = "..."` in the stub,
mypy widened each to str, except the loop over a tuple written in the `for` itself."""

from dataclasses import dataclass
from typing import Literal, TypedDict, assert_type

import failure_kinds as fk
from failure_kinds import AnyFailureKind, FailureKindName


@dataclass(frozen=True)
class RolloutFailure:
    failure_kind: FailureKindName
    previous_kind: FailureKindName | None = None
    extension: AnyFailureKind | None = None


class FailureRow(TypedDict):
    failure_kind: FailureKindName
    failure_reason: str


def record(kind: FailureKindName) -> None: ...


def record_any(kind: AnyFailureKind) -> None: ...


kind = fk.VERIFIER_ERROR
assert_type(kind, Literal["verifier_error"])
RolloutFailure(failure_kind=kind, extension=kind)


def on_exit(crashed: bool) -> RolloutFailure:
    previous = fk.VERIFIER_ERROR if crashed else None
    return RolloutFailure(failure_kind=fk.CANCELLED, previous_kind=previous, extension=previous)


def either(crashed: bool) -> AnyFailureKind:
    chosen = fk.VERIFIER_ERROR if crashed else fk.CANCELLED
    return chosen


def defaulted(override: FailureKindName | None) -> RolloutFailure:
    fallback = fk.VERIFIER_ERROR
    chosen = override or fallback
    return RolloutFailure(failure_kind=chosen)


def defaulted_any(override: AnyFailureKind | None) -> AnyFailureKind:
    fallback = fk.VERIFIER_ERROR
    chosen = override or fallback
    return chosen


def as_row(reason: str) -> FailureRow:
    judged = fk.JUDGE_FAILED
    row: FailureRow = {"failure_kind": judged, "failure_reason": reason}
    built = FailureRow(failure_kind=judged, failure_reason=reason)
    return row if reason else built


TRANSPORT = (fk.TRANSPORT_TIMEOUT, fk.TRANSPORT_PEER_DROP)
for transport in TRANSPORT:
    record(transport)
    record_any(transport)
for lifecycle in (fk.CANCELLED, fk.SHUTDOWN):
    record(lifecycle)


def picked() -> FailureKindName:
    lost = fk.SESSION_LOST
    return lost


def picked_any() -> AnyFailureKind:
    lost = fk.SESSION_LOST
    return lost


# One local given two kinds: annotated, it type-checks in every checker (see fail_unannotated.py).
def reassigned(crashed: bool) -> FailureKindName:
    outcome: FailureKindName = fk.CANCELLED
    if crashed:
        outcome = fk.VERIFIER_ERROR
    return outcome


LIFECYCLE: list[FailureKindName] = [fk.CANCELLED, fk.SHUTDOWN]
for listed in LIFECYCLE:
    record(listed)
