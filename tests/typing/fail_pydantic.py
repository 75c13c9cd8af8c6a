"""FailureKindField rejects misspelled kinds and raw namespaced strings, where the checker reads the field as
its annotation. pyrefly and ty model pydantic's lax mode, which accepts any str for it."""

from pydantic import BaseModel

from failure_kinds.pydantic import FailureKindField


class RolloutFailure(BaseModel):
    failure_kind: FailureKindField
    previous_kind: FailureKindField | None = None


RolloutFailure(failure_kind="judge_failed")
RolloutFailure(failure_kind="judge_faild")  # expect-error: mypy pyright basedpyright
RolloutFailure(failure_kind="my_env:quota")  # expect-error: mypy pyright basedpyright
RolloutFailure(failure_kind="cancelled", previous_kind="Cancelled")  # expect-error: mypy pyright basedpyright
