"""Misspelled kinds: every line marked expect-error must be reported."""

from dataclasses import dataclass
from typing import TypedDict

from failure_kinds import FailureKindName


def record_failure(kind: FailureKindName) -> None: ...


record_failure("cancelled")
record_failure("transport_timout")  # expect-error
record_failure("Transport_Timeout")  # expect-error
record_failure("CANCELLED")  # expect-error
record_failure("judge_failed\n")  # expect-error
record_failure("")  # expect-error


@dataclass
class Failure:
    kind: FailureKindName


Failure(kind="verifier_error")
Failure(kind="verifer_error")  # expect-error


class FailureRow(TypedDict):
    failure_kind: FailureKindName


good_row: FailureRow = {"failure_kind": "session_lost"}
bad_row: FailureRow = {"failure_kind": "sesion_lost"}  # expect-error
