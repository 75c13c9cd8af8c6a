"""FailureKindField rejects misspelled kinds and raw namespaced strings."""

from pydantic import BaseModel

from failure_kinds.pydantic import FailureKindField


class RolloutFailure(BaseModel):
    failure_kind: FailureKindField
    previous_kind: FailureKindField | None = None


RolloutFailure(failure_kind="judge_failed")
RolloutFailure(failure_kind="judge_faild")  # expect-error
RolloutFailure(failure_kind="my_env:quota")  # expect-error
RolloutFailure(failure_kind="cancelled", previous_kind="Cancelled")  # expect-error
