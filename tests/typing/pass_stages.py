"""The stage as upstream producers write it: a plain string in a field typed FailureStage."""

from dataclasses import dataclass

import failure_kinds as fk
from failure_kinds import FailureKindName, FailureStage, Stage


@dataclass(frozen=True)
class EpisodeFailure:
    failure_kind: str | None = None
    stage: FailureStage | None = None


EpisodeFailure(failure_kind="agent_no_generation", stage="agent")
EpisodeFailure(failure_kind=fk.PROTOCOL_VIOLATION, stage="verification")
EpisodeFailure(failure_kind=fk.TRANSPORT_TIMEOUT)  # only the collector saw it: no stage
EpisodeFailure(stage="admission")
EpisodeFailure(stage=Stage.CLEANUP.value)  # a member where a name is annotated: its value


def record(stage: FailureStage) -> str:
    return stage


record("seed")
record(Stage.SEED.value)


def where(stage: Stage) -> str:
    return stage.description


where(Stage.AGENT)

newer: FailureKindName = "environment_server_failed"
first_seen: str = fk.FailureKind.AGENT_NO_GENERATION.since
replacement: fk.FailureKind | None = fk.FailureKind.CANCELLED.replaced_by
