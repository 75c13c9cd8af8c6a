"""Code holding a FailureKind member passes `member.value` wherever a kind is expected, in every checker."""

from dataclasses import dataclass
from typing import Literal, TypedDict, assert_type

import failure_kinds as fk
from failure_kinds import AnyFailureKind, FailureKind, FailureKindName


@dataclass
class Failure:
    kind: FailureKindName
    extension: AnyFailureKind | None = None


class FailureRow(TypedDict):
    failure_kind: FailureKindName


def record(kind: FailureKind) -> Failure:
    # An unknown member's value is one of the 22 names.
    assert_type(kind.value, FailureKindName)
    return Failure(kind=kind.value, extension=kind.value)


def to_row(kind: FailureKind) -> FailureRow:
    return {"failure_kind": kind.value}


def to_name(kind: FailureKind) -> FailureKindName:
    return kind.value


def to_any(kind: FailureKind) -> AnyFailureKind:
    return kind.value


# A known member's value is its own literal.
assert_type(FailureKind.CANCELLED.value, Literal["cancelled"])
assert_type(fk.FailureKind.JUDGE_FAILED.value, Literal["judge_failed"])
cancelled = Failure(kind=FailureKind.CANCELLED.value, extension=FailureKind.SHUTDOWN.value)
row: FailureRow = {"failure_kind": FailureKind.SESSION_LOST.value}
every_name: list[FailureKindName] = [kind.value for kind in FailureKind]
by_name: dict[FailureKindName, str] = {kind.value: kind.description for kind in FailureKind}


def is_cancelled(kind: FailureKind) -> bool:
    return kind == FailureKind.CANCELLED


def is_cancelled_value(kind: FailureKind) -> bool:
    return kind.value == "cancelled"
