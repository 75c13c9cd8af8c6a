"""A mistake carried through an unannotated local, a conditional, an `or` default, a loop or a return is
still reported where the value is used."""

from dataclasses import dataclass
from typing import TypedDict

import failure_kinds as fk
from failure_kinds import AnyFailureKind, FailureKindName


@dataclass(frozen=True)
class RolloutFailure:
    failure_kind: FailureKindName
    previous_kind: FailureKindName | None = None


class FailureRow(TypedDict):
    failure_kind: FailureKindName


def record(kind: FailureKindName) -> None: ...


def record_any(kind: AnyFailureKind) -> None: ...


misspelled = fk.VERIFIER_EROR  # expect-error


def on_exit(crashed: bool) -> RolloutFailure:
    previous = "verifer_error" if crashed else None
    return RolloutFailure(failure_kind=fk.CANCELLED, previous_kind=previous)  # expect-error


def defaulted(override: FailureKindName | None) -> FailureKindName:
    chosen = override or "verifer_error"
    return chosen  # expect-error


judged = "judge_faild"
row: FailureRow = {"failure_kind": judged}  # expect-error
for lifecycle in (fk.CANCELLED, "shutdwon"):
    record(lifecycle)  # expect-error


def picked() -> FailureKindName:
    lost = "sesion_lost"
    return lost  # expect-error


label = fk.OTHER_LABEL
record(label)  # expect-error
member = fk.FailureKind.CANCELLED
record(member)  # expect-error
raw = "my_env:quota"
record_any(raw)  # expect-error
