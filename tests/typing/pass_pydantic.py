"""FailureKindField in a pydantic model: registered literals, constants and namespaced() are accepted."""

from pydantic import BaseModel

import failure_kinds as fk
from failure_kinds import namespaced
from failure_kinds.pydantic import FailureKindField


class RolloutFailure(BaseModel):
    failure_kind: FailureKindField
    failure_reason: str = ""
    previous_kind: FailureKindField | None = None


RolloutFailure(failure_kind="transport_timeout")
RolloutFailure(failure_kind=fk.SESSION_LOST, failure_reason="host went away")
RolloutFailure(failure_kind=namespaced("my_env", "quota"), previous_kind=fk.CANCELLED)
RolloutFailure(failure_kind="cancelled", previous_kind=None)
