"""Code a producer writes every day: all of it must type-check cleanly."""

from dataclasses import dataclass
from typing import TypedDict

import failure_kinds as fk
from failure_kinds import AnyFailureKind, FailureKindName, NamespacedFailureKind, namespaced


def record_failure(kind: FailureKindName, reason: str) -> dict[str, str]:
    return {"failure_kind": kind, "failure_reason": reason}


def record_any_failure(kind: AnyFailureKind) -> str:
    return kind


record_failure(fk.TRANSPORT_TIMEOUT, "no response in 30 s")
record_failure("judge_unparseable", "verdict was not JSON")
record_failure(fk.COHORT_INCOMPLETE, "sibling rollout 3 failed")
record_any_failure(fk.SESSION_LOST)
record_any_failure("provider_oom_killed")
record_any_failure(namespaced("my_env", "quota"))


@dataclass(frozen=True)
class Failure:
    kind: FailureKindName
    reason: str
    extension: AnyFailureKind | None = None


Failure(kind="verifier_error", reason="checker crashed")
Failure(kind=fk.AGENT_TIMEOUT, reason="600 s", extension=namespaced("browser", "tab_crashed"))


class FailureRow(TypedDict):
    failure_kind: FailureKindName
    failure_reason: str


row: FailureRow = {"failure_kind": "shutdown", "failure_reason": "SIGTERM"}
other_row: FailureRow = {"failure_kind": fk.KILL_SHAPED, "failure_reason": "exit 137"}

extension: NamespacedFailureKind = namespaced("sandbox", "disk_full")
kinds: frozenset[str] = fk.FAILURE_KINDS
checked: str | None = fk.validate_failure_kind(None)
same_kind: FailureKindName = fk.validate_failure_kind("cancelled")
label: str = fk.metric_label("my_env:quota")
hint: FailureKindName | None = fk.suggest("judge_fail")
description: str = fk.FailureKind.CANCELLED.description
