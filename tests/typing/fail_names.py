"""Misspelled constants and members."""

import failure_kinds as fk
from failure_kinds import FailureKind

timeout: str = fk.TRANSPORT_TIMOUT  # expect-error
member: FailureKind = FailureKind.TRANSPORT_TIMEOUT
misspelled_member: FailureKind = FailureKind.VERIFIER_EROR  # expect-error
from_module = fk.FailureKind.Cancelled  # expect-error
