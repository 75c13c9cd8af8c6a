"""Misspelled stages: every checker rejects them, as it rejects a misspelled kind."""

from dataclasses import dataclass

from failure_kinds import FailureStage, Stage


@dataclass(frozen=True)
class EpisodeFailure:
    failure_kind: str | None = None
    stage: FailureStage | None = None


EpisodeFailure(failure_kind="agent_no_generation", stage="agent")
EpisodeFailure(failure_kind="agent_run_error", stage="agnet")  # expect-error
EpisodeFailure(stage="Agent")  # expect-error
EpisodeFailure(stage="verify")  # expect-error


def record(stage: FailureStage) -> None: ...


record("cleanup")
record("clean_up")  # expect-error
record("")  # expect-error

misspelled = Stage.ADMISION  # expect-error
