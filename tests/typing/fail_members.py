"""An enum member is a FailureKind, not a FailureKindName: where a name is expected, pass `.value`."""

from dataclasses import dataclass

from failure_kinds import AnyFailureKind, FailureKind, FailureKindName


@dataclass
class Failure:
    kind: FailureKindName
    extension: AnyFailureKind | None = None


Failure(kind=FailureKind.CANCELLED)  # expect-error
Failure(kind=FailureKind.CANCELLED.value, extension=FailureKind.SHUTDOWN)  # expect-error
